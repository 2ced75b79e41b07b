"""The compute slots of a server (asks and verifies) and the bounded queue in front of them.

A crowd must get a fast "come back in N s" (HTTP 429 with Retry-After), never a request that
waits without end: each waiting request holds a thread of the server's pool."""
from __future__ import annotations

import math
import os
import threading
import time
from contextlib import contextmanager

from provrag.cores import share
from provrag.errors import ProvragError


class ServerBusy(ProvragError):
    """Every compute slot is taken and the queue in front of them is full: come back later."""

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ComputeQueue:
    """The compute slots (asks, verifies) and a bounded queue in front of them.

    Hand-written rather than a library: it is a semaphore plus a counter; what it adds is the
    refusal with an estimate of the wait (the mean of recent run times x the queue ahead)."""

    def __init__(self, slots: int, waiting: int, max_wait_s: float = float("inf"), cores: int | None = None):
        self.slots, self.limit, self.max_wait_s = slots, slots + waiting, max_wait_s
        self.semaphore = threading.BoundedSemaphore(slots)
        self.lock = threading.Lock()
        self.admitted = 0              # running + waiting
        self.mean_s = 1.0              # moving mean of a run's seconds (first guess: 1 s)
        self.running = 0               # holding a slot now
        self.cores = max(1, cores if cores is not None else (os.cpu_count() or 1))

    def cores_each(self) -> int:
        """The cores a running request may take now (provrag/cores.py): all while it runs alone,
        an equal part of them when others run beside it (never fewer than one)."""
        return max(1, self.cores // max(1, self.running))

    @contextmanager
    def turn(self):
        with self.lock:
            wait = math.ceil(self.mean_s * (self.admitted - self.slots + 1) / self.slots)
            if self.admitted >= self.limit or (self.admitted >= self.slots and wait > self.max_wait_s):
                raise ServerBusy(f"server busy: {self.admitted} asks and verifies running or waiting; "
                                 f"retry in {max(1, wait)} s", retry_after_s=max(1, wait))
            self.admitted += 1
        try:
            with self.semaphore:
                with self.lock:
                    self.running += 1
                mine = share.set(self.cores_each)
                t0 = time.perf_counter()
                try:
                    yield
                finally:
                    share.reset(mine)
                    with self.lock:
                        self.running -= 1
                took = time.perf_counter() - t0
                with self.lock:
                    self.mean_s = 0.8 * self.mean_s + 0.2 * took
        finally:
            with self.lock:
                self.admitted -= 1
