"""The state of one `provrag index` run: what it was given, and each table as its stage left it.

A typed object instead of a dict of tables, so a reader of pipelines/index.py sees which stage
makes which table and what type it has. Every table is a polars frame with the contract's
columns (provrag/index/tables.py) from the stage that makes it to the write; later stages
fill columns, they never change a table's representation:

    load         documents            (text_unit_ids null, plus the run's PAGES column)
    chunk        text_units           (skeleton and graph columns null); documents.text_unit_ids
    embed        embedder, vectors    (one row per text unit, in text_units order)
    skeleton     keywords.parquet     (written at once: no later stage reads it); text_units.is_skeleton / skeleton_score
    extract      entities, relationships; text_units.entity_ids / relationship_ids
    communities  communities
    sections     sections             (each document's parts: outline/headings or topic segments)
    reports      community_reports
    write        the parquet files, the embedder, the BM25 term table and the id registry

Over an existing index the run also knows the previous index (`previous`), what changed in
DOCS since (`changes`, after load) and the id registry it numbers every table with (`ids`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provrag.config import Config

if TYPE_CHECKING:  # heavy or engine modules: for the annotations only
    import numpy as np
    import polars as pl

    from provrag.embeddings import Embedder
    from provrag.engines.base import Engine
    from provrag.executors import Executor
    from provrag.index.ids import IdRegistry
    from provrag.index.versions import Changes, PreviousIndex
    from provrag.store.cache import Cache


@dataclass
class IndexRun:
    docs: Path                  # the folder indexed (absolute)
    out: Path                   # the index folder the run replaces when it succeeds
    tmp: Path                   # where the run writes until then (store/writer.py)
    cfg: Config
    engine: Engine
    progress: Any = None        # a views.progress.StageProgress, or None for no display
    executor: Executor | None = None  # where per-item work runs (provrag/executors/); None = local
    documents: pl.DataFrame | None = None
    text_units: pl.DataFrame | None = None
    embedder: Embedder | None = None
    vectors: np.ndarray | None = None
    entities: pl.DataFrame | None = None
    relationships: pl.DataFrame | None = None
    communities: pl.DataFrame | None = None
    sections: pl.DataFrame | None = None
    community_reports: pl.DataFrame | None = None
    previous: PreviousIndex | None = None   # the provrag index in `out` this run updates
    full: bool = False                      # --full: reuse no cached result of the previous index
    ids: IdRegistry | None = None           # stable numbers across runs (index/ids.py)
    changes: Changes | None = None          # documents added / changed / removed since `previous`
    id_counts: dict | None = None           # per table: ids added, changed, retired, live (after write)
    written: dict[str, int] = field(default_factory=dict)  # tables a stage wrote into tmp itself: their rows

    def cache(self, namespace: str) -> Cache:
        """The run's cache of `namespace` (parse, embed, llm, reports): written inside the new
        index, reading the previous index's entries unless the run is `--full`."""
        from provrag.store.cache import Cache

        return Cache(self.tmp / "cache", None if self.full else self.out / "cache", namespace=namespace)
