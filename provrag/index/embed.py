"""Index stage `embed`: fit the configured embedder on the text units and embed them all.

Over a previous index, an embedder that embeds each text on its own (MiniLM, a server's)
takes the vectors of unchanged units from the previous index (`previous_vectors`: same unit
id, same embedder settings) and embeds only the new ones. TF-IDF/LSA is fitted on the corpus
— its vocabulary, idf and LSA basis are statistics of all units, like PageRank — so it is
refitted and every unit re-embedded (a few seconds per 10,000 units, no model calls): that is
what keeps an update equal to a full rebuild.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from provrag.config import Config
from provrag.embeddings import Embedder, make_embedder
from provrag.index.progress import stage
from provrag.store import schema

if TYPE_CHECKING:
    import polars as pl


def previous_vectors(previous, cfg: Config) -> dict[str, np.ndarray] | None:
    """unit id → vector of the previous index, when it was embedded with this run's embedder
    settings (None otherwise: nothing to reuse). Only asked for by embed_stage when the embedder
    embeds texts one by one."""
    if previous is None or _unit_settings((previous.manifest.get("config") or {}).get("embeddings")) \
            != _unit_settings(cfg.to_dict().get("embeddings")):
        return None
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(previous.path / f"{schema.EMBEDDINGS}.parquet")
    except (OSError, ValueError):
        return None
    ids = table.column(schema.ID).to_pylist()
    vectors = table.column("vector").to_pylist()
    return {i: np.asarray(v, dtype=np.float32) for i, v in zip(ids, vectors) if v is not None}


def _unit_settings(embeddings: dict | None) -> dict | None:
    """The [embeddings] settings that shape unit vectors (passage_vectors shapes only the
    paragraph vectors, index/passages.py)."""
    if embeddings is None:
        return None
    return {k: v for k, v in embeddings.items() if k != "passage_vectors"}


def embed_batch(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """One batch's vectors (an executor's item: the fitted embedder is shared with every batch)."""
    return embedder.embed(texts)


def embed_stage(text_units: pl.DataFrame, cfg: Config, progress=None, prepare=None,
                reuse=None, executor=None) -> tuple[Embedder, np.ndarray]:
    """The fitted embedder and one vector per text unit, in the frame's order.

    The fit is global (TF-IDF's vocabulary and LSA basis are statistics of every unit) and
    runs here; the batches are embedded by `executor` (provrag/executors/; default: in this
    process) — in this process whatever the executor when the embedder asks a server, whose
    client holds the rate limit.

    `prepare(embedder)` runs before any text is embedded (the pipeline attaches its cache
    and usage counter there). `reuse()`: vectors by unit id to take instead of embedding
    (previous_vectors), called only for an embedder that is not fitted on the corpus.
    """
    texts = text_units[schema.TEXT]  # a Series, read a batch at a time: never all units' text as Python strings
    ids = text_units[schema.ID].to_list()
    emb = make_embedder(cfg)
    if prepare is not None:
        prepare(emb)
    emb = emb.fit(texts)
    known = (reuse() or {}) if reuse is not None and not emb.corpus_fitted else {}
    vecs = np.zeros((len(ids), max(emb.dim, 1)), np.float32)
    todo = []
    for i, uid in enumerate(ids):
        v = known.get(uid)
        if v is not None and v.shape == (emb.dim,):
            vecs[i] = v
        else:
            todo.append(i)
    from provrag.executors import default_executor

    bs = max(1, cfg.embeddings.batch_size) * 16
    batches = [todo[s:s + bs] for s in range(0, len(todo), bs)]
    kind = "model" if hasattr(emb, "share_usage") else "cpu"  # one that counts requests asks a server
    vectors = (executor or default_executor(cfg)).map(embed_batch, (texts.gather(rows).to_list() for rows in batches),
                                                     kind=kind, shared=emb)
    with stage(progress, "embed", len(todo)) as task:
        for rows, batch_vectors in zip(batches, vectors):
            vecs[rows] = batch_vectors
            task.advance(len(rows))
    return emb, vecs
