"""How many cores one question's model passes may take right now.

A CLI call answers one question, so its MiniLM pass takes every core (embeddings/minilm.py runs
one batch per core, each with single-threaded BLAS). A server answers several questions at once,
one per compute slot (serve/queue.py: a slot per core); a request that still took every core
while others run beside it would start more threads than there are cores, and threads spinning
for the same two cores finish later than one each. The server therefore sets `share` for each
request to a function giving its part of the cores now: all of them while it runs alone, one
when every slot is busy. Outside a server nothing is set and every core is used, as before.
"""
from __future__ import annotations

from contextvars import ContextVar
from typing import Callable

share: ContextVar[Callable[[], int] | None] = ContextVar("provrag_cores_share", default=None)


def cores_now(every: int) -> tuple[int, bool]:
    """(the cores this question may use now, at most `every`; True when a server limits them)."""
    of = share.get()
    if of is None:
        return every, False
    return max(1, min(every, int(of()))), True
