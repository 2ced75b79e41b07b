"""Progress of `provrag index` on stderr: the display the CLI passes to the stages.

On a terminal, one rich bar per counted stage. Piped or logged (stderr not a terminal), bars
would show nothing until the end — 13 minutes of an empty log on a large folder — so the run
writes plain lines instead: one when each pipeline stage ends (its seconds, measured around
the whole stage, and what it counted), and while a stage runs, one every `LINE_EVERY` seconds
with its count so far, so a log shows that the run is alive and where it is.
Library callers pass no display at all; provrag/index/progress.py makes that silent.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

LINE_EVERY = 10.0  # seconds between the lines of a running stage in a log
# what each counted stage counts (its `total`), for the lines of a log
UNITS = {"load": "files", "chunk": "documents", "embed": "text units", "skeleton": "steps",
         "extract": "text units", "summarize": "descriptions", "reports": "communities"}


class _Task:
    def __init__(self, progress, task_id):
        self._p, self._id = progress, task_id

    def advance(self, n: int = 1) -> None:
        if self._p is not None:
            self._p.advance(self._id, n)

    def total(self, n: int) -> None:
        if self._p is not None:
            self._p.update(self._id, total=n)


class _Count:
    """A counted stage in a log: how far it is (advanced from the stage's thread, read by the watcher)."""

    def __init__(self, name: str, total: int | None):
        self.name, self.size, self.done = name, total, 0

    def advance(self, n: int = 1) -> None:
        self.done += n

    def total(self, n: int) -> None:
        self.size = n

    def __str__(self) -> str:
        unit = UNITS.get(self.name, "items")
        return f"{self.done}/{self.size} {unit}" if self.size else f"{self.done} {unit}"

    def so_far(self) -> str:
        return f"{self} ({100 * self.done // self.size} %) so far" if self.size else f"{self} so far"


class StageProgress:
    """`with progress.step("extract"):` around a pipeline stage, and inside it
    `with progress.stage("extract", total=n) as task: task.advance()` for what it counts: one bar
    per counted stage on a terminal, plain lines in a log (see the module's docstring)."""

    def __init__(self, console=None, enabled: bool = True, every: float = LINE_EVERY):
        self.console, self.enabled, self._p = console, enabled and console is not None, None
        self.logged = self.enabled and not console.is_terminal
        self.every = every
        self._step: tuple[str, float] | None = None    # the pipeline stage running, since when
        self._counts: list[_Count] = []                # what it has counted so far
        self._last_line = time.perf_counter()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def __enter__(self):
        if self.logged:
            self._watcher = threading.Thread(target=self._watch, daemon=True)
            self._watcher.start()
        elif self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._p = Progress(TextColumn("[bold]{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                               TimeElapsedColumn(), console=self.console, transient=False)
            self._p.__enter__()
        return self

    def __exit__(self, *exc):
        if self._watcher is not None:
            self._stop.set()
            self._watcher.join()
        if self._p is not None:
            self._p.__exit__(*exc)

    # ---- a log: plain lines -------------------------------------------------------------

    def _line(self, text: str) -> None:
        """One line of a log, with the time of day (a long run is read against the clock)."""
        self._last_line = time.perf_counter()
        self.console.print(f"{time.strftime('%H:%M:%S')} index {text}", markup=False, highlight=False,
                           soft_wrap=True)
        self.console.file.flush()

    def _watch(self) -> None:
        """Every `every` seconds without a line while a stage runs: where it is."""
        while not self._stop.wait(min(self.every, 1.0)):
            step = self._step
            if step is None or time.perf_counter() - self._last_line < self.every:
                continue
            name, t0 = step
            counts = self._counts  # read once: the stage's thread may start a new list meanwhile
            now = counts[-1].so_far() if counts else "running"
            self._line(f"{name}: {now}, {time.perf_counter() - t0:.0f} s")

    @contextmanager
    def step(self, name: str):
        """A whole pipeline stage: in a log, one line when it ends (seconds, counts)."""
        if not self.logged:
            yield
            return
        self._step, self._counts = (name, time.perf_counter()), []
        ended = "stopped after"
        try:
            yield
            ended = "done in"
        finally:
            counts = ", ".join(map(str, self._counts))
            self._line(f"{name}: {ended} {time.perf_counter() - self._step[1]:.1f} s" + (f" ({counts})" if counts else ""))
            self._step = None

    # ---- what a stage counts ----------------------------------------------------------------

    @contextmanager
    def stage(self, name: str, total: int | None = None):
        if self.logged:
            count = _Count(name, total)
            self._counts.append(count)
            yield count
            if self._step is None:  # counted outside any step (a library caller): its own line
                self._line(f"{name}: {count}")
            return
        task_id = self._p.add_task(name, total=total) if self._p is not None else None
        t = _Task(self._p, task_id)
        try:
            yield t
        finally:
            if self._p is not None:
                task = self._p.tasks[task_id]
                self._p.update(task_id, total=task.total or task.completed or 1,
                               completed=task.total or task.completed or 1)
