"""What the three search methods share: their typed result, and the context records they hand
the engine (text units with their citations, neighbours, ranks, and views for the trace).

Split from the methods themselves (global_search, local_search, basic_search) so each method
is one file that reads top to bottom, as GraphRAG keeps one search per module.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from provrag.config import Config
from provrag.engines.base import QueryTerms


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

    def to_json(self) -> dict:
        return {"answer": self.answer, "method": self.method, "context": self.context,
                "unit_rank": self.unit_rank, "engine_details": self.engine_details}


def has_rows(con, table: str) -> bool:
    """Whether the index has `table` with at least one row (a missing table has none)."""
    try:
        return bool(con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)").fetchall()[0][0])
    except Exception:
        return False


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


def engine_answer(engine, question: str, context: list[dict], extra: list[dict], cfg: Config, ret, d: dict):
    """The engine's answer from the context (and, for a model, the graph context too); the
    question's index terms and their idf go with it, for an engine that ranks by them."""
    k = cfg.search.top_k_units
    records = context if engine.name == "offline" else context[:k] + extra
    ans = engine.answer(question, records, QueryTerms(list(ret.query_terms), ret.idf))
    if ans.details:
        d["extract"] = ans.details
    return ans


def candidate_view(ret) -> list[dict]:
    return [{"kind": "text_unit", "id": c["human_readable_id"], "text_unit_id": c["text_unit_id"],
             "document": c["document"], "page_start": c["page_start"], "page_end": c["page_end"],
             "score": c["score"], "bm25": c["bm25"], "cosine": c["cosine"]} for c in ret.candidates]


def selected_view(units: list[dict]) -> list[dict]:
    return [{"kind": "text_unit", "key": c["text_unit_id"], "text_unit_id": c["text_unit_id"],
             "id": c["human_readable_id"], "label": f"Sources ({c['human_readable_id']})", "document": c["document"],
             "path": c["path"], "page_start": c["page_start"], "page_end": c["page_end"], "score": c["score"]}
            for c in units]

