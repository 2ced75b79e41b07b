"""Model-backed steps behind one interface: `offline` (default) and `openai`.

Pipelines never call a model directly; they ask `get_engine(cfg)` for an Engine and call
its methods. Each method's input and output shapes are GraphRAG's (extraction records,
report JSON, map points), so the two engines are interchangeable.
"""
from __future__ import annotations

from provrag.config import Config, ConfigError
from provrag.engines.base import Engine


def get_engine(cfg: Config) -> Engine:
    """The engine [llm] engine names; ConfigError for an unknown one or a missing API key."""
    name = cfg.llm.engine
    if name == "offline":
        from provrag.engines.offline import OfflineEngine

        return OfflineEngine(cfg)
    if name == "openai":
        from provrag.engines.openai.engine import OpenAIEngine

        return OpenAIEngine(cfg)
    raise ConfigError(f"unknown [llm] engine '{name}' (expected 'offline' or 'openai')")
