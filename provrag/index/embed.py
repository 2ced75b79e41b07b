"""Index stage `embed`: fit the configured embedder on the text units and embed them all."""
from __future__ import annotations

import numpy as np

from provrag.config import Config
from provrag.embeddings import Embedder, make_embedder


def embed_stage(units: list[dict], cfg: Config, progress=None, prepare=None) -> tuple[Embedder, np.ndarray]:
    """Fit the embedder on the units and embed them all (batched for progress).

    `prepare(embedder)` runs before any text is embedded (the pipeline attaches its cache
    and usage counter there).
    """
    texts = [u["text"] for u in units]
    emb = make_embedder(cfg)
    if prepare is not None:
        prepare(emb)
    emb = emb.fit(texts)
    bs = max(1, cfg.embeddings.batch_size) * 16
    parts = []
    if progress:
        with progress.stage("embed", total=len(texts)) as t:
            for i in range(0, len(texts), bs):
                parts.append(emb.embed(texts[i:i + bs]))
                t.advance(len(texts[i:i + bs]))
    else:
        parts = [emb.embed(texts[i:i + bs]) for i in range(0, len(texts), bs)]
    vecs = np.vstack(parts) if parts else np.zeros((0, max(emb.dim, 1)), np.float32)
    return emb, vecs
