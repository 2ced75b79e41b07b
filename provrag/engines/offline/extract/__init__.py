"""The offline engine's entity/relationship extractor: statistics instead of an LLM.

What it finds in a batch of text units (GraphRAG's output format, one dict per unit):
- **Names**: runs of Capitalised words with connectors between them ("Bank of England",
  "House of Representatives": of, de, van, von, …); honorifics are stripped and kept as a
  PERSON cue. A capitalised word at a sentence start (or after an opening quote, a dash, a
  colon, a list bullet; every word of a Title Case heading) is ambiguous: it counts only if
  the batch also capitalises it mid-sentence at least as often as it writes it in lower case,
  so "The", "When", "Focus" at sentence starts never become entities. A lone given name or
  surname ("Mercer") is merged into the one person name of the batch it belongs to ("Alex
  Mercer"): a cheap coreference step that keeps one person from becoming three nodes. A
  demonym only ever used before a noun ("British subjects") is an adjective, not a name.
  URLs, e-mail addresses and paths are masked first ("HTTPS" is not an entity).
- **Acronyms**: 2–6 capital letters/digits ("FAQ", "GNU", "LED"), plural "s" stripped,
  Roman numerals excluded.
- **Key phrases**: noun-ish n-grams (≤ 3 words) from runs of lower-case content words, cut at
  stop words and punctuation. No POS tagger ships offline, so a shallow parse with corpus
  cues does the job: a run right after a subject pronoun, "to", a modal or a form of "be"
  starts with a verb or a predicate; one right before a determiner ends with a verb ("monitors
  cast a …"); -ly adverbs, irregular past tenses and a leading gerund are cut; the head (last
  word) must not be used as a verb more than as a noun, nor be an -ed/-ing/adjective-suffixed
  word the batch never puts after a determiner. A phrase is the run's last ≤ 3 words,
  shortened to a nested suffix the batch uses more often ("sterile briefing room" → "briefing
  room", C-value's idea) and merged with its plural. A one-word phrase must be a concrete-ish
  noun: not an abstract nominalisation (-tion, -ness, -ment, …), not a generic word, and seen
  ending a noun phrase or in the plural.
- **Selection**: TF-IDF over the batch × log(1 + the phrase's count in the batch) × a length
  bonus ranks each unit's phrases; the top `keyphrases_per_unit` of every unit form the
  batch's phrase vocabulary, and each unit then reports every vocabulary phrase it contains
  (names first, at most `max_entities_per_unit`), so an entity's text units are complete.
- **Types** (first matching rule wins): PERSON — an honorific before it (Mr, Dr, Agent,
  Captain, …); ORGANIZATION — last word an organisation word (Inc, University, Agency, Squad,
  Department, …); EVENT — first word "Operation"/"Battle"/… or last word an event word (War,
  Conference, Mission, Encounter, …); GEO — last word a place word (City, River, Base, Room,
  Street, …); key phrases stop here as CONCEPT, acronyms as ORGANIZATION when written "the
  XYZ", else CONCEPT; a name next to a speech verb ("…, Cruz said") — PERSON; a name mostly
  after in/at/near/into/from or before a place noun ("the Dulce base") — GEO; a 2–3 word
  name seen twice whose words the batch never writes in lower case (no acronym among them) —
  PERSON; else CONCEPT.
- **Descriptions**: the (first two) sentences mentioning the entity, trimmed.
- **Relationships**: two entities in one sentence, the sentence(s) as description, the weight
  the number of the unit's sentences where they co-occur. In a "sentence" naming more than 8
  entities (a list or table row of PDF text) each is linked to its next 8 in reading order only.

Sentences come from a regex splitter with an abbreviation guard (see `text.sentences`: ~80×
faster than pysbd here, with the same sentence ends on 99 % of a novella's sentences).

The package, in the order the data flows: lexicon (the word lists of the rules above),
text (merge key, sentences, trimming: shared with summaries and community reports), tokens
(words and the batch's corpus cues), mentions (names, phrase runs, entity types), units
(`extract_units`: selection, descriptions, relationships) and summarize (merged descriptions).
"""
