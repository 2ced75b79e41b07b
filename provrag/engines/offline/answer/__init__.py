"""The offline engine's answers: extractive, cited, short — no model writes anything.

An answer is the few sentences of the selected context that best answer the question, best
first, each followed by the citation of the record it came from. One module per step:

  scoring     every sentence of the context scored against the question (Scorer, rank_sentences)
  selection   the best distinct sentences, re-ordered by MiniLM when configured (select)
  compose     the local/basic answer text: sentences with their citations (answer, compose)
  mapreduce   global search: points from community reports, and the reduced answer
  wording     cleaning and comparing sentences; the no-answer text

OfflineEngine (provrag/engines/offline/__init__.py) calls `compose.answer`,
`mapreduce.map_points` and `mapreduce.reduce_answer`; nothing else calls these modules.
"""
