"""Index stage `embed`: fit the configured embedder on the text units and embed them all."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from provrag.config import Config
from provrag.embeddings import Embedder, make_embedder
from provrag.index.progress import stage
from provrag.store import schema

if TYPE_CHECKING:
    import polars as pl


def embed_stage(text_units: pl.DataFrame, cfg: Config, progress=None, prepare=None) -> tuple[Embedder, np.ndarray]:
    """The fitted embedder and one vector per text unit, in the frame's order
    (batched so the progress bar moves).

    `prepare(embedder)` runs before any text is embedded (the pipeline attaches its cache
    and usage counter there).
    """
    texts = text_units[schema.TEXT].to_list()
    emb = make_embedder(cfg)
    if prepare is not None:
        prepare(emb)
    emb = emb.fit(texts)
    bs = max(1, cfg.embeddings.batch_size) * 16
    parts = []
    with stage(progress, "embed", len(texts)) as task:
        for i in range(0, len(texts), bs):
            parts.append(emb.embed(texts[i:i + bs]))
            task.advance(len(texts[i:i + bs]))
    vecs = np.vstack(parts) if parts else np.zeros((0, max(emb.dim, 1)), np.float32)
    return emb, vecs
