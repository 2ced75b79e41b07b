"""One progress bar per index stage, or none: the stages report the same way either way.

The CLI passes a display (views/progress.py's `StageProgress`); tests, benches and library
callers pass None. Every counted stage goes through `stage()`, and the pipeline wraps each of
its stages in `step()` (a log says when each ends and how long it took), so that choice is
made in one place and no stage needs an `if progress` around its work.
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


def step(progress, name: str):
    """`with step(progress, "embed"): …` around a whole pipeline stage. A display without
    `step` (None, a test's recorder) ignores it."""
    if getattr(progress, "step", None) is None:
        return nullcontext()
    return progress.step(name)
