"""The embedder interface shared by every embedder (TF-IDF, MiniLM, a server's), and the
folder an index keeps its fitted embedder in (so queries are embedded the way units were)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

EMBEDDER_DIR = "embedder"


def normalise(m: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero): cosine is then a dot product."""
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


class Embedder:
    name = "base"
    dim = 0
    # fitted on the corpus (vocabulary, idf, basis): a unit's vector depends on every other
    # unit, so an index update re-embeds all; False: a text's vector is its own (reusable)
    corpus_fitted = False

    def fit(self, texts: list[str]) -> "Embedder":
        return self

    def embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def save(self, folder: Path) -> None:
        raise NotImplementedError
