"""What the three search methods share: their typed result, and the context records they hand
the engine (text units with their citations, neighbours, ranks, and views for the trace).

Split from the methods themselves (global_search, local_search, basic_search) so each method
is one file that reads top to bottom, as GraphRAG keeps one search per module.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from provrag.config import Config
from provrag.engines.base import QueryTerms

# What ask says when nothing in the index answers the question (the closest passages follow as
# sources, which are not citations: CONTRACT.md §5).
ABSTENTION = "Nothing in the index answers this question."
CLOSEST = 3  # how many nearest passages an abstention lists


@dataclass
class SearchResult:
    """One method's outcome, after GraphRAG's SearchResult (response, context_data, …): the answer
    citing `[Data: …]`, the context the engine answered from (text-unit records, or community
    reports for global), each context unit's rank for ordering the answer's sources (global
    reaches units only through reports: none), and what the engine reported doing."""

    answer: str
    method: str
    context: list[dict] = field(default_factory=list)
    unit_rank: dict[str, int] = field(default_factory=dict)
    engine_details: dict = field(default_factory=dict)
    abstained: bool = False                               # nothing retrieved answers the question
    confidence: float | None = None                       # how well the best evidence covers it, 0–1
    closest: list[str] = field(default_factory=list)      # when abstaining: the nearest units, not citations
    # who said "nothing answers": "coverage" (the evidence covers too little of the question),
    # "engine" (it covers enough, but the engine found no sentence that answers), "reader" (the
    # learned reader read the candidate sentences and none states the answer) or "check" (every
    # sentence of the answer was removed: its cited sources do not support it)
    abstained_by: str | None = None
    # ask's answer check (verify/answer_check.py): the answer before it, and what it removed
    raw_answer: str | None = None
    removed: list[dict] = field(default_factory=list)
    checked: bool = False

    def to_json(self) -> dict:
        return {"answer": self.answer, "method": self.method, "context": self.context,
                "unit_rank": self.unit_rank, "engine_details": self.engine_details, "abstained": self.abstained,
                "abstained_by": self.abstained_by, "confidence": self.confidence, "closest": self.closest,
                "raw_answer": self.raw_answer, "removed": self.removed, "checked": self.checked}


def has_rows(con, table: str) -> bool:
    """Whether the index has `table` with at least one row (a missing table has none); asked
    once per connection (store/facts.py)."""
    from provrag.store.facts import remembered

    def ask() -> bool:
        try:
            return bool(con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)").fetchall()[0][0])
        except Exception:
            return False

    return remembered(con, ("has rows", table), ask)


def add_neighbours(rec: dict, nxt: dict | None, prv: dict | None, cite_next, cite_previous) -> None:
    """A sentence cut by the unit's end (a page break) is completed from the next unit, one cut
    by its start (units are cut by tokens) from the previous unit; it then cites both units
    (the previous one first, where it begins)."""
    for key, nb, cite in (("continuation", nxt, cite_next), ("previous", prv, cite_previous)):
        if nb:
            rec[key] = nb["text"]
            rec[f"{key}_citation"] = cite(int(nb["human_readable_id"]))


def unit_rank(units: list[dict], context: list[dict], used: list[int]) -> dict[str, int]:
    """Rank of each context unit for ordering the answer's sources: the units the answer's
    sentences were taken from come first, in answer order (the first source is the page that
    holds the best sentence, not an entity's or relationship's other unit that happens to
    rank higher in retrieval), then the rest of the context in retrieval order."""
    order: list[str] = []
    for ri in used:
        if 0 <= ri < len(context):
            uid = context[ri].get("text_unit_id")
            if uid and uid not in order:
                order.append(uid)
    for c in units:
        if c["text_unit_id"] not in order:
            order.append(c["text_unit_id"])
    return {u: i for i, u in enumerate(order)}


def answer_or_abstain(engine, question: str, method: str, units: list[dict], context: list[dict],
                      extra: list[dict], cfg: Config, ret, trace) -> SearchResult:
    """The engine's answer, or provrag's honest "nothing in the index answers this".

    An engine that reads (Engine.reads: the offline engine with its learned reader) decides by
    itself: it answers only with sentences it finds state the answer, and its probability is
    the confidence. Any other engine writes whatever the context allows, so the evidence's
    coverage of the question is measured first (query/answerable.py; [search] abstain_below is
    the threshold, 0 never abstains) and below it no model is called."""
    if engine.reads:
        return read_or_abstain(engine, question, method, units, context, extra, cfg, ret, trace)
    from provrag.query.answerable import assess

    threshold = float(cfg.search.abstain_below)
    with trace.stage("answerability") as d:
        bm25 = ret.channels.get("bm25") or {}
        found = assess(question, [c["text"] for c in context], ret.idf, int(bm25.get("n_units") or 0),
                       bm25.get("spelling") or {})
        d.update(found.to_json())
        d["threshold"] = threshold
        abstain = found.abstains(threshold)
        d["abstained"] = abstain
    if abstain:
        order = list(range(len(context)))
        if found.best is not None:
            order.remove(found.best)
            order.insert(0, found.best)
        closest = [context[i]["text_unit_id"] for i in order[:CLOSEST]]
        with trace.stage("synthesis") as d:
            d["answer"] = ABSTENTION
            d["why"] = (f"confidence {found.confidence:.2f} < {threshold:g}: the best passage covers "
                        f"{found.lexical:.0%} of the question's terms"
                        + (f" (missing: {', '.join(found.missing_terms[:6])})" if found.missing_terms else ""))
        return SearchResult(ABSTENTION, method, context, unit_rank(units, context, []), {}, abstained=True,
                            abstained_by="coverage", confidence=found.confidence, closest=closest)
    with trace.stage("synthesis") as d:
        ans = engine_answer(engine, question, context, extra, cfg, ret, d)
        d["answer"] = ans.text
    if ans.abstained:  # the engine found no sentence worth quoting: the same honest answer
        return SearchResult(ABSTENTION, method, context, unit_rank(units, context, []), ans.details,
                            abstained=True, abstained_by="engine", confidence=found.confidence,
                            closest=[c["text_unit_id"] for c in context[:CLOSEST]])
    return SearchResult(ans.text, method, context, unit_rank(units, context, ans.records_used), ans.details,
                        confidence=found.confidence)


# how the trace names the kind of fact a question asks for (provrag/text/asked.py)
ASKED_WORDS = {"limit": "a limit", "version": "a version", "cost": "a quantity (how long, how much)"}


def read_or_abstain(engine, question: str, method: str, units: list[dict], context: list[dict],
                    extra: list[dict], cfg: Config, ret, trace) -> SearchResult:
    """A reading engine's answer, or its abstention: it found no sentence that states the answer
    (its best probability is the confidence, and its most relevant passages are the closest)."""
    with trace.stage("synthesis") as d:
        ans = engine_answer(engine, question, context, extra, cfg, ret, d)
        d["answer"] = ans.text if not ans.abstained else ABSTENTION
        d["confidence"] = ans.confidence
        if ans.abstained:
            d["why"] = (f"no sentence of the {len(context)} passages states the answer (best probability "
                        f"{(ans.confidence or 0.0):.2f} < {float(cfg.search.answer_min_prob):g})" if context
                        else "no passage retrieved")
            nowhere = (ans.details or {}).get("names_nowhere")
            if context and nowhere:
                d["why"] = f"it names {', '.join(nowhere)}, which no passage of the index holds"
            asked = (ans.details or {}).get("asked_fact")
            if context and asked and not nowhere:
                d["why"] += (f"; it asks for {' and '.join(ASKED_WORDS.get(k, k) for k in asked['kinds'])}: "
                             f"{asked['candidates_stating_it']} of the {asked['candidates']} sentences read state one")
    order = [i for i in (ans.passage_order or range(len(context))) if 0 <= i < len(context)]
    if ans.abstained:
        return SearchResult(ABSTENTION, method, context, unit_rank(units, context, []), ans.details, abstained=True,
                            abstained_by="reader", confidence=ans.confidence,
                            closest=[context[i]["text_unit_id"] for i in order[:CLOSEST]])
    return SearchResult(ans.text, method, context, unit_rank(units, context, ans.records_used), ans.details,
                        confidence=ans.confidence)


def engine_answer(engine, question: str, context: list[dict], extra: list[dict], cfg: Config, ret, d: dict):
    """The engine's answer from the context (and, for a model, the graph context too); the
    question's index terms and their idf go with it, for an engine that ranks by them."""
    k = cfg.search.top_k_units
    records = context if engine.name == "offline" else context[:k] + extra
    coverage = None
    # word coverage of the question by the best passage: one of what a reading engine weighs; a
    # question with no content word the index could hold ("What is R?") has none to measure.
    # Measured whatever the engine: where a model fails, the offline engine answers in its place
    # (engines/openai) and must answer exactly as it would have on its own (an engine that does
    # not read ignores it)
    from provrag.text.words import query_terms

    if query_terms(question):
        from provrag.query.answerable import assess

        bm25 = ret.channels.get("bm25") or {}
        coverage = assess(question, [c["text"] for c in context], ret.idf, int(bm25.get("n_units") or 0),
                          bm25.get("spelling") or {}, semantic=False).confidence
        d["coverage"] = coverage
    ans = engine.answer(question, records, QueryTerms(list(ret.query_terms), answer_idf(ret), coverage,
                                                      unseen_terms(question, ret)))
    if ans.details:
        d["extract"] = ans.details
    return ans


def answer_idf(ret) -> dict[str, float]:
    """The idf the answer's sentences are scored with: retrieval's, but 0 for the terms that named
    the documents read (`ret.said`). Inside microtype.pdf every sentence is about microtype, yet its
    index-wide idf is high (few units of the other manuals hold it), so a sentence that merely says
    "microtype" outscored one that answers ("How do I enable font expansion with microtype?" was
    answered by how to disable it). Only the answer's scoring drops them: the coverage gate and the
    question's unseen terms read the index-wide idf (bench/results/named-terms-2026-11-29.md)."""
    said = set(ret.said)
    return {t: (0.0 if t in said else v) for t, v in ret.idf.items()} if said else ret.idf


def unseen_terms(question: str, ret) -> list[str]:
    """The question's terms (spelling fixes applied) that no unit holds: retrieval matched none."""
    from provrag.text.words import terms_of

    fixes = (ret.channels.get("bm25") or {}).get("spelling") or {}
    return list(dict.fromkeys(t for t in (fixes.get(w, w) for w in terms_of(question)) if not ret.idf.get(t)))


def candidate_view(ret) -> list[dict]:
    return [{"kind": "text_unit", "id": c["human_readable_id"], "text_unit_id": c["text_unit_id"],
             "document": c["document"], "page_start": c["page_start"], "page_end": c["page_end"],
             "score": c["score"], "bm25": c["bm25"], "cosine": c["cosine"], "why": c.get("why")} for c in ret.candidates]


def selected_view(units: list[dict]) -> list[dict]:
    return [{"kind": "text_unit", "key": c["text_unit_id"], "text_unit_id": c["text_unit_id"],
             "id": c["human_readable_id"], "label": f"Sources ({c['human_readable_id']})", "document": c["document"],
             "path": c["path"], "page_start": c["page_start"], "page_end": c["page_end"], "score": c["score"]}
            for c in units]

