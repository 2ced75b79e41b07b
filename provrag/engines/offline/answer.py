"""The offline engine's answers: extractive, cited, short.

No model writes anything here. An answer is the few sentences of the selected context that
best answer the question, best first, each followed by the citation of the record it came
from — the same `[Data: …]` grammar GraphRAG's models produce, so the resolver and verify
treat offline and LLM answers alike.

How a sentence is scored (a classic extractive-QA ranking, fixed weights, nothing learned):
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
  does not already hold — the answer is the part of the sentence the question lacks;
- the record's prior relevance (its retrieval score) breaks ties between similar sentences;
- then (optional, [search] rerank = "minilm", the default) the best few distinct sentences
  are re-ordered with all-MiniLM-L6-v2: its cosine to the question, which sees paraphrase,
  its token-level MaxSim, which matches the question word by word, and the cosine of the
  sentence's paragraph to the question (see `select`).
Sentences are whole even where the chunker cut them: one opening a unit mid-sentence takes
its first words from the previous unit (`previous`), one closing it at a page break its last
words from the next (`continuation`), and then cites both units. A sentence that continues
the one before it ("This was …", "They also …") is shown after that one in the answer.
On the dev split (bench/ask_quality.py) the lexical ranking puts a sentence holding the
gold answer first for ~75 % of questions, the reranker ~78 %, at ~0.4 s per question (p95 0.7 s).

Global search uses the same scorer: map_points turns each report's best sentences into
points scored 0–100 that cite the report; reduce_answer keeps the best points, merges the
report ids of points that say the same thing (≤ 5 ids plus `+more`, as GraphRAG does).
"""
from __future__ import annotations

import math
import re
from collections import Counter

from provrag.config import Config
from provrag.text.words import terms_of
from provrag.text.sentences import _FURNITURE, _TERMINAL, is_heading, paragraph_spans, split_sentences  # noqa: F401 (re-exported)

NO_ANSWER = "I could not find anything in the index that answers this question."

# a sentence opening with a pronoun or demonstrative refers to the sentence before it
_ANAPHOR = re.compile(r"^(?:[A-Z][a-z]+,\s+)?(?:this|that|these|those|it|its|they|their|them|he|his|she|her|such|"
                      r"there|both|most|many|some|each|the latter|the former|the same)\b", re.I)
_CITATION = re.compile(r"\s*\[Data:[^\]]*\]\s*", re.I)
_WS = re.compile(r"\s+")
_RAW = re.compile(r"[^\W_]+")

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})s?\b|\b[0-9]{1,2}(st|nd|rd|th)? century\b", re.I)
_MONTH = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December)\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
                     r"thirty|forty|fifty|hundred|thousand|million|billion|dozen|half)\b", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+")


HEADING_FACTOR = 0.5   # score kept by a heading or title line (it names a topic, it states nothing)
FRAGMENT_FACTOR = 0.7  # score kept by a sentence that opens mid-sentence at a unit's start and cannot be completed



def _completion(text: str, spans: list[tuple[int, int]], continuation: str | None) -> str | None:
    """The words that finish the record's last sentence, taken from the next unit's text,
    when that sentence stops without terminal punctuation (a unit closed at a page break)."""
    if not continuation or not spans:
        return None
    s, e = spans[-1]
    last = _FURNITURE.sub(" ", text[s:e]).rstrip()
    if not last or _TERMINAL.search(last) or e < len(text.rstrip()):
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


def clean(sentence: str) -> str:
    """One line, no page furniture, no existing `[Data: …]` blocks (an answer adds its own)."""
    return _WS.sub(" ", _CITATION.sub(" ", _FURNITURE.sub(" ", sentence))).strip()


def answer_type(question: str) -> str | None:
    q = question.lower().strip()
    if re.match(r"^(when|what (year|month|day|date|time|century|decade|period)|in (what|which) (year|month|century|decade))\b", q) \
            or re.search(r"\b(what|which) (year|month|date|century|decade)\b", q):
        return "date"
    if re.match(r"^how (many|much|long|old|far|large|big|tall|high|often)\b", q) or re.search(
            r"\b(how many|how much|what (percentage|percent|number|amount|fraction|proportion))\b", q):
        return "number"
    if re.match(r"^(who|whom|whose)\b", q) or re.search(r"\b(what|which) (person|man|woman|company|organi[sz]ation|team|group)\b", q):
        return "name"
    if re.match(r"^where\b", q) or re.search(r"\b(what|which) (city|country|place|state|region|river|location)\b", q):
        return "place"
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
        s = cov + self.W_PARAGRAPH * self.coverage(tset | paragraph) + self.W_PAIR * pair + self.W_TYPE * typ
        if self.W_NGRAM and self.bigrams:  # phrases copied from the text, function words included
            words = _RAW.findall(text.lower())
            s += self.W_NGRAM * len(self.bigrams & set(zip(words, words[1:]))) / len(self.bigrams)
        if novel == 0:  # a sentence that only repeats the question answers nothing
            s *= 0.5
        return s


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


def _paragraphs(record: dict, qset: set[str], memo: dict[str, str]) -> list[tuple[int, int, set[str], str]]:
    """(start, end, terms, text) of the paragraphs of a record, offsets into its text; the
    paragraphs at either end are read whole, through the neighbouring units' text."""
    before, text, after = record.get("previous") or "", record.get("text") or "", record.get("continuation") or ""
    full = before + text + after
    out = []
    for a, b in paragraph_spans(full):
        if b > len(before) and a < len(before) + len(text):
            out.append((a - len(before), b - len(before), set(_unify(terms_of(full[a:b]), qset, memo)),
                        " ".join(full[a:b].split())))
    return out


def rank_sentences(question: str, records: list[dict], idf: dict[str, float] | None = None,
                   prior_weight: float = 0.3, qterms: list[str] | None = None) -> list[dict]:
    """Every sentence of every record, scored, best first.

    records: {"text", "citation"?, "score"? (prior relevance), ...}; returns dicts with
    record (index), start, end, sentence (cleaned), score.
    """
    split, tails, leads = [], {}, {}
    for ri, r in enumerate(records):
        text = r.get("text") or ""
        spans = split_sentences(text)
        split.append([(s, e, terms_of(text[s:e])) for s, e in spans])
        lead = _lead(text, spans, r.get("previous"))
        if lead:  # the record opens inside a sentence begun in the previous unit: score it whole
            leads[ri] = lead
            s0, e0, _ = split[ri][0]
            split[ri][0] = (s0, e0, terms_of(lead + text[s0:e0]))
        tail = _completion(text, spans, r.get("continuation"))
        if tail:  # the record's last sentence runs on into the next unit: score it whole
            tails[ri] = tail
            s0, e0, _ = split[ri][-1]
            full = (leads[ri] if ri in leads and len(spans) == 1 else "") + text[s0:e0] + " " + tail
            split[ri][-1] = (s0, e0, terms_of(full))
    qset = set(qterms or terms_of(question))
    soft: dict[str, str] = {}
    split = [[(s, e, _unify(t, qset, soft)) for s, e, t in rec] for rec in split]
    paragraphs = [_paragraphs(r, qset, soft) for r in records]
    scorer = Scorer(question, idf, corpus=[t for rec in split for _, _, t in rec], qterms=qterms)
    priors = [float(r.get("score") or 0.0) for r in records]
    top = max(priors, default=0.0)
    out = []
    for ri, rec in enumerate(split):
        text = records[ri].get("text") or ""
        prior = priors[ri] / top if top > 0 else 0.0
        for si, (s, e, terms) in enumerate(rec):
            para = next((p for p in paragraphs[ri] if p[0] <= s < p[1]), None)
            head = leads.get(ri, "") if si == 0 else ""
            sent = clean(head + text[s:e])
            cont = si == len(rec) - 1 and ri in tails
            if cont:
                sent = clean(head + text[s:e] + " " + tails[ri])
            if len(sent) < 3:
                continue
            ante = set(rec[si - 1][2]) if si > 0 and _ANAPHOR.match(sent) else None
            sc = scorer.score(terms, para[2] if para else set(), sent, ante)
            if si == 0 and not head and sent[:1].islower():
                sc *= FRAGMENT_FACTOR  # opens mid-sentence and nothing before it is known
            if not head and not cont and is_heading(text[s:e]):
                sc *= HEADING_FACTOR
            sc += prior_weight * prior
            item = {"record": ri, "sentence_index": si, "start": s, "end": e, "sentence": sent,
                    "score": round(sc, 6), "coverage": round(scorer.coverage(set(terms)), 4),
                    "paragraph": para[3] if para else sent}
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


def _norm(s: str) -> str:
    return " ".join(re.findall(r"\w+", s.lower()))


def _is_dup(sent: str, kept: list[str]) -> bool:
    from rapidfuzz import fuzz

    n = _norm(sent)
    for k in kept:
        kn = _norm(k)
        if n == kn or n in kn or kn in n or fuzz.ratio(n, kn) >= 90:
            return True
    return False


def select(question: str, records: list[dict], n: int, idf: dict[str, float] | None = None,
           min_score: float = 0.05, qterms: list[str] | None = None, ranked: list[dict] | None = None,
           cfg: Config | None = None, info: dict | None = None) -> list[dict]:
    """The n best distinct sentences (see rank_sentences), best first.

    With [search] rerank = "minilm", the best `rerank_sentences` distinct candidates are
    re-ordered by lexical score + rerank_weight · cosine(question, sentence)
    + rerank_maxsim_weight · MaxSim(question, sentence) under all-MiniLM-L6-v2 (shipped
    weights, run with numpy). The cosine compares whole sentences and sees paraphrase
    ("picks" for "interceptions") that no word overlap can; MaxSim (ColBERT's late
    interaction, on the same forward pass) lets every content word of the question find its
    best-matching word in the sentence in context and averages those similarities, so a
    sentence must match the question's words one by one, not only its topic ("Which mountain
    range influenced the split of the regions?" finds "Another influence is … the Tehachapis,
    which would split the southern region off"). On the dev split it puts the gold page
    first ~1 point more often than the cosine alone (bench/ask_quality.py).
    + rerank_paragraph_weight · cosine(question, the sentence's paragraph) reads the sentence
    in its passage, as the lexical score does with the paragraph's words; the two together
    put the gold page first for 91.3 % of the 300 dev questions instead of 90.3 %, at
    ~0.2 s more per question (the paragraphs go through the same pass, in their own batches).
    `info` receives what was done (for the trace).
    """
    scfg = cfg.search if cfg is not None else None  # no settings: word overlap only
    mode = scfg.rerank.lower() if scfg is not None else "none"
    k = max(scfg.rerank_sentences, n) if mode == "minilm" else n
    kept: list[dict] = []
    for cand in (ranked if ranked is not None else rank_sentences(question, records, idf, qterms=qterms)):
        if len(kept) >= k:
            break
        if cand["score"] < min_score:
            break
        if _is_dup(cand["sentence"], [x["sentence"] for x in kept]):
            continue
        kept.append(cand)
    if mode == "minilm" and len(kept) > 1:
        kept = _rerank_minilm(question, kept, scfg.rerank_weight, info, scfg.rerank_maxsim_weight,
                              scfg.rerank_paragraph_weight)
    elif info is not None:
        info["rerank"] = "none"
    return kept[:n]


def _rerank_minilm(question: str, cands: list[dict], weight: float, info: dict | None,
                   maxsim_weight: float = 0.0, paragraph_weight: float = 0.0) -> list[dict]:
    import time

    t0 = time.perf_counter()
    paras = list(dict.fromkeys(c.get("paragraph") or c["sentence"] for c in cands)) if paragraph_weight else []
    try:
        from provrag.embeddings.minilm import MiniLMEmbedder

        # one pass for all: the question, the sentences, then their paragraphs
        vecs, toks = MiniLMEmbedder().embed_tokens([question] + [c["sentence"] for c in cands] + paras)
    except Exception as e:  # model package missing or damaged: the lexical order stands, and the trace says why
        if info is not None:
            info["rerank"] = f"none (minilm unavailable: {str(e).splitlines()[0][:160]})"
        return cands
    cos = vecs[1:] @ vecs[0]
    para_cos = dict(zip(paras, cos[len(cands):].tolist()))
    qv = _question_pieces(*toks[0])
    for c, x, (_, sv) in zip(cands, cos, toks[1:]):
        c["lexical_score"] = c["score"]
        c["cosine"] = round(float(x), 4)
        c["maxsim"] = round(float((qv @ sv.T).max(1).mean()), 4) if len(qv) and len(sv) else 0.0
        pc = para_cos.get(c.get("paragraph") or c["sentence"])  # None when not asked for (weight 0)
        c["paragraph_cosine"] = None if pc is None else round(pc, 4)
        c["score"] = round(c["score"] + weight * float(x) + maxsim_weight * c["maxsim"]
                           + paragraph_weight * (pc or 0.0), 6)
    out = sorted(cands, key=lambda c: (-c["score"], c["record"], c["start"]))
    if info is not None:
        info["rerank"] = "minilm"
        info["rerank_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    return out


def _question_pieces(pieces: list[str], vecs):
    """The question's word pieces that carry content (no stop words, which include the question
    words, no punctuation, no '##' continuations): each finds its best match among a sentence's pieces."""
    from provrag.text.words import STOP_WORDS

    keep = [i for i, p in enumerate(pieces) if p.isalnum() and not p.startswith("##") and p.lower() not in STOP_WORDS]
    return vecs[keep]


def _end(sentence: str) -> str:
    return sentence if sentence[-1:] in ".!?…" else sentence + "."


def compose(picked: list[dict], records: list[dict]) -> str:
    """Sentences each followed by its record's citation (repeated per sentence, as GraphRAG's
    answers do, so every sentence resolves to its own source)."""
    parts: list[str] = []
    for text, cite in answer_texts(picked, records):
        parts.append(_end(text) + (f" {cite}" if cite else ""))
    return " ".join(parts)


def answer_texts(picked: list[dict], records: list[dict]) -> list[tuple[str, str]]:
    """(text, citation) per picked sentence; a sentence that continues the one before it
    ("This was …", "They also …") is shown with it, unless that one is in the answer already."""
    shown = {_norm(p["sentence"]) for p in picked}
    out = []
    for p in picked:
        cite = p.get("citation") or records[p["record"]].get("citation", "")
        text = p["sentence"]
        ante = p.get("antecedent")
        if ante and len(ante.split()) >= 4 and _norm(ante) not in shown:
            text = f"{_end(ante)} {text}"
            shown.add(_norm(ante))
        out.append((text, cite))
    return out


def answer(question: str, context: list[dict], cfg: Config, idf: dict[str, float] | None = None,
           qterms: list[str] | None = None, info: dict | None = None) -> str:
    """Local/basic search: the best sentences of the context records, each with its citation.

    idf/qterms: the index-wide idf of the question's (spelling-corrected) terms, when the
    caller has them; otherwise idf is estimated from the context itself.
    """
    n = int(cfg.search.answer_sentences)
    picked = select(question, context, n, idf, qterms=qterms, cfg=cfg, info=info)
    if info is not None:
        info["sentences"] = [{"record": p["record"], "score": p["score"], "cosine": p.get("cosine"), "maxsim": p.get("maxsim"),
                              "paragraph_cosine": p.get("paragraph_cosine"),
                              "sentence": p["sentence"][:200], "whole": not p.get("citation")} for p in picked]
    if not picked:
        return NO_ANSWER
    return compose(picked, context)


# ---- global search: map and reduce ---------------------------------------------------------------

def _report_text(r: dict) -> str:
    return r.get("full_content") or "\n\n".join(x for x in (r.get("title"), r.get("summary")) if x)


def map_points(question: str, reports: list[dict], cfg: Config) -> list[dict]:
    """Points (description citing its report, score 0–100) from a batch of reports."""
    per_report = 2
    records = [{"text": _report_text(r), "citation": f"[Data: Reports ({int(r['community'])})]",
                "score": float(r.get("score") or 0.0), "community": int(r["community"])} for r in reports]
    if not records:
        return []
    ranked = rank_sentences(question, records, prior_weight=0.1)
    count: Counter = Counter()
    points = []
    for c in ranked:
        rec = records[c["record"]]
        if count[c["record"]] >= per_report or c["coverage"] <= 0:
            continue
        if c["sentence"].startswith("#") or len(c["sentence"].split()) < 4:
            continue  # markdown headings and fragments are not points
        count[c["record"]] += 1
        points.append({"description": f"{_end(c['sentence'])} {rec['citation']}",
                       "score": int(round(min(100.0, 100.0 * c["coverage"]))),
                       "reports": [rec["community"]]})
    if is_broad(question):
        # "main themes", "summarise": every report's own summary is a point, weighted by the
        # report's rating (GraphRAG's map step answers broad questions from the whole report)
        for rec, r in zip(records, reports):
            summary = r.get("summary") or ""
            spans = split_sentences(summary)
            if not spans:
                continue
            first = clean(summary[spans[0][0]:spans[0][1]])
            if len(first.split()) >= 4:
                rank = float(r.get("rank") or 5.0)
                points.append({"description": f"{_end(first)} {rec['citation']}",
                               "score": int(round(max(1.0, min(100.0, 8.0 * rank)))), "reports": [rec["community"]]})
    return points


_BROAD = re.compile(
    r"\b(main|key|major|overall|common|recurring|central|general|top)\s+(themes?|topics?|ideas?|points?|issues?|"
    r"findings?|takeaways?|messages?|trends?|subjects?|concerns?)\b"
    r"|\b(summari[sz]e|summary|overview|gist|in general|as a whole|across (all|the) (documents?|texts?|files?|sources?))\b"
    r"|\bwhat (is|are) (this|these|the) (documents?|corpus|collection|texts?|books?|files?|reports?|dataset)\b.*\babout\b"
    r"|\bwhat (is|are) .{1,60}\babout\??$", re.I)


def is_broad(question: str) -> bool:
    """A question about the whole collection (themes, summary, overview): GraphRAG's global case."""
    return bool(_BROAD.search(question or ""))


def _split_point(desc: str) -> tuple[str, list[int]]:
    ids = [int(x) for block in re.findall(r"\[Data:\s*Reports\s*\(([^)]*)\)\]", desc, re.I)
           for x in re.findall(r"\d+", block)]
    return clean(desc), ids


def format_reports(ids: list[int], max_ids: int = 5) -> str:
    """`[Data: Reports (4, 0, 3, +more)]`: at most five ids, then +more (GraphRAG's rule)."""
    shown = ", ".join(str(i) for i in ids[:max_ids])
    return f"[Data: Reports ({shown}{', +more' if len(ids) > max_ids else ''})]"


def reduce_answer(question: str, points: list[dict], cfg: Config) -> str:
    """The best points, near-duplicates merged (their report ids joined), each cited."""
    n = int(cfg.search.answer_sentences)
    good = sorted((p for p in points if int(p.get("score") or 0) > 0), key=lambda p: -int(p["score"]))
    if not good:
        return NO_ANSWER
    kept: list[tuple[str, list[int]]] = []
    from rapidfuzz import fuzz

    for p in good:
        text, ids = _split_point(str(p.get("description", "")))
        if not text:
            continue
        for i, (kt, kids) in enumerate(kept):
            if fuzz.token_set_ratio(_norm(text), _norm(kt)) >= 85:
                kept[i] = (kt, kids + [x for x in ids if x not in kids])
                break
        else:
            if len(kept) < n:
                kept.append((text, ids))
    return " ".join(f"{_end(t)} {format_reports(ids)}" if ids else _end(t) for t, ids in kept)
