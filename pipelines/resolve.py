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


def run_resolve(index_dir, answer: str, cfg: Config, top_k: int | None = None) -> ResolveResult:
    """Every citation of `answer` resolved over the index at `index_dir` (`to_json()`: resolve --json)."""
    import duckdb

    from provrag.query.resolve import resolve_answer
    from provrag.store.reader import open_index

    with open_index(Path(index_dir)) as reader:
        try:
            return resolve_answer(reader, answer, top_k=top_k or cfg.resolve.top_k)
        except (duckdb.Error, OSError) as e:  # a damaged parquet file found mid-query
            raise UsageError(f"cannot read index {index_dir}: {str(e).splitlines()[0][:200]}") from None
