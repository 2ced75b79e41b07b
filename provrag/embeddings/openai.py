"""Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (`[embeddings] engine = "openai"`).

Same Embedder interface as the offline ones (provrag/embeddings/__init__.py), so skeleton, retrieval and
queries do not care where vectors come from. Requests go through provrag.engines.openai.client (retries,
Retry-After, rate limit, key scrubbing) and are counted in usage stage "embed". Vectors are
cached per text (key = model + dimensions + text), so adding one document to a folder only
embeds its new units. Only the model name and endpoint are saved with the index — never a
key — so queries embed with the same model the index was built with.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from provrag.store.cache import key_of
from provrag.embeddings.base import Embedder, normalise
from provrag.config import Config
from provrag.engines.base import Usage
from provrag.engines.openai.client import LLMClient


class OpenAIEmbedder(Embedder):
    name = "openai"

    def __init__(self, cfg: Config, usage: Usage | None = None):
        self.cfg = cfg
        s = cfg.embeddings
        self.usage = usage if usage is not None else Usage()
        self.client = LLMClient(cfg, self.usage, "embeddings")
        self.model = s.model
        self.dimensions = s.dimensions
        self.batch_size = max(1, s.batch_size)
        self.dim = self.dimensions
        self.cache = None

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.client.base_url!r})"

    def attach_cache(self, cache) -> None:
        self.cache = cache

    def share_usage(self, usage: Usage) -> None:
        """Count this embedder's requests in another Usage (the engine's, so the manifest has them)."""
        self.usage = usage
        self.client.usage = usage

    def fit(self, texts) -> "OpenAIEmbedder":
        """Nothing to fit: the model is the server's. Only the vector size, when neither
        `dimensions` nor the index says it, is learnt from the first batch (the index stage
        sizes its matrix by `dim` first); with a cache attached that batch is not asked twice."""
        if not self.dim and len(texts):
            self.embed([str(t) for t in texts[:self.batch_size]])
        return self

    def _key(self, text: str) -> str:
        return key_of(self.model, "embedding", self.dimensions, text)

    def embed(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        vecs: list[list[float] | None] = [None] * len(texts)
        todo = []
        for i, t in enumerate(texts):
            hit = self.cache.get(self._key(t)) if self.cache is not None else None
            if isinstance(hit, list) and hit:
                vecs[i] = hit
            else:
                todo.append(i)
        if len(todo) < len(texts):
            self.client._add("embed", cached=len(texts) - len(todo))
        batches = [todo[j:j + self.batch_size] for j in range(0, len(todo), self.batch_size)]

        def one(batch: list[int]):
            got, reason = self.client.embed("embed", [texts[i] for i in batch], self.dimensions)
            if got is None:
                self.client.record_failure("embed", f"batch of {len(batch)} texts", reason)
                return
            self.client.count_item("embed", "by_model")
            for i, v in zip(batch, got):
                vecs[i] = v
                if self.cache is not None:
                    self.cache.put(self._key(texts[i]), v)

        self.client.map(one, batches)
        known = next((len(v) for v in vecs if v), 0)
        if known:
            self.dim = known
        dim = max(self.dim, 1)
        out = np.zeros((len(texts), dim), np.float32)
        for i, v in enumerate(vecs):
            if v and len(v) == dim:
                out[i] = v  # failed texts stay zero vectors: similar to nothing, never a crash
        return normalise(out)

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        s = self.cfg.embeddings
        meta = {"name": self.name, "model": self.model, "dimensions": self.dimensions, "dim": self.dim,
                "base_url": self.client.base_url, "api_key_env": s.api_key_env}
        (folder / "embedder.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, folder: Path, cfg: Config | None = None) -> "OpenAIEmbedder":
        """The index's embedding model; endpoint and key variable from cfg when it configures one."""
        from provrag.config import load_config

        meta = json.loads((Path(folder) / "embedder.json").read_text())
        cfg = cfg if cfg is not None else load_config()
        s = cfg.embeddings
        configured = s.engine == "openai"
        cfg = cfg.replace("embeddings", model=meta["model"], dimensions=meta.get("dimensions", 0),
                          base_url=s.base_url if configured and s.base_url else meta.get("base_url", ""),
                          api_key_env=s.api_key_env if configured else meta.get("api_key_env", s.api_key_env))
        e = cls(cfg)
        e.dim = int(meta.get("dim") or 0)
        return e
