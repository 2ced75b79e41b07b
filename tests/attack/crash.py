"""kill -9 of `provrag index` aimed at each stage of an update, and what must hold afterwards.

A trial: the index folder holds version A (the index of DOCS before a change); `provrag index
DOCS' --out OUT` starts the update that writes version B; it is killed (SIGKILL, its parser
workers too, as an OOM kill would) at a moment aimed at one window of the run: inside one of the
stages (load … write, found by the log line each stage prints when it ends, then a seeded
fraction of that stage's measured length) or in the commit after the last stage. Then:
- OUT opens and equals A or B, table by table (every parquet file read back and compared,
  every other file byte for byte; the trace log and the reply cache are left out: they
  outlive runs by design);
- the next `provrag index DOCS' --out OUT` takes the lock, finishes (exit 0), and writes B;
- no `.provrag-tmp-` or `.provrag-old-` folder is left beside OUT.
B itself is what an unkilled update of a copy of A writes (a reference run).
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

STAGES = ["load", "chunk", "embed", "skeleton", "extract", "communities", "reports", "write"]
WINDOWS = [*STAGES, "commit"]        # "commit": after the write stage's line, before the run ends
OUTLIVES_RUNS = {"queries", "cache"}  # the trace log and the reply cache: carried across runs


def index_files(folder: Path) -> dict[str, object]:
    """What an index is, file by file: a parquet file as its table, any other file as its bytes
    (manifest.json left out: it names the run and its time)."""
    import pyarrow.parquet as pq

    out: dict[str, object] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if not p.is_file() or rel.parts[0] in OUTLIVES_RUNS or rel.name == "manifest.json":
            continue
        out[str(rel)] = pq.read_table(p) if p.suffix == ".parquet" else p.read_bytes()
    return out


def same_index(a: dict, b: dict) -> list[str]:
    """The files where two indexes differ (empty: the same index)."""
    differ = sorted(set(a) ^ set(b))
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if isinstance(x, bytes) or isinstance(y, bytes):
            if x != y:
                differ.append(name)
        elif not x.equals(y):
            differ.append(name)
    return differ


@dataclass
class Run:
    """One `provrag index` process: when each stage's line came, how it ended."""

    started: float
    lines: dict[str, float] = field(default_factory=dict)
    ended: float | None = None
    code: int | None = None
    stderr: list[str] = field(default_factory=list)


def start_index(command: list[str], docs: Path, out: Path, env: dict, cwd: Path) -> tuple[subprocess.Popen, Run]:
    proc = subprocess.Popen([*command, "index", str(docs), "--out", str(out), "--json"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True, text=True)
    run = Run(started=time.monotonic())

    def read() -> None:
        for line in proc.stderr:
            run.stderr.append(line)
            for stage in STAGES:
                if f"index {stage}: done" in line:
                    run.lines[stage] = time.monotonic()

    threading.Thread(target=read, daemon=True).start()
    return proc, run


def finish(proc: subprocess.Popen, run: Run, timeout: float = 900) -> Run:
    run.code = proc.wait(timeout=timeout)
    run.ended = time.monotonic()
    return run


def timeline(run: Run) -> dict[str, tuple[float, float]]:
    """Each window's (start, length) in seconds from the process start, from a finished run."""
    spans, before = {}, 0.0
    for stage in STAGES:
        at = run.lines[stage] - run.started
        spans[stage] = (before, at - before)
        before = at
    spans["commit"] = (before, run.ended - run.started - before)
    return spans


def kill_group(proc: subprocess.Popen) -> None:
    for target in (lambda: os.kill(proc.pid, signal.SIGKILL), lambda: os.killpg(proc.pid, signal.SIGKILL)):
        try:
            target()
        except ProcessLookupError:
            pass
    proc.wait()


def kill_in_window(command, docs, out, env, cwd, window: str, fraction: float, spans) -> tuple[bool, float]:
    """Start the update and kill it `fraction` into `window` (measured from the line that opens
    the window, so a slow machine shifts the moment with the run). (killed?, seconds after start)."""
    proc, run = start_index(command, docs, out, env, cwd)
    opener = None if window == "load" else (STAGES[STAGES.index(window) - 1] if window in STAGES else "write")
    start, length = spans[window]
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            finish(proc, run)
            return False, time.monotonic() - run.started
        base = run.started if opener is None else run.lines.get(opener)
        if base is not None and time.monotonic() >= base + (start if opener is None else 0) + fraction * length:
            break
        time.sleep(0.005)
    at = time.monotonic() - run.started
    kill_group(proc)
    return True, at


def plan(trials: int, seed: int) -> list[tuple[str, float]]:
    """`trials` (window, fraction) pairs: the windows in turn (each hit), fractions seeded."""
    rng = random.Random(seed)
    return [(WINDOWS[i % len(WINDOWS)], round(rng.uniform(0.0, 1.0), 3)) for i in range(trials)]


def put_in_place(src: Path, out: Path) -> None:
    """OUT becomes a copy of `src` in one atomic swap (a server reading OUT sees one or the other)."""
    from provrag.store import writer

    tmp = out.parent / f".restore-{out.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(*OUTLIVES_RUNS))
    writer.commit(tmp, out)


def leftovers(out: Path) -> list[str]:
    return [p.name for p in out.parent.iterdir() if p.name.startswith((".provrag-tmp-", ".provrag-old-"))]
