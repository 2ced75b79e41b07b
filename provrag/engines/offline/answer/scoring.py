"""The offline answerer's sentence scoring: every sentence of the context, scored against the
question, best first (a classic extractive-QA ranking, fixed weights, nothing learned).

- match: BM25-style, the idf-weighted question terms the sentence holds (saturating in
  their count, mildly normalised by sentence length); idf is the index-wide one, tempered by
  how common the term is among the candidate sentences (the article's own name, present
  in all of them, tells them apart less than its corpus idf says);
- continuation: a sentence opening with "This", "It", "Most" … also gets part of the
  question terms of the sentence before it, which it continues;
- order: question word pairs that appear as adjacent terms in the sentence, and question
  bigrams (function words included) copied verbatim;
- paragraph: the question terms the sentence's paragraph holds (found in PDF text by the
  reflow rule, `sentences.paragraph_spans`): a question is asked of a passage, and of two
  sentences that match it alike, the one whose paragraph holds the rest of it answers;
- answer type: a "when / what year" question prefers a sentence with a date or year,
  "how many / how much" one with a number, "who / where" one with a name the question
  does not already hold — the answer is the part of the sentence the question lacks
  (provrag/text/questions.py reads the type from the question);
- the record's prior relevance (its retrieval score) breaks ties between similar sentences.
Sentences are whole even where the chunker cut them: one opening a unit mid-sentence takes
its first words from the previous unit (`previous`), one closing it at a page break its last
words from the next (`continuation`), and then cites both units.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

from provrag.engines.offline.answer.wording import clean
from provrag.text.definitions import entries_of, names_term, term_at
from provrag.text.questions import answer_type
from provrag.text.sentences import FURNITURE, TERMINAL, is_heading, paragraph_spans, split_sentences
from provrag.text.tables import rows_of
from provrag.text.words import terms_of

# a sentence opening with a pronoun or demonstrative refers to the sentence before it; an
# existential "there is/are …" refers to nothing ("There are three quoting mechanisms: …" in the
# Bash manual was shown under the sentence before it, a pointer to the history chapter)
_ANAPHOR = re.compile(r"^(?:[A-Z][a-z]+,\s+)?(?:this|that|these|those|it|its|they|their|them|he|his|she|her|such|"
                      r"there(?!\s+(?:is|are|was|were|exists?|existed|seems?|appears?|remains?|will|would|may|might"
                      r"|can|could|must|should|has|have|had|isn['’]t|aren['’]t|wasn['’]t|weren['’]t)\b)"
                      r"|both|most|many|some|each|the latter|the former|the same)\b"
                      # … unless a pronoun in it does: "There are several ways to achieve this, …"
                      r"|^there\s+(?:is|are|was|were)\b.*\b(?:this|these|those|it|its|them|such)\b", re.I)
_RAW = re.compile(r"[^\W_]+")

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})s?\b|\b[0-9]{1,2}(st|nd|rd|th)? century\b", re.I)
_MONTH = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December)\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
                     r"thirty|forty|fifty|hundred|thousand|million|billion|dozen|half)\b", re.I)
_UNITS = (r"characters?|chars|bytes?|[kmg]b|bits?|lines?|words?|pages?|columns?|digits?|letters?|"
          r"(?:milli|centi|kilo)?(?:met(?:er|re)s?)|[kcm]?m|miles?|feet|foot|ft|inch(?:es)?|yards?|"
          r"(?:square|cubic) \w+|acres?|hectares?|tons?|tonnes?|(?:kilo)?grams?|kg|g|pounds?|lbs?|litres?|liters?|"
          r"years?|months?|weeks?|days?|hours?|minutes?|seconds?|ms|decades?|centuries|century|"
          r"percent|per cent|%|degrees?|storeys?|stories|floors?")
_MEASURE = re.compile(r"(?:\b\d[\d,.]*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                      r"twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen|half|several|a few))"
                      r"[\s-]+(?:\w+[\s-]+)?(?:" + _UNITS + r")\b", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+")


HEADING_FACTOR = 0.5   # score kept by a heading or title line (it names a topic, it states nothing)
TYPE_MISS_FACTOR = 0.7  # score kept by a sentence without a number or date when the question asks for one
QUANTITY_KINDS = ("number", "measure", "date")
OTHER_ENTRY_FACTOR = 0.7  # score kept by a sentence of another definition than the one the question names
FRAGMENT_FACTOR = 0.7  # score kept by a sentence that opens mid-sentence at a unit's start and cannot be completed


def _completion(text: str, spans: list[tuple[int, int]], continuation: str | None) -> str | None:
    """The words that finish the record's last sentence, taken from the next unit's text,
    when that sentence stops without terminal punctuation (a unit closed at a page break)."""
    if not continuation or not spans:
        return None
    s, e = spans[-1]
    last = FURNITURE.sub(" ", text[s:e]).rstrip()
    if not last or TERMINAL.search(last) or e < len(text.rstrip()):
        return None
    nspans = split_sentences(continuation)
    if not nspans:
        return None
    if len(last.split()) < 4:
        return None  # a heading or a fragment, not a sentence cut by a page break
    a, b = nspans[0]
    return continuation[a:b]


def _lead(text: str, spans: list[tuple[int, int]], previous: str | None) -> str | None:
    """The words that open the record's first sentence, taken from the previous unit's text,
    when the record starts inside a sentence (units are cut by tokens, not sentences)."""
    if not previous or not spans:
        return None
    off = len(previous)
    joined = previous + text
    first = off + spans[0][0]
    for a, b in split_sentences(joined):
        if a <= first < b:
            if a >= off:
                return None  # the record opens at a sentence boundary
            lead = joined[a:off]
            return lead if lead.strip() else None
    return None


def _type_match(kind: str | None, sentence: str, question: str) -> float:
    if kind is None:
        return 0.0
    if kind == "date":
        if re.search(r"\b(month|day|date)\b", question, re.I):  # "what month, day and year": a full date beats a year
            return 1.0 if _MONTH.search(sentence) else (0.5 if _YEAR.search(sentence) else 0.0)
        return 1.0 if (_YEAR.search(sentence) or _MONTH.search(sentence)) else 0.0
    if kind == "number":
        return 1.0 if _NUMBER.search(sentence) else 0.0
    if kind == "measure":  # "how long": "under 80 characters", "seven years", not "two parts"
        return 1.0 if _MEASURE.search(sentence) else 0.0
    qwords = {w.lower() for w in re.findall(r"[\w'’-]+", question)}
    names = [m.group(0) for m in _NAME.finditer(sentence) if m.group(0).lower() not in qwords]
    return 1.0 if names else 0.0


class Scorer:
    """Scores sentences against one question (see the module docstring)."""

    # feature weights: fixed by hand, checked on the dev split (figures there are optimistic)
    W_PAIR, W_TYPE, K1, LEN_NORM, LOCAL, W_ANAPHOR, W_NGRAM, W_PARAGRAPH = 0.15, 0.12, 1.2, 0.3, 0.3, 0.3, 0.4, 0.4

    def __init__(self, question: str, idf: dict[str, float] | None = None, corpus: list[list[str]] | None = None,
                 qterms: list[str] | None = None):
        self.question = question
        self.qterms = list(qterms) if qterms else terms_of(question)
        self.qset = set(self.qterms)
        self.kind = answer_type(question)
        corpus = corpus or []
        local = _local_idf(self.qset, corpus)
        if idf is None:
            idf = local
        elif self.LOCAL and local:
            # a term in most of the candidate sentences (the article's own name) tells them apart
            # less than its index-wide idf says: blend in its idf within the candidates
            top = max(local.values()) or 1.0
            idf = {t: idf.get(t, 0.0) * ((local.get(t, 0.0) / top) ** self.LOCAL) for t in self.qset}
        self.idf = {t: max(idf.get(t, 0.0), 0.05) for t in self.qset}
        self.total = sum(self.idf.values()) or 1.0
        self.pairs = {(a, b) for a, b in zip(self.qterms, self.qterms[1:]) if a != b}
        words = _RAW.findall(question.lower())
        self.bigrams = set(zip(words, words[1:]))
        lens = [len(c) for c in corpus if c]
        self.avg_len = (sum(lens) / len(lens)) if lens else 20.0

    def type_factor(self, terms: list[str], text: str) -> float:
        """TYPE_MISS_FACTOR for a sentence without the number, measure or date the question asks
        for ("how long", "how many", "when": a sentence without one states something else), else 1."""
        if self.kind not in QUANTITY_KINDS:
            return 1.0
        novel = set(terms) - self.qset
        return 1.0 if novel and _type_match(self.kind, text, self.question) else TYPE_MISS_FACTOR

    def coverage(self, terms: set[str]) -> float:
        return sum(w for t, w in self.idf.items() if t in terms) / self.total

    def match(self, terms: list[str]) -> float:
        """BM25-like: idf-weighted, saturating in tf, normalised by sentence length; 0..~1."""
        if not terms:
            return 0.0
        tf = Counter(t for t in terms if t in self.qset)
        norm = 1 - self.LEN_NORM + self.LEN_NORM * len(terms) / self.avg_len
        s = sum(self.idf[t] * f * (self.K1 + 1) / (f + self.K1 * norm) for t, f in tf.items())
        return s / ((self.K1 + 1) * self.total)

    def score(self, terms: list[str], paragraph: set[str], text: str, antecedent: set[str] | None = None) -> float:
        """`paragraph`: the terms of the paragraph the sentence stands in. The question's terms
        it covers there count too (W_PARAGRAPH): a question is asked of a passage, and of two
        sentences that match it alike, the one whose paragraph holds the rest of the question
        is the one that answers it (the article's lead sentence that merely names the topic
        again is not)."""
        if not self.qset:
            return 0.0
        tset = set(terms)
        cov = self.match(terms)
        if antecedent:  # "This was …", "Most went …": the sentence continues the one before it
            cov += self.W_ANAPHOR * (self.coverage(tset | antecedent) - self.coverage(tset))
        pair = 0.0
        if self.pairs:
            adj = set(zip(terms, terms[1:]))
            pair = len(self.pairs & adj) / len(self.pairs)
        novel = len(tset - self.qset)
        typ = _type_match(self.kind, text, self.question) if novel else 0.0
        factor = self.type_factor(terms, text)
        s = cov + self.W_PARAGRAPH * self.coverage(tset | paragraph) + self.W_PAIR * pair + self.W_TYPE * typ
        if self.W_NGRAM and self.bigrams:  # phrases copied from the text, function words included
            words = _RAW.findall(text.lower())
            s += self.W_NGRAM * len(self.bigrams & set(zip(words, words[1:]))) / len(self.bigrams)
        if novel == 0:  # a sentence that only repeats the question answers nothing
            s *= 0.5
        return s * factor


SOFT_MIN, SOFT_EXTRA = 5, 3   # prefix matching: the shorter stem has >= 5 letters, the longer adds <= 3


def _unify(terms: list[str], qset: set[str], memo: dict[str, str]) -> list[str]:
    """Sentence terms with near-forms of a question term read as that term: a stem that is a
    prefix of the other, a few letters apart ("german" / "germani", "percent" / "percentag",
    "kenya" / "kenyan"). Snowball leaves such adjective/noun and country/demonym pairs apart,
    and the sentence that answers a question about "German students" speaks of "Germany"."""
    out = []
    for u in terms:
        if u not in memo:
            memo[u] = u
            if u not in qset:
                for t in qset:
                    a, b = (u, t) if len(u) <= len(t) else (t, u)
                    if len(a) >= SOFT_MIN and len(b) - len(a) <= SOFT_EXTRA and b.startswith(a) and not a.isdigit():
                        memo[u] = t
                        break
        out.append(memo[u])
    return out


def _local_idf(qset: set[str], docs: list[list[str]]) -> dict[str, float]:
    """idf of the question terms within the given sentences (when no corpus idf is passed)."""
    n = len(docs)
    df = Counter()
    for d in docs:
        for t in set(d) & qset:
            df[t] += 1
    return {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in qset}


PARSED_RECORDS = 512   # records whose parse a process keeps (a few MB): an ask's attempts, a server's recent questions


@lru_cache(maxsize=PARSED_RECORDS)
def parsed_record(text: str, previous: str, continuation: str) -> tuple:
    """What rank_sentences reads of a record before it knows the question: its sentences
    (start, end, terms), the words that open its first sentence in the previous unit and finish
    its last in the next (or None), and its paragraphs (start, end, terms, text).

    Kept per process because it is the same at each reading: ask's wider attempts read the units
    of the first again, and a server's questions meet the same units. rank_sentences took ~380 ms
    of a ~1.7 s warm ask over TeX Live (cProfile, 24 served questions), mostly here: sentence and
    paragraph splits, each record's first sentence found again in its previous unit's text.
    Tuples, so no caller can change what the next one reads."""
    spans = split_sentences(text)
    # a pipe table's row is read under its header (text/tables.py); nothing runs into or out of it
    whole = set(spans)
    table = {s: (r.reading(), " ".join(r.cells)) for s, r in rows_of(text, previous).items() if (s, r.end) in whole}
    # a sentence of a definition is about its entry's term, though only the first stands next to it
    # (text/definitions.py): it is scored with the term's words
    entries = entries_of(text, previous)
    terms_by_entry = {s: found for s, e in spans if (found := term_at(entries, s, e))}
    rows = [(s, e, tuple(terms_of(table[s][0] if s in table else
                                  (terms_by_entry[s][0] + " " if s in terms_by_entry and not terms_by_entry[s][1]
                                   else "") + text[s:e])))
            for s, e in spans]
    lead = None if spans and spans[0][0] in table else _lead(text, spans, previous)
    if lead:  # the record opens inside a sentence begun in the previous unit: score it whole
        s0, e0, _ = rows[0]
        rows[0] = (s0, e0, tuple(terms_of(lead + text[s0:e0])))
    tail = None if spans and spans[-1][0] in table else _completion(text, spans, continuation)
    if tail:  # the record's last sentence runs on into the next unit: score it whole
        s0, e0, _ = rows[-1]
        full = (lead if lead and len(spans) == 1 else "") + text[s0:e0] + " " + tail
        rows[-1] = (s0, e0, tuple(terms_of(full)))
    paragraphs = tuple((a, b, tuple(terms_of(raw)), " ".join(raw.split()))
                       for a, b, raw in _paragraph_cuts(text, previous, continuation))
    return tuple(rows), lead, tail, paragraphs, tuple(table.items()), tuple(terms_by_entry.items())


def _paragraph_cuts(text: str, previous: str, continuation: str) -> list[tuple[int, int, str]]:
    """(start, end, raw text) of the paragraphs of a record, offsets into its text; the
    paragraphs at either end are read whole, through the neighbouring units' text."""
    joined = previous + text + continuation
    return [(a - len(previous), b - len(previous), joined[a:b]) for a, b in paragraph_spans(joined)
            if b > len(previous) and a < len(previous) + len(text)]


def paragraph_texts(record: dict) -> list[str]:
    """The texts of a record's paragraphs as rank_sentences gives them to the reranker (each
    candidate's "paragraph"); index/passages.py embeds them at index time, one unit after another:
    only the paragraphs are cut, and nothing is kept."""
    return [" ".join(raw.split()) for _, _, raw in _paragraph_cuts(record.get("text") or "", record.get("previous") or "",
                                                                  record.get("continuation") or "")]


def rank_sentences(question: str, records: list[dict], idf: dict[str, float] | None = None,
                   prior_weight: float = 0.3, qterms: list[str] | None = None) -> list[dict]:
    """Every sentence of every record, scored, best first.

    records: {"text", "citation"?, "score"? (prior relevance), ...}; returns dicts with
    record (index), start, end, sentence (cleaned), score.
    """
    split, tails, leads, paragraphs, readings, entries = [], {}, {}, [], [], []
    for ri, r in enumerate(records):
        rows, lead, tail, paras, table, entry_terms = parsed_record(r.get("text") or "", r.get("previous") or "",
                                                                    r.get("continuation") or "")
        split.append(rows)
        readings.append(dict(table))
        entries.append(dict(entry_terms))
        paragraphs.append(paras)
        if lead:
            leads[ri] = lead
        if tail:
            tails[ri] = tail
    qset = set(qterms or terms_of(question))
    soft: dict[str, str] = {}
    split = [[(s, e, _unify(list(t), qset, soft)) for s, e, t in rec] for rec in split]
    paragraphs = [[(a, b, set(_unify(list(t), qset, soft)), words) for a, b, t, words in paras] for paras in paragraphs]
    scorer = Scorer(question, idf, corpus=[t for rec in split for _, _, t in rec], qterms=qterms)
    # the definitions the question names by their term ("… of work_mem?"): another entry's sentence
    # answers for another subject, however many of the question's words it holds
    named_entries = {t for rec in entries for t, _ in rec.values() if names_term(t, qset)}
    priors = [float(r.get("score") or 0.0) for r in records]
    top = max(priors, default=0.0)
    out = []
    for ri, rec in enumerate(split):
        text = records[ri].get("text") or ""
        prior = priors[ri] / top if top > 0 else 0.0
        for si, (s, e, terms) in enumerate(rec):
            para = next((p for p in paragraphs[ri] if p[0] <= s < p[1]), None)
            head = leads.get(ri, "") if si == 0 else ""
            row, cells = readings[ri].get(s) or (None, None)   # a table row, read under its header: its own paragraph
            sent = row or clean(head + text[s:e])
            cont = si == len(rec) - 1 and ri in tails
            if cont:
                sent = clean(head + text[s:e] + " " + tails[ri])
            if len(sent) < 3:
                continue
            ante = set(rec[si - 1][2]) if si > 0 and _ANAPHOR.match(sent) else None
            sc = scorer.score(terms, para[2] if para else set(), sent, ante)
            if si == 0 and not head and sent[:1].islower():
                sc *= FRAGMENT_FACTOR  # opens mid-sentence and nothing before it is known
            if not head and not cont and not row and is_heading(text[s:e]):
                sc *= HEADING_FACTOR
            if named_entries and s in entries[ri] and entries[ri][s][0] not in named_entries:
                sc *= OTHER_ENTRY_FACTOR
            sc += prior_weight * prior
            item = {"record": ri, "sentence_index": si, "start": s, "end": e, "sentence": sent,
                    "score": round(sc, 6), "coverage": round(scorer.coverage(set(terms)), 4),
                    "type_factor": scorer.type_factor(terms, sent),
                    "paragraph": para[3] if para and not row else sent}
            if row:   # its subject is in its cells: every row of the table holds the header's words
                item["table_row"] = cells
            if s in entries[ri]:   # read and shown under the term whose definition it is part of
                term, names_it = entries[ri][s]
                item["entry"], item["plain"] = term, sent
                if not names_it:   # a later sentence of it (the first opens with the term's own line)
                    item["sentence"] = f"{term}: {sent}"
            if ante is not None:  # shown before it in an answer: "This was …" needs what "this" is
                prev_s, prev_e = rec[si - 1][0], rec[si - 1][1]
                item["antecedent"] = clean((leads.get(ri, "") if si == 1 else "") + text[prev_s:prev_e])
            if head and records[ri].get("previous_citation"):
                item["citation"] = records[ri]["previous_citation"]
            if cont and records[ri].get("continuation_citation"):
                item["citation"] = records[ri]["continuation_citation"]
                if head and records[ri].get("previous_citation"):
                    item["citation"] = _merge_citations(records[ri]["previous_citation"],
                                                        records[ri]["continuation_citation"])
            out.append(item)
    out.sort(key=lambda x: (-x["score"], x["record"], x["start"]))
    return out


def _merge_citations(a: str, b: str) -> str:
    """One `[Data: Sources (…)]` block citing the units of both (a sentence that runs from the
    previous unit through this one into the next); `a` when they are not plain Sources blocks."""
    ids = []
    for c in (a, b):
        m = re.fullmatch(r"\[Data: Sources \(([\d, ]+)\)\]", c.strip())
        if not m:
            return a
        ids += [x.strip() for x in m.group(1).split(",") if x.strip() and x.strip() not in ids]
    return f"[Data: Sources ({', '.join(ids)})]"
