"""The offline answer read by the learned reader: a sentence answers only when the model finds
it states the answer, the answer leads with it, and nothing that does not answer is added.

Word overlap can say which sentences are *about* the question, not which one *states* what
was asked: near misses (the manual discusses the setting but never gives its maximum) share
every word of the question. The reader (provrag/learned, a MiniLM cross-encoder) reads the
question with each candidate sentence in its paragraph and gives a calibrated probability
that the sentence states the answer.

Steps:
1. passages: the retrieved records, the first `reader_passages` re-ranked by reciprocal rank
   fusion of retrieval's order and the reader's passage head (its relevance probability), so a
   package's own manual comes before the others that merely mention it, and a page that
   retrieval ranks high is not dropped on the head's word alone (the head's own first passage
   is read first);
2. candidates: the best `reader_sentences` distinct sentences — those of the best passages
   (a short question such as "What is R?" shares no word a scorer can weigh) and the best by
   the lexical scorer (scoring.rank_sentences), alternately;
3. reading: each candidate's probability of stating the answer (`answer_probs`, with its
   paragraph as context) — none is read when the question names something no passage holds
   (near_miss.names_nowhere): no sentence can state its answer;
4. the answer: among the candidates that may answer (near_miss.py: for a question asking for a
   limit, a version or a cost, those with the fact's form; all of them otherwise), the most
   probable sentence at or above `answer_min_prob` (ties by passage relevance), then — for a "how
   do I" question — the steps that follow it in its section, or further sentences the reader
   itself reads as answering (its own probability at or above the threshold) on the same subject
   (a broad question: one per passage), none said twice, `answer_sentences` at most. None: abstain.
The answer's `confidence` is the lead sentence's probability (calibrated by the train lane on
held-out data, bench/results/): the model's, not a coverage score.
"""
from __future__ import annotations

import math
import threading

from provrag.config import Config
from provrag.engines.offline.answer.focus import anchor_term, points_elsewhere, same_subject, section_steps, steps_after
from provrag.engines.offline.answer.near_miss import (about_the_subject, names_nowhere, preferring_asked_fact,
                                                     preferring_definition, stating_asked_fact)
from provrag.engines.offline.answer.option_answers import (about_the_option, entry_of_option, option_entries,
                                                          preferring_option_entry, stating_entries)
from provrag.engines.offline.answer.question_forms import asks_what_is_said, question_parts, said_about
from provrag.engines.offline.answer.scoring import rank_sentences
from provrag.engines.offline.answer.wording import normalised, said_already
from provrag.engines.offline.report import reads_as_prose
from provrag.text.questions import is_broad, is_procedural
from provrag.text.sentences import is_heading

PASSAGE_SENTENCES = 12   # sentences taken from each of the best passages (a unit holds ~10-15)
BEST_PASSAGES = 3        # passages whose sentences are all candidates
FEATURES = ("answer", "passage", "lexical", "coverage", "meaning")   # [search.reader_weights] (bench/fit_reader.py)


def _logit(p: float | None) -> float:
    p = min(max(float(p if p is not None else 0.5), 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def features(prob: float, passage_prob: float | None, lexical: float, top_lexical: float, coverage: float,
             meaning: float = 0.0, gate: float | None = None) -> dict:
    """What decides whether a candidate answers: the reader's two readings (as logits), the word
    overlap the hand-set scorer measured (its sentence score, scoring.rank_sentences, and the
    share of the question's weighted terms the sentence holds), MiniLM's meaning score (selection.py),
    and, for the question as a whole, how much of it the best passage covers (`gate`, a logit;
    query/answerable.py's lexical measure, where a word the index never saw weighs most)."""
    return {"answer": _logit(prob), "passage": _logit(passage_prob), "lexical": float(lexical),
            "coverage": float(coverage or 0.0), "meaning": float(meaning or 0.0),
            "gate": _logit(gate) if gate is not None else 0.0}


def answer_probability(feat: dict, weights: dict[str, float]) -> float:
    """P(the index answers the question with this sentence), in two fitted steps: a linear score
    of the features that ranks the candidates (`bias` + Σ weight × feature), then its
    calibration into a question-level probability (`offset` + `scale` × score, logistic), since a
    question's best candidate, not each candidate, is what the answer stands on. With the
    default weights (answer 1, scale 1, the rest 0) it is the reader's own calibrated
    probability; bench/fit_reader.py refits both steps on dev data where that measurably helps."""
    z = float(weights.get("bias", 0.0)) + sum(float(weights.get(k, 0.0)) * feat[k] for k in FEATURES)
    z = float(weights.get("offset", 0.0)) + float(weights.get("scale", 1.0)) * z \
        + float(weights.get("gate", 0.0)) * feat.get("gate", 0.0)
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def passage_text(record: dict) -> str:
    return " ".join((record.get("text") or "").split())


# one question's readings, kept across ask's attempts (escalate.py), one per thread (a server's requests
# run in threads of their own: a shared memo would let one question's reading stand for another's)
_MEMO = threading.local()


def _memo(question: str, kind) -> dict:
    """What was read for this question already, by text: a wider retry re-reads only what is new."""
    memo = getattr(_MEMO, "readings", None)
    if memo is None or memo.get("question") != question:
        memo = _MEMO.readings = {"question": question}
    return memo.setdefault(kind, {})


def memoised(question: str, kind, keys: list[str], compute) -> list[float]:
    """compute(the keys not read yet) → their values; all values in key order."""
    seen = _memo(question, kind)
    todo = list(dict.fromkeys(k for k in keys if k not in seen))
    if todo:
        seen.update(zip(todo, [float(x) for x in compute(todo)]))
    return [seen[k] for k in keys]


# reciprocal rank fusion's constant (Cormack, Clarke & Büttcher 2009: 60, the value they and
# most engines use, e.g. Elasticsearch's rrf retriever); not fitted here
RRF_K = 60


def rank_passages(r, question: str, context: list[dict], limit: int) -> tuple[list[int], list[float] | None]:
    """Indices of the context records, the first `limit` re-ordered by reciprocal rank fusion of
    two rankings: retrieval's (BM25 + embeddings over the whole index) and the passage head's
    (the reader's relevance probability); ties keep retrieval's order. Also their relevance
    probabilities (None: not re-ranked). The head's most relevant passage comes first.

    Why both: each is wrong where the other is right. The head reads a passage alone, so one that
    merely talks about the question's topic (another package's manual that mentions booktabs)
    can outscore the page that states the fact; retrieval weighs how rare the question's words
    are across the index, which the head cannot see. The order decides which passages' sentences
    the reader reads at all (`candidates` takes the first passages' sentences, alternating with
    the lexical scorer's best), so a page the head alone puts 4th is rarely read. Measured on
    the dev sets (bench/results/recall-dev-2026-11-27.md): the page that answers is among the
    first three passages more often by the fusion than by the head alone."""
    order = list(range(len(context)))
    if limit <= 0 or len(context) < 1:
        return order, None
    head = order[:limit]
    scores = memoised(question, "passage", [passage_text(context[i]) for i in head],
                      lambda texts: r.passage_scores(question, texts))
    by_head = sorted(head, key=lambda i: (-scores[i], i))
    head_rank = {i: k for k, i in enumerate(by_head)}
    fused = sorted(head, key=lambda i: (-(1.0 / (RRF_K + head_rank[i]) + 1.0 / (RRF_K + i)), i))
    # the head's most relevant passage is read first whatever the fusion made of it: a question on
    # what a source says about a topic is answered from it (said_about)
    fused = list(dict.fromkeys(by_head[:1] + fused))
    return fused + order[limit:], scores + [None] * (len(order) - limit)


def by_relevance(order: list[int], pscores: list[float | None] | None) -> list[int]:
    """The records by the passage head's probability alone (ties: retrieval's order), the ones it
    did not read after them: what the reader finds most relevant, as an abstention's closest
    passages and the passage a "what is said about" question is answered from."""
    if pscores is None:
        return list(order)
    scored = sorted((i for i in order if pscores[i] is not None), key=lambda i: (-pscores[i], i))
    return scored + [i for i in order if pscores[i] is None]


def candidates(ranked: list[dict], passages: list[int], n: int) -> list[dict]:
    """The best `n` distinct sentences: those of the best passages (in passage order) and the best
    by the lexical scorer, taken alternately."""
    by_record: dict[int, list[dict]] = {}
    for c in sorted(ranked, key=lambda c: (c["record"], c["start"])):
        by_record.setdefault(c["record"], []).append(c)
    from_passages = [c for ri in passages[:BEST_PASSAGES] for c in by_record.get(ri, [])[:PASSAGE_SENTENCES]]
    lexical = [c for c in ranked if c["score"] > 0]
    out, seen = [], set()
    for pair in _alternate(from_passages, lexical):
        key = normalised(pair["sentence"])
        if not key or key in seen or not states_something(pair["sentence"]):
            continue
        seen.add(key)
        out.append(pair)
        if len(out) >= n:
            break
    return out


def states_something(sentence: str) -> bool:
    """False for what cannot state an answer: a heading or contents line, a question (an FAQ's
    "2.1 What is R?" names the topic; the sentence after it answers), a lone word."""
    s = sentence.strip()
    return len(s.split()) >= 3 and not s.endswith("?") and not is_heading(s)


def _alternate(a: list, b: list):
    for i in range(max(len(a), len(b))):
        if i < len(b):
            yield b[i]
        if i < len(a):
            yield a[i]


def read(question: str, context: list[dict], cfg: Config, r, idf: dict[str, float] | None = None,
         qterms: list[str] | None = None, info: dict | None = None, gate: float | None = None,
         unseen: list[str] | None = None) -> tuple[list[dict], float]:
    """(the answer's sentences, best first; the model's confidence in the lead one). An empty
    list: no candidate states the answer (the confidence is then the best probability read)."""
    scfg = cfg.search
    threshold = float(scfg.answer_min_prob)
    n = int(scfg.answer_sentences)
    order, pscores = rank_passages(r, question, context, int(scfg.reader_passages))
    relevant = by_relevance(order, pscores)
    nowhere = names_nowhere(question, unseen, context)
    if nowhere:   # no sentence can state its answer, so none is read; the passage head orders
        # the closest passages (bench/results/names-nowhere-2026-11-28.md)
        if info is not None:
            info.update(reader="learned", threshold=threshold, names_nowhere=nowhere, confidence=0.0, read=[])
            _passages_read(info, relevant, order, pscores)
        return [], 0.0
    rank_of = {ri: k for k, ri in enumerate(order)}
    ranked = rank_sentences(question, context, idf, qterms=qterms)
    entries = option_entries(question, ranked, context)
    cands = entries + [c for c in candidates(ranked, order, int(scfg.reader_sentences))
                       if all(c is not e for e in entries)]
    paragraphs = {c["sentence"]: c.get("paragraph") or c["sentence"] for c in cands}
    probs = memoised(question, "answer", [c["sentence"] for c in cands],
                     lambda sents: r.answer_probs(question, sents, contexts=[paragraphs[x] for x in sents]))
    top_lexical = max((c["score"] for c in cands), default=0.0)
    weights = dict(scfg.reader_weights)
    meaning = meaning_scores(question, cands, cfg, weights, info)
    for c, p, m in zip(cands, probs, meaning):
        c["lexical_score"] = c["score"]
        c["reader_prob"] = round(float(p), 4)
        c["passage_prob"] = None if pscores is None or pscores[c["record"]] is None else round(pscores[c["record"]], 4)
        c["features"] = features(float(p), c["passage_prob"], c["score"], top_lexical, c.get("coverage", 0.0), m, gate)
        c["prob"] = round(answer_probability(c["features"], weights), 4)
        c["score"] = c["prob"]
    cands.sort(key=lambda c: (-c["prob"], rank_of.get(c["record"], 1 << 30), c["start"]))
    eligible, asked = stating_asked_fact(question, cands, context, idf)
    eligible = about_the_subject(question, preferring_asked_fact(question, eligible, threshold, context, idf), context)
    eligible = preferring_definition(question, about_the_option(question, eligible, context), threshold)
    eligible = preferring_option_entry(question, eligible, threshold)
    # a sentence that only sends the reader elsewhere ("See Section 9.1 [Bash History Facilities],
    # page 152, for more details …") states nothing: it shares the topic's words and can score as
    # answering, but it answers no question, as a lead or after one (focus.points_elsewhere)
    answering = further_answering([c for c in eligible if c["prob"] >= threshold
                                   and not points_elsewhere(c["sentence"])], threshold)
    if answering:
        answering[1:1] = continuation(answering[0], cands, context, threshold, answering)
        answering += other_parts(question, cands, answering, r, paragraphs, threshold)
    picked = focus_read(question, answering, context, idf or {}, n)
    best = eligible[0]["prob"] if eligible else 0.0
    if not picked and (entries := stating_entries(entries, eligible, asked)):
        def relevance(ri: int) -> float:   # the passage head's reading, also of a passage it did not rank
            if pscores is not None and pscores[ri] is not None:
                return pscores[ri]
            return memoised(question, "passage", [passage_text(context[ri])], lambda t: r.passage_scores(question, t))[0]
        picked, best = entry_of_option(question, entries, context, relevance, threshold, best)
        if info is not None and picked:
            info["answered_by"] = ("the option's entry in a passage the passage head reads as relevant" if best >= threshold
                                   else "the option's entry in the manual of the program the question names")
    if not picked and asks_what_is_said(question):
        picked, best = said_about(cands, relevant, pscores, threshold, best)
        if info is not None and picked:
            info["answered_by"] = "passage head (the question asks what is said about a topic)"
    if info is not None:
        info["reader"] = "learned"
        info["threshold"] = threshold
        if asked:
            info["asked_fact"] = {"kinds": list(asked), "candidates_stating_it": len(eligible), "candidates": len(cands)}
        info["confidence"] = round(best, 4)
        _passages_read(info, relevant, order, pscores)
        info["read"] = [{"record": c["record"], "prob": c["prob"], "reader_prob": c["reader_prob"],
                         "lexical_score": c["lexical_score"], "passage_prob": c["passage_prob"],
                         "sentence": c["sentence"][:160]} for c in cands[:10]]
    return picked, best


def _passages_read(info: dict, relevant: list[int], order: list[int], pscores: list[float | None] | None) -> None:
    info["passage_order"] = relevant   # an abstention's closest passages: the most relevant by the head
    info["read_order"] = order         # the order its candidate sentences were taken in (rank_passages)
    if pscores is not None:
        info["passages"] = [{"record": ri, "prob": round(pscores[ri], 4)} for ri in relevant if pscores[ri] is not None]


def other_parts(question: str, cands: list[dict], answering: list[dict], r, paragraphs: dict,
                threshold: float) -> list[dict]:
    """For a compound question, the sentence that answers each of its other parts. The reader was
    trained on one question per sentence (SQuAD-style), so "when was it commissioned" read as part
    of "What does X supply and when …" scores low against the whole; each part is read on its own
    (its subject comes from the sentence's paragraph, read with it), and its best sentence joins
    the answer when the reader reads it as answering that part, at the same threshold."""
    have = {c["sentence"] for c in answering}
    added = []
    for part in question_parts(question):
        sents = [c["sentence"] for c in cands]
        probs = memoised(part, "answer", sents,
                         lambda xs, part=part: r.answer_probs(part, xs, contexts=[paragraphs[x] for x in xs]))
        best = max(range(len(cands)), key=lambda i: probs[i], default=None)
        if best is None or probs[best] < threshold or cands[best]["sentence"] in have:
            continue
        have.add(cands[best]["sentence"])
        added.append(cands[best])
    return added


def further_answering(answering: list[dict], threshold: float) -> list[dict]:
    """The lead (the best by the fitted combination), then only the sentences the reader itself
    reads as answering. Why: the combination's second step is calibrated per question (does the
    index answer it?), so once the question is answered every sentence that shares its words
    scores high too — "This handbook tells the commissioning team …" reaches 0.94 beside the
    sentence naming the team's leader, though the reader gives it 0.19. What is added beside
    the lead must state the answer by the model's own reading: at or above the threshold, or at
    least as surely as the lead itself. Why the second: on technical manuals the reader often
    reads every candidate low (the lead at 0.2, chosen by the combination), and a sentence it
    reads as answering more surely than the lead is no weaker an answer than the lead; cutting
    it cut the sentence that held the answer ("What does RFA stand for …?": the lead names the
    wnpp bug, the next sentence spells out "Request For Adoption", the reader reads both ~0.25)."""
    if not answering:
        return []
    floor = min(threshold, float(answering[0].get("reader_prob", threshold)))
    return answering[:1] + [c for c in answering[1:] if c.get("reader_prob", 0.0) >= floor]


def continuation(lead: dict, cands: list[dict], records: list[dict], threshold: float,
                 have: list[dict]) -> list[dict]:
    """The sentence right after the lead in its passage, when it was read and answers by the same
    measure as the lead (its combined probability at or above the threshold): a lead often sets
    up what the next sentence completes — "Another problem … is the need for showing the
    equation numbers for only those equations actually referenced." / "In mathtools this can be
    done by setting the key showonlyrefs …"; "The numbers will be divided by 1000, so that a
    stretch limit of 10 means …" / "The default stretch limit is 20." The reader reads such a
    second half low on its own (0.05-0.25: SQuAD-style spans name their subject), so
    further_answering's bar cut it. Nothing between them (no heading), not a question (a FAQ's
    next entry), not a pointer elsewhere (focus.points_elsewhere): [] otherwise."""
    end = lead.get("end")
    if end is None or not 0 <= lead["record"] < len(records) or lead.get("table_row"):
        return []   # a table's next row is another record, not the rest of this one (text/tables.py)
    text = records[lead["record"]].get("text") or ""
    after = [c for c in cands if c["record"] == lead["record"] and c.get("start", -1) >= end]
    if not after:
        return []
    nxt = min(after, key=lambda c: c["start"])
    if text[end:nxt["start"]].strip() or nxt["prob"] < threshold or "?" in nxt["sentence"] \
            or points_elsewhere(nxt["sentence"]) or any(c is nxt for c in have):
        return []
    return [dict(nxt, continues_lead=True)]


def meaning_scores(question: str, cands: list[dict], cfg: Config, weights: dict, info: dict | None) -> list[float]:
    """MiniLM's meaning score of each candidate (selection.minilm_meaning), only when the fitted
    weights use it; 0 for all when they do not, or MiniLM is missing (the trace says so)."""
    if not cands or not float(weights.get("meaning", 0.0)):
        return [0.0] * len(cands)
    from provrag.engines.offline.answer.selection import minilm_meaning

    s = cfg.search
    by_sentence = {c["sentence"]: c for c in cands}
    # the settings the score depends on: a question asked again under others is read again
    how = (s.rerank_weight, s.rerank_maxsim_weight, s.rerank_paragraph_weight, s.meaning_int8)
    try:
        return memoised(question, ("meaning", *how), [c["sentence"] for c in cands],
                        lambda sents: minilm_meaning(question, [by_sentence[x] for x in sents], *how))
    except Exception as e:  # model package missing or damaged: the reader's word stands
        if info is not None:
            info["meaning"] = f"none (minilm unavailable: {str(e).splitlines()[0][:160]})"
        return [0.0] * len(cands)


def focus_read(question: str, answering: list[dict], records: list[dict], idf: dict[str, float], n: int) -> list[dict]:
    """What answers, best first: the lead sentence; for "how do I …" the steps that follow it in
    its section; for a broad question one answering sentence per passage; otherwise further
    answering sentences on the lead's subject (the question's most specific term it holds)."""
    if not answering:
        return []
    lead = answering[0]
    procedural = is_procedural(question)
    if procedural:
        # the section whose heading names the task is its procedure (focus.section_steps): a
        # sentence that only points elsewhere ("the detailed procedure … can be found in the
        # Developer's Reference") shares every word of "How do I orphan a package?" and reads as
        # answering, but the steps are under "5.9.4 Orphaning a package"
        steps = section_steps(question, records)
        if steps:
            return steps
        if not lead.get("citation"):
            return [lead] + steps_after(lead, records[lead["record"]])
    out, seen = [lead], {lead["record"]}
    broad = is_broad(question)
    anchor = anchor_term(idf, lead.get("table_row") or lead["sentence"] + " " + (lead.get("antecedent") or ""))
    for c in answering[1:]:
        if len(out) >= n:
            break
        if said_already(c["sentence"], [x["sentence"] for x in out]):   # two overlapping units quote it
            continue
        if c.get("continues_lead"):   # completes the lead (continuation): same passage, same subject
            out.append(c)
            continue
        if broad and c["record"] in seen:
            continue
        if not procedural and not reads_as_prose(c["sentence"]):
            # a further sentence that is mostly settings or code ("Note that the default background is
            # black. gnuplot*background: black gnuplot*textGray: white …" after "Gnuplot is a portable
            # command-line driven graphing utility …") adds nothing to the answer; a "how do I"
            # answer's commands are kept
            continue
        if not broad and lead.get("entry") and c.get("entry") not in (None, lead["entry"]):
            continue   # another setting's definition is another subject (text/definitions.py)
        if broad or same_subject(anchor, c.get("table_row") or c["sentence"], c.get("antecedent")):
            out.append(c)
            seen.add(c["record"])
    return out
