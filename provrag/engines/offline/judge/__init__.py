"""The offline claim judge: does this piece of evidence support, contradict, or not bear on a claim?

No NLI model can be had offline here (RESEARCH.md: no trustworthy NLI weights in the registries);
provrag trains its own small one (the reader's claim head, `make train`), and the judge is an
explicit decision procedure over features that fact-checking work shows to matter, that head's
reading among them, computed between the claim and a span of ONE evidence text at a time
(MiniCheck/AlignScore style: never one joined premise, so every verdict keeps its page):

1. spans — the evidence is cut into sentences (pysbd, plus seams where paragraphs were glued
   together without a space) and every window of 1..`max_window` consecutive sentences is a
   candidate span; a leading Markdown heading is context for every span (a page's subject is
   often only in its title).
2. coverage — share of the claim's content words (stemmed, Snowball) found in the span, weighted
   towards names and rare words; names (capitalised tokens) and the claim's *focus* (for a
   question-derived claim: the answer's own words) are also measured alone, in the span and in
   the whole evidence text (multi-hop facts sit in two sentences of one unit).
   A file-system path ("/var/tmp") is one word and a name, never "/tmp" with a word missing.
3. agreement — numbers, years and dates of the claim must be stated in the span; a claim number
   missing from a span that states other numbers is a contradiction signal ("renamed in 1912"
   against "renamed … in 1913"), and so is a claim name missing from a span that otherwise matches.
   Comparatives ("more than 3,000", "under 80 characters") are checked against the span's numbers
   of the same thing (the claim's unit right after them), not matched literally.
4. polarity — negation cues ("not", "never", "no longer", "failed to", …) counted on both sides,
   and antonym pairs (a small hand list, see ANTONYMS) where the claim's word is missing from the
   span but its opposite is there. An affirmative claim's polarity is read in the sentence of a
   two-sentence span that states most of it, not in its neighbour; a negated claim is matched
   only by a negation of the words it negates.
5. roles — the claim's named subject must be the doer of its deed in the span: "the S language
   which was developed at Bell Laboratories" does not support "R was created at Bell Laboratories"
   (roles.py).
6. swaps — the sentence that says the rest of the claim (all of it but at most one word, once
   the swapped words are put back) with another name, command or number where the claim has
   its own, between the same neighbouring words ("LaTeX's \\cline command" for "LaTeX's \\hline
   command", "version 0.14f or later" for "version 1.20 or later"), even where the claim's own
   word stands elsewhere in the text (slots.py).
6b. turned — the sentence that says the rest of the claim with one of its words turned into its
   opposite (the hand list's antonyms and WordNet 3.0's, a table shipped in the package:
   "comes out above" for "below", "disabled" for "enabled") or two of its terms the other way
   round around the same relation ("transparent to opaque" for "opaque to transparent"), under
   the swap's conditions (opposites.py); a swap found this way counts as a swap (6).
7. similarity — character n-gram cosine between claim and span (robust to inflection and
   transliteration), and the longest common subsequence of content words (word order: who did
   what to whom).

8. the claim head — the learned reader's reading (provrag/learned) of the span that shares most of
   the claim's words: its logits of supported and contradicted, two more features (head.py).
The features are combined linearly (logistic) into a support score and a contradiction score;
weights and thresholds are fitted on ../shared/eval/dev only (bench/fit_judge.py) and live in
config.toml [verify], so a user can read and change them. Decision for one span:
- vetoes first (decide.VETOES): a negation that scopes over the claim's words on one side only,
  an antonym, a claim number the text never states where the span states another, or the deed
  given to another subject, a swapped name or number (6) → never *supported*;
- *supported* when the support score is at or above `support_threshold`;
- *contradicted* when a swap (6) is found in a sentence that says at least
  `contradict_min_coverage` of the claim with its own words put back;
- else *contradicted* when the span covers at least `contradict_min_coverage` of the claim and
  a veto fired — a claim's negation only where the span states the negated words (a span silent
  on them is off topic, not of the other polarity; an opposite word only in the sentence that
  says the rest of the claim, as in 6b, never anywhere in the span) — or a claim name is missing
  where the span names others and the contradiction score is at or above `contradict_threshold`
  (never on low overlap alone);
- else *unsupported*.
Across the texts of one claim (decide.outweigh): a text that states the claim turned (6b) or its
words under a negation outweighs a supporting span when it says as much of the claim and the span
does not state the words in question, or when it says more of the claim in the claim's order (a
span that merely holds the claim's words across its sentences) — RefChecker's rule otherwise
lets any loose support win.

Modules, in the order the data flows:
  lexicon     the hand-written word lists (function words, negation cues, antonyms, number
              words) and the judge's stem
  quantities  numbers, dates and their bounds, and whether a claim's quantity is stated
  analysis    a text as the judge reads it (Text, analyse) and its candidate spans
  roles       who did it: the claim's subject against the doer of its deed in the span
  slots       a swapped word: another name or number in the claim's place in its sentence
  opposites   a turned word: an opposite in the claim's word's place, or two terms the other way round
  wordnet     WordNet 3.0's antonyms, a table shipped in the package (train/antonyms.py rebuilds it)
  features    the features of a claim against the best span of one evidence text
  head        the claim head's reading of the span sharing most of the claim's words (both judges)
  decide      the fitted linear scores, the vetoes, the verdict and its reason (`judge`), and
              how the texts of one claim weigh against each other (`outweigh`)
"""
