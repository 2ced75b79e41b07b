"""Embedders for text units and queries: which one a config asks for, and which one an index
was built with. TF-IDF + LSA (tfidf.py) is the default; MiniLM (minilm.py) runs shipped
all-MiniLM-L6-v2 weights with numpy; openai.py calls a server's /v1/embeddings."""
from __future__ import annotations

import json
from pathlib import Path

from provrag.config import Config, ConfigError
from provrag.embeddings.base import EMBEDDER_DIR, Embedder


def make_embedder(cfg: Config) -> Embedder:
    """The embedder [embeddings] engine names: "tfidf", "minilm" or "openai"."""
    name = cfg.embeddings.engine
    if name == "tfidf":
        from provrag.embeddings.tfidf import TfidfEmbedder

        return TfidfEmbedder(cfg.embeddings.lsa_dimensions, cfg.embeddings.max_vocabulary)
    if name == "minilm":
        from provrag.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder(cfg.embeddings.batch_size)
    if name == "openai":
        from provrag.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(cfg)
    raise ConfigError(f"unknown [embeddings] engine '{name}' (expected 'tfidf', 'minilm' or 'openai')")


def load_embedder(index_dir: Path, cfg: Config | None = None) -> Embedder | None:
    """The embedder an index was built with, ready to embed queries; None if it has none."""
    folder = Path(index_dir) / EMBEDDER_DIR
    meta_file = folder / "embedder.json"
    if not meta_file.exists():
        return None
    name = json.loads(meta_file.read_text()).get("name")
    if name == "tfidf":
        from provrag.embeddings.tfidf import TfidfEmbedder

        return TfidfEmbedder.load(folder)
    if name == "minilm":
        from provrag.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder.load(folder)
    if name == "openai":
        from provrag.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder.load(folder, cfg)
    return None
