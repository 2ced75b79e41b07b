"""The `ray` executor: "isolated" and "cpu" items as Ray tasks on a cluster.

`[executor] address`: "auto" joins the cluster this machine belongs to (`ray start --head`
ran here), "ray://host:10001" one through Ray Client, "host:port" a cluster's GCS, and ""
starts a Ray of this machine's cores for the run (or `num_workers` of them) and stops it
after. A Ray the caller already started (ray.init before the run: tests, notebooks) is used
as it is and left running.

Why Ray tasks and not Ray Data's map_batches: the per-item stages take Python objects (a
document's text with its page offsets, a batch of (id, text) pairs) and a shared fitted
object (the embedder, the offline engine), and their results must come back in input order
for the tables to be identical to a local run. One task per item (items are already coarse:
a document, 1,024 texts, a batch of ~160 units) with the shared object put into the object
store once per map does exactly that; at most `workers` tasks are in flight, so memory holds
that many items, whatever the corpus. Model calls ("model" items) never come here: they stay
in the driver, under the engine's one concurrency and rate limit (provrag/executors/base.py).

`import ray` happens only in this module, and only when `[executor] kind = "ray"`.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from typing import Any

from provrag.executors.base import CRASHED, NOTHING, Executor, ExecutorError, call, why

INSTALL = "pip install 'provrag[ray]'"


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, address: str = "", workers: int = 0):
        try:
            import ray
        except ImportError:
            raise ExecutorError(f"[executor] kind = \"ray\" needs Ray, which is not installed: {INSTALL}") from None
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            try:
                quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning"}
                if address:
                    ray.init(address=address, **quiet)
                else:  # a new Ray of this machine for the run, even when a cluster runs here
                    ray.init(address="local", num_cpus=workers or None, **quiet)
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = f"at address {address!r}" if address else "on this machine"
                raise ExecutorError(f"cannot start or reach Ray {where}: {' '.join(str(e).split())[:200]} "
                                    "(`ray start --head` starts a cluster; [executor] address = \"\" starts "
                                    "one for the run)") from None
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, min(workers, cluster_cpus) if workers else cluster_cpus)
        self.remote = ray.remote(num_cpus=1, max_retries=0)(call)  # a crash is the item's, not retried

    def spread(self, fn: Callable, items: Iterable, kind: str, shared: Any, failed) -> Iterator:
        ray = self.ray
        shared_ref = shared if shared is NOTHING else ray.put(shared)  # sent to each node once, resolved by Ray
        in_flight: deque = deque()  # (item, its task), in input order
        source = iter(items)
        try:
            while True:
                while len(in_flight) < self.workers:
                    item = next(source, NOTHING)
                    if item is NOTHING:
                        break
                    in_flight.append((item, self.remote.remote(fn, shared_ref, item)))
                if not in_flight:
                    return
                item, task = in_flight.popleft()
                yield self.result(item, task, failed)
        finally:  # a caller that stops reading (Ctrl-C, an error) leaves no task running
            for _, task in in_flight:
                with suppress(Exception):  # finished meanwhile, or Ray already stopping
                    ray.cancel(task, force=True)

    def result(self, item: Any, task, failed) -> Any:
        """The task's result, or failed(item, why) when it raised or its worker died."""
        from ray.exceptions import RayError, RayTaskError

        try:
            return self.ray.get(task)
        except RayError as e:
            cause = e.cause if isinstance(e, RayTaskError) and e.cause is not None else e
            if failed is None:
                raise cause from None
            reason = why(cause) if isinstance(e, RayTaskError) else CRASHED
            return failed(item, reason)

    def close(self) -> None:
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
