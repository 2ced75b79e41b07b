"""GraphRAG's basic search: the top-k text units by hybrid retrieval (provrag/query/retrieve.py),
answered by the engine; the answer cites Sources.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.query.context import SearchResult, add_neighbours, answer_or_abstain, candidate_view, selected_view
from provrag.query.retrieve import neighbours, retrieve_units


def basic_search(reader, question: str, cfg: Config, engine, trace, context_units: int | None = None,
                 restrict: list[str] | None = None, said=()) -> SearchResult:
    """`context_units`: how many retrieved units the engine reads (default [search]
    context_units; ask's wider retries read more); `restrict`: only these units (ask's retry
    over the section around the best page, or over the documents the question names, whose
    naming terms are `said`: query/named.py)."""
    k = int(cfg.search.top_k_units)
    n_ctx, pool = int(context_units or cfg.search.context_units), int(cfg.search.candidate_pool)
    pool = max(pool, n_ctx)
    with trace.stage("exploration") as d:
        ret = retrieve_units(reader, question, cfg, k=max(k, n_ctx), pool=pool, restrict=restrict, said=said)
        d["candidates"] = candidate_view(ret)
        d["retrieval"] = {"channels": ret.channels, "ms": ret.timings_ms}
    with trace.stage("focus") as d:
        units = ret.candidates[:max(k, n_ctx)]
        nxt, prv = neighbours(reader, [c["text_unit_id"] for c in units])
        context = []
        for c in units:
            h0 = int(c["human_readable_id"])
            rec = {"kind": "source", "text": c["text"], "score": c["score"],
                   "citation": f"[Data: Sources ({h0})]", "text_unit_id": c["text_unit_id"],
                   "document": c.get("document"), "path": c.get("path")}
            add_neighbours(rec, nxt.get(c["text_unit_id"]), prv.get(c["text_unit_id"]),
                            lambda h, h0=h0: f"[Data: Sources ({h0}, {h})]", lambda h, h0=h0: f"[Data: Sources ({h}, {h0})]")
            context.append(rec)
        d["selected"] = selected_view(units)
    return answer_or_abstain(engine, question, "basic", units, context, [], cfg, ret, trace)

