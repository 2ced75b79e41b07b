"""The `local` executor (the default): this machine, as provrag has always run.

"isolated" items (parsing) run in a pool of `workers` spawned processes, longest first as the
caller orders them; "cpu" and "model" items run in this process. Why not a process pool for
"cpu" items too: they are cheap per item (chunk a document, embed a batch, an offline
extraction batch) and their inputs and outputs are large, so pickling them to another process
and back costs about what the second core saves on the 2-core machines provrag is measured on
(bench/ray_speed.py has the figures); a Ray cluster is the way to spread them.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from provrag.executors.base import CRASHED, Executor, call, in_this_process, why


def ping() -> bool:
    """A no-op a fresh worker runs to show worker processes work here at all."""
    return True


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, workers: int = 0):
        self.workers = workers if workers > 0 else (os.cpu_count() or 1)

    def spread(self, fn: Callable, items: Iterable, kind: str, shared: Any, failed) -> Iterator:
        if kind != "isolated":
            return in_this_process(fn, items, shared, failed)
        items = list(items)
        if self.workers <= 1 or len(items) <= 1:
            return in_this_process(fn, items, shared, failed)
        return in_processes(fn, items, shared, failed, self.workers)


def in_processes(fn: Callable, items: list, shared: Any, failed, workers: int) -> Iterator:
    """fn over items in `workers` spawned processes, results in input order.

    A function that kills its worker (a native crash) breaks the pool: every item whose result
    was lost with it then runs alone in a fresh single-worker pool, so only the item that
    crashes is failed(item, CRASHED). If worker processes cannot run here at all (a fresh one
    fails a no-op), those items run in this process instead."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn")  # fork is unsafe once rich's refresh thread is running
    pool = ProcessPoolExecutor(max_workers=min(workers, len(items)), mp_context=ctx)
    workers_run: list[bool] = []  # known once the pool broke: can a fresh worker run a no-op?
    try:
        futures = [pool.submit(call, fn, shared, item) for item in items]
        for item, fut in zip(items, futures):
            try:
                try:
                    result = fut.result()
                except BrokenProcessPool:  # lost with the pool: this item again, on its own
                    if not workers_run:
                        workers_run.append(alone(ping) is not BrokenProcessPool)
                    result = alone(call, fn, shared, item) if workers_run[0] else call(fn, shared, item)
                    if result is BrokenProcessPool:
                        raise WorkerDied(CRASHED) from None
            except Exception as e:
                if failed is None:
                    raise
                result = failed(item, CRASHED if isinstance(e, WorkerDied) else why(e))
            yield result
    finally:  # on Ctrl-C, an error or a caller that stops reading: queued items are dropped
        pool.shutdown(wait=True, cancel_futures=True)


class WorkerDied(RuntimeError):
    """An item's worker process died (a native crash) even when it ran alone."""


def alone(fn: Callable, *args):
    """fn(*args) in a fresh single-worker process pool; BrokenProcessPool (the class) when the
    worker died."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
            return pool.submit(fn, *args).result()
    except BrokenProcessPool:
        return BrokenProcessPool
