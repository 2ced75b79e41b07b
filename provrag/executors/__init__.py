"""Executors: where the index pipeline's per-item work runs (`[executor] kind`).

`local` (the default) is this machine as provrag always ran: parsing in worker processes,
everything else in this process. `ray` runs parsing and the other computation as Ray tasks;
Ray is imported only when it is chosen. The interface and the kinds of items are in base.py.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.executors.base import (
    KINDS,
    Executor,
    ExecutorError,
    cached_map,
    engine_kind,
)

__all__ = ["KINDS", "Executor", "ExecutorError", "cached_map", "default_executor", "engine_kind", "make_executor"]


def default_executor(cfg: Config) -> Executor:
    """The local executor with the run's worker count: `[executor] num_workers`, or when 0
    (auto) `[load] workers` (0 there: one per CPU)."""
    from provrag.executors.local import LocalExecutor

    return LocalExecutor(cfg.executor.num_workers or cfg.load.workers)


def make_executor(cfg: Config) -> Executor:
    """The executor `[executor]` names, started (Ray joined or started); close it after the run
    (it is a context manager)."""
    if cfg.executor.kind == "ray":
        from provrag.executors.ray import RayExecutor

        return RayExecutor(cfg.executor.address, cfg.executor.num_workers)
    return default_executor(cfg)
