"""`provrag ask`: a question in, a cited answer with sources by page and a stored trace out.

Stages, top to bottom (each recorded in the trace, provrag/store/traces.py):
  question     terms of the question, entities it names, the method and why
  exploration  candidates with scores (text units, or community reports for global)
  focus        the selected context
  synthesis    map points and the answer (engine: offline extractive, or a model)
  citations    every `[Data: …]` of the answer resolved to document + page + quote
then the trace is saved (INDEX/queries/, or the user fallback for read-only folders).
"""
from __future__ import annotations

from pathlib import Path

from provrag.errors import UsageError
from provrag.config import Config
from provrag.query.trace import Trace
from provrag.store.traces import save_trace

SOURCE_KEYS = ("document", "path", "page_start", "page_end", "page_label", "text_unit_id", "quote", "via", "score")


class AskError(UsageError):
    """Bad question, index or method (one-line message; the CLI exits 2)."""


def attach_index_cache(engine, index_path: Path) -> None:
    """A model engine's replies are cached in the index (a re-asked question costs nothing),
    but only in an index provrag built and may write (never an audited GraphRAG folder)."""
    from provrag.store.cache import index_cache

    if engine.name != "offline":
        cache = index_cache(index_path, "llm")
        if cache is not None:
            engine.attach_cache(cache)


def order_sources(sources: list[dict], unit_rank: dict[str, int]) -> list[dict]:
    """Best page first: by the answer sentence that cites them (answers are written best
    sentence first), then by the unit's rank in the selected context, then by the
    resolver's claim-aware score; one entry per text unit."""
    def key(s):
        si = s.get("sentence_index")
        return (si if si is not None else 1 << 30, unit_rank.get(s.get("text_unit_id"), 1 << 30),
                -float(s.get("score") or 0.0))

    seen, out = set(), []
    for s in sorted(sources, key=key):
        k = s.get("text_unit_id") or (s.get("document"), s.get("page_start"), s.get("quote"))
        if k in seen:
            continue
        seen.add(k)
        out.append(s)
    return out


def run_ask(question: str, index_path, cfg: Config, method: str | None = None, save: bool = True) -> dict:
    """Answer `question` over the index; returns the ask --json dict plus `_trace` (the full trace)."""
    from provrag.engines import get_engine
    from provrag.store.reader import IndexNotFound, open_index
    from provrag.query.resolve import resolve_answer
    from provrag.query.search import METHODS, choose_method, match_entities, run_method

    question = (question or "").strip()
    if not question:
        raise AskError("the question is empty")
    method = (method or cfg.search.default_method or "auto").strip().lower()
    if method not in METHODS + ("auto",):
        raise AskError(f"unknown method '{method}' (expected auto, {', '.join(METHODS)})")
    try:
        reader = open_index(index_path)
    except IndexNotFound as e:
        raise AskError(str(e)) from None
    try:
        engine = get_engine(cfg)
    except Exception as e:  # unknown engine, missing API key: one line
        reader.close()
        raise AskError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    attach_index_cache(engine, reader.path)

    with reader:
        trace = Trace("ask", question, index=str(reader.path), index_kind=reader.kind, engine=engine.name,
                      model=engine.model)
        with trace.stage("question") as d:
            from provrag.text.words import query_terms

            d["terms"] = query_terms(question)
            entities = match_entities(reader.con, question)
            d["entities"] = [{"id": e["human_readable_id"], "title": e["title"]} for e in entities]
            if method == "auto":
                chosen, why = choose_method(reader, question, cfg, entities)
            else:
                chosen, why = method, "asked for with --method"
            if chosen == "global" and not _has_reports(reader):
                chosen, why = "basic", f"{why}; but the index has no community reports, so basic search"
            d["method"], d["why"] = chosen, why
        trace["method"], trace["method_why"] = chosen, why
        trace["requested_method"] = method

        result = run_method(chosen, reader, question, cfg, engine, trace, entities)
        answer = result["answer"]

        with trace.stage("citations") as d:
            top_k = int(cfg.resolve.top_k)
            resolved = resolve_answer(reader, answer, top_k=top_k)
            sources = order_sources(resolved["sources"], result.get("unit_rank") or {})
            d["citations"] = len(resolved["citations"])
            d["sources"] = len(sources)
            d["unresolved"] = resolved["unresolved"]
            d["problems"] = resolved.get("problems", [])
            d["dead_ends"] = resolved.get("dead_ends", [])

    out = {
        "trace_id": trace.id,
        "question": question,
        "method": chosen,
        "answer": answer,
        "citations": [{k: c.get(k) for k in ("kind", "ids", "more", "sentence")} for c in resolved["citations"]],
        "sources": [{k: s.get(k) for k in SOURCE_KEYS} for s in sources],
        "unresolved": [{"kind": u.get("kind"), "id": u.get("id")} for u in resolved["unresolved"]],
    }
    trace["answer"] = answer
    trace["citations"] = resolved["citations"]
    trace["sources"] = sources
    trace["unresolved"] = resolved["unresolved"]
    trace["usage"] = engine.usage.to_dict()
    trace.finish()
    out["_trace"] = trace.data
    if save:
        try:
            out["_trace_file"] = str(save_trace(trace.data, reader.path))
        except OSError as e:  # a full disk must not cost the user the answer
            out["_trace_error"] = f"trace not saved: {e.strerror or e}"
    return out


def _has_reports(reader) -> bool:
    from provrag.query.search import _has_rows

    return _has_rows(reader.con, "community_reports")
