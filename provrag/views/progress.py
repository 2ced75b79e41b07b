"""Progress bars per stage on stderr (rich): the display `provrag index` passes to its stages.

Library callers pass no display at all; provrag/index/progress.py makes that silent.
"""
from __future__ import annotations

from contextlib import contextmanager


class _Task:
    def __init__(self, progress, task_id):
        self._p, self._id = progress, task_id

    def advance(self, n: int = 1) -> None:
        if self._p is not None:
            self._p.advance(self._id, n)

    def total(self, n: int) -> None:
        if self._p is not None:
            self._p.update(self._id, total=n)


class StageProgress:
    """`with progress.stage("load", total=n) as task: task.advance()` — one bar per stage."""

    def __init__(self, console=None, enabled: bool = True):
        self.console, self.enabled, self._p = console, enabled and console is not None, None

    def __enter__(self):
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._p = Progress(TextColumn("[bold]{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                               TimeElapsedColumn(), console=self.console, transient=False)
            self._p.__enter__()
        return self

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.__exit__(*exc)

    @contextmanager
    def stage(self, name: str, total: int | None = None):
        task_id = self._p.add_task(name, total=total) if self._p is not None else None
        t = _Task(self._p, task_id)
        try:
            yield t
        finally:
            if self._p is not None:
                task = self._p.tasks[task_id]
                self._p.update(task_id, total=task.total or task.completed or 1,
                               completed=task.total or task.completed or 1)
