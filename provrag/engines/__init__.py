"""Model-backed steps behind one interface: `offline` (default) and `openai`.

Pipelines never call a model directly; they ask `get_engine(cfg)` for an Engine and call
its methods. Each method's input and output shapes are GraphRAG's (extraction records,
report JSON, map points), so the two engines are interchangeable.
"""
from __future__ import annotations

from .base import Engine, Usage  # noqa: F401


def get_engine(cfg: dict) -> Engine:
    name = cfg["llm"]["engine"]
    if name == "offline":
        from .offline import OfflineEngine

        return OfflineEngine(cfg)
    if name == "openai":
        from .openai_engine import OpenAIEngine

        return OpenAIEngine(cfg)
    raise ValueError(f"unknown [llm] engine '{name}' (expected 'offline' or 'openai')")
