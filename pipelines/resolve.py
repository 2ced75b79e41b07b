"""`provrag resolve`: an answer's `[Data: …]` citations in, each resolved to document, page and quote.

Stages, top to bottom:
  open      the index (a provrag index or a Microsoft GraphRAG output folder), read-only
  resolve   every cited id → text units → document + page, ranked by support for the citing
            sentence (provrag/query/resolve.py)
Nothing is stored: resolving is a pure read.
"""
from __future__ import annotations

from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.results import ResolveResult


def run_resolve(index_dir, answer: str | None, cfg: Config, top_k: int | None = None,
                trace_id: str | None = None, reader=None) -> ResolveResult:
    """Every citation of `answer` resolved over the index at `index_dir` (`to_json()`: resolve --json).

    `trace_id` instead of `answer`: the answer of that stored ask trace, and which of its cited
    ids changed or were retired since the index version it was made on (query/since.py).
    `reader`: the index already open (a server's; not closed here) instead of opening `index_dir`."""
    import duckdb

    from provrag.query.resolve import resolve_answer
    from provrag.store.reader import reading

    since, from_trace = None, trace_id is not None
    if trace_id is not None:
        from provrag.store.traces import TraceNotFound, load_trace

        try:
            t = load_trace(trace_id, Path(index_dir))
        except TraceNotFound as e:
            raise UsageError(str(e)) from None
        if not isinstance(t.get("answer"), str) or not t["answer"].strip():
            raise UsageError(f"trace {trace_id} holds no answer (kind {t.get('kind')})")
        answer, since = t["answer"], t.get("index_version")
    with reading(Path(index_dir), reader) as reader:
        try:
            result = resolve_answer(reader, answer or "", top_k=top_k or cfg.resolve.top_k)
        except (duckdb.Error, OSError) as e:  # a damaged parquet file found mid-query
            raise UsageError(f"cannot read index {index_dir}: {str(e).splitlines()[0][:200]}") from None
        if from_trace:  # which of its cited ids changed since the trace's index version
            from provrag.query.since import changes_since

            result.index_changes = changes_since(reader, since, answer)
    return result
