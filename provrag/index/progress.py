"""One progress bar per index stage, or none: the stages report the same way either way.

The CLI passes a display (views/progress.py's `StageProgress`); tests, benches and library
callers pass None. Every stage goes through `stage()` so that choice is made in one place
and no stage needs an `if progress` around its work.
"""
from __future__ import annotations

from contextlib import nullcontext


class _Silent:
    """The task of a run nobody watches: advancing it does nothing."""

    def advance(self, n: int = 1) -> None:
        pass


def stage(progress, name: str, total: int | None):
    """`with stage(progress, "extract", n) as task: task.advance()`; `progress` None is silent."""
    if progress is None:
        return nullcontext(_Silent())
    return progress.stage(name, total=total)
