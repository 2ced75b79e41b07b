"""The executor seam: where the index pipeline's per-item work runs.

A stage hands the executor a function and its items (parse a file, chunk a document, embed a
batch, extract a batch of units, write a community report) and gets the results back lazily,
in input order — so the tables a stage builds from them do not depend on which executor ran
it, nor on which worker finished first. Global steps (KNN, PageRank, Leiden, id numbers, BM25
terms, writing) never go through here: they run on the pipeline's machine over the gathered
tables (NN-descent in a child process of its own: index/neighbours.py, for memory, not speed).

Each map names the kind of its items, because they need different places to run:

- "isolated": an item that may kill its process (native parsers) and takes long enough to be
  worth shipping: `local` runs them in worker processes and records a crash against that item
  only; `ray` runs them as Ray tasks.
- "cpu": pure computation over data in memory. `local` runs it in this process, as provrag
  always has; `ray` spreads it over the cluster.
- "model": an item that asks a model server. It runs in this process with either executor:
  the engine's one client there holds the concurrency and rate limit ([llm] concurrency,
  requests_per_minute), so they hold for the whole cluster, not per worker (N workers each
  with their own client would send N times the configured rate). The engine's client spreads
  an item's requests over its own threads.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Self

from provrag.errors import UsageError

KINDS = ("isolated", "cpu", "model")


class Nothing:
    """No `shared` argument (None is a value a caller may share). One object, even after a
    trip through pickle to a worker process and back."""

    def __reduce__(self) -> str:
        return "NOTHING"

    def __repr__(self) -> str:
        return "NOTHING"


NOTHING = Nothing()
CRASHED = "its worker process died"  # the reason failed(item, reason) gets for a native crash


class ExecutorError(UsageError):
    """The executor cannot start: Ray missing, no cluster at the configured address."""


def why(error: BaseException) -> str:
    """What an item's exception says, for failed(item, why): its type and message (the caller
    makes it the one line its table records)."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def call(fn: Callable, shared: Any, item: Any) -> Any:
    """fn(item), or fn(shared, item) when the map shares an object with every item."""
    return fn(item) if shared is NOTHING else fn(shared, item)


def in_this_process(fn: Callable, items: Iterable, shared: Any, failed: Callable | None) -> Iterator:
    """fn over items here, one at a time, in order; an item that raises gives failed(item, why)
    (or the exception, when there is no `failed`). The next item is read only when the caller
    asks for the next result, so memory holds one item at a time."""
    for item in items:
        try:
            result = call(fn, shared, item)
        except Exception as e:
            if failed is None:
                raise
            result = failed(item, why(e))
        yield result


class Executor:
    """Where per-item work runs. `map` is the whole interface; `close` ends what it started."""

    name = "base"
    workers = 1

    def map(self, fn: Callable, items: Iterable, *, kind: str = "cpu", shared: Any = NOTHING,
            failed: Callable[[Any, str], Any] | None = None) -> Iterator:
        """fn(item) — or fn(shared, item) — for every item, yielded in input order.

        `shared`: one object every call needs (a fitted embedder, the engine), sent to each
        worker once per map instead of once per item. `failed(item, reason)`: the result of an
        item whose function raised or whose worker died, so one bad item costs only itself;
        without it the error propagates. `fn` must be importable by name (a module-level
        function) for the items to leave this process."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind of item {kind!r}: one of {', '.join(KINDS)}")
        if kind == "model":
            return in_this_process(fn, items, shared, failed)
        return self.spread(fn, items, kind, shared, failed)

    def spread(self, fn: Callable, items: Iterable, kind: str, shared: Any, failed) -> Iterator:
        """The executor's own way of running "isolated" and "cpu" items (in order)."""
        return in_this_process(fn, items, shared, failed)

    def close(self) -> None:
        """Stop what this executor started (worker processes, a Ray it started itself)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def engine_kind(engine) -> str:
    """"cpu" for the offline engine (pure computation), "model" for one that asks a server."""
    return "cpu" if engine.name == "offline" else "model"


def cached_map(executor: Executor, fn: Callable, items: Iterable, *, kind: str, cache=None,
               key: Callable[[Any], str] | None = None, keep: Callable[[Any], bool] | None = None,
               shared: Any = NOTHING) -> Iterator:
    """Executor.map with a content cache in front: an item whose key(item) the cache holds is
    not computed; the others go to the executor and their results are stored when keep(result)
    says so (a model's stand-in is not: it is asked for again next run). Results come in input
    order; items are read as the executor asks for them, and a cached result waits only for
    the computed ones before it.

    `keep` is called on each computed result as it arrives, before the next item is computed
    in this process ("model" items), so it may compare the engine's counters before and after."""
    order: deque = deque()  # per item read so far: (True, cached result) or (False, its key)
    source = iter(items)

    def misses() -> Iterator:
        for item in source:
            k = key(item) if cache is not None else None
            hit = cache.get(k) if cache is not None else None
            if hit is not None:
                order.append((True, hit))
                continue
            order.append((False, k))
            yield item

    for result in executor.map(fn, misses(), kind=kind, shared=shared):
        while order[0][0]:
            yield order.popleft()[1]
        k = order.popleft()[1]
        if cache is not None and (keep is None or keep(result)):
            cache.put(k, result)
        yield result
    while order:  # the items after the last computed one were all cached
        yield order.popleft()[1]
