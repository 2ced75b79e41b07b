"""The compute slots of a server (asks and verifies) and the bounded queue in front of them.

A crowd must get a fast "come back in N s" (HTTP 429 with Retry-After), never a request that
waits without end: each waiting request holds a thread of the server's pool."""
from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager

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

    def __init__(self, slots: int, waiting: int, max_wait_s: float = float("inf")):
        self.slots, self.limit, self.max_wait_s = slots, slots + waiting, max_wait_s
        self.semaphore = threading.BoundedSemaphore(slots)
        self.lock = threading.Lock()
        self.admitted = 0              # running + waiting
        self.mean_s = 1.0              # moving mean of a run's seconds (first guess: 1 s)

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
                t0 = time.perf_counter()
                yield
                took = time.perf_counter() - t0
                with self.lock:
                    self.mean_s = 0.8 * self.mean_s + 0.2 * took
        finally:
            with self.lock:
                self.admitted -= 1
