"""Memory of a long-running server: the allocator settings that keep its RSS flat (issue 29, the soak).

Measured on the soak (32 clients, ~9,500-unit index, bench/soak.py): the memory Python and the
libraries *hold* stayed flat (glibc's mallinfo2 "in use" ~125 MB all along), while RSS grew
~1 MB/s. What grew was memory *freed but kept* by the allocators:
- glibc malloc gives each of the server's ~40 threads an arena (up to 8 per core), and a freed
  chunk in the middle of an arena is never returned to the system: ~300 MB free in arenas after
  two minutes, growing. Two arenas (M_ARENA_MAX) and a periodic malloc_trim(0), which hands the
  free pages of every arena back (madvise), keep it bounded;
- glibc's mmap threshold is dynamic: after the first large block is freed it climbs (up to 32 MB),
  so the MiniLM encoder's activations (a few MB each) were carved from the arenas and fragmented
  them (the main heap grew 95 → 220 MB under two arenas and trims). A fixed 512 KiB threshold
  sends every block that large to its own mapping, returned at free: the main heap stayed at
  ~65 MB and the arenas' total did not move (encoding ~5 % slower, within the machine's noise);
- pyarrow's default pool (mimalloc) reserves a 1 GiB region whose resident part grew 37 → 76 MB
  in two minutes of trace reads and writes while it reported 0 bytes allocated: a server sends
  pyarrow to the system allocator (trimmed as above). pyarrow's C++ side picks its pool once, from
  ARROW_DEFAULT_MEMORY_POOL, when pyarrow is first imported (provrag.serve.app imports it), so
  the commands call prefer_system_pool() before importing the server;
DuckDB's own buffer memory (duckdb_memory()) stayed at 0-40 MB and needs nothing.

By hand (ctypes) rather than a library: mallopt and malloc_trim are two libc calls; no maintained
package wraps them. Elsewhere (musl, macOS) the glibc part is skipped (settle_allocators says None).
"""
from __future__ import annotations

import ctypes
import logging
import os
import threading
from contextlib import contextmanager
from functools import lru_cache

M_ARENA_MAX = -8          # mallopt parameter numbers (glibc malloc.h)
M_MMAP_THRESHOLD = -3
ARENAS = 2                # glibc arenas for the whole process (default: 8 per core)
MMAP_THRESHOLD = 512 * 1024   # blocks this large get a mapping of their own (default: dynamic)
TRIM_EVERY_S = 5.0        # how often free arena pages go back to the system (a trim: 2-90 ms on the busy soak)

log = logging.getLogger("provrag.serve")


@lru_cache(maxsize=1)
def glibc():
    """The C library when it is glibc (it has mallopt and malloc_trim), else None (looked up once:
    the symbols of the running process, no search for a library file)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if not all(hasattr(libc, f) for f in ("mallopt", "malloc_trim", "gnu_get_libc_version")):
        return None
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


def prefer_system_pool() -> None:
    """pyarrow's C++ allocations on the system allocator: effective only before pyarrow is imported
    (`provrag serve` and `provrag mcp` call it first); a value the user set is kept."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def settle_allocators(arenas: int = ARENAS) -> dict:
    """Set the process up for serving (before its worker threads start): at most `arenas` glibc
    arenas, large blocks mapped apart, pyarrow on the system allocator. Returns what was done
    (logged at start)."""
    done = {"glibc_arenas": None, "glibc_mmap_threshold": None, "pyarrow_pool": None}
    libc = glibc()
    if libc is not None and libc.mallopt(M_ARENA_MAX, arenas) == 1:
        done["glibc_arenas"] = arenas
    if libc is not None and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1:
        done["glibc_mmap_threshold"] = MMAP_THRESHOLD
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    done["pyarrow_pool"] = pa.default_memory_pool().backend_name
    return done


def trim() -> bool:
    """Give the free pages of every malloc arena back to the system; True when some were."""
    libc = glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


class Trimmer:
    """A daemon thread calling trim() every `every_s` seconds until stop()."""

    def __init__(self, every_s: float = TRIM_EVERY_S):
        self.every_s = every_s
        self.stopping = threading.Event()
        self.trims = 0
        self.thread = threading.Thread(target=self.run, name="provrag-trim", daemon=True)

    def run(self) -> None:
        while not self.stopping.wait(self.every_s):
            trim()
            self.trims += 1

    def start(self) -> "Trimmer":
        if glibc() is not None:
            self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)


@contextmanager
def long_running(every_s: float = TRIM_EVERY_S):
    """Around a server's lifetime: allocators settled first, free memory trimmed periodically."""
    done = settle_allocators()
    log.info("allocators for serving: %s", done)
    trimmer = Trimmer(every_s).start()
    try:
        yield done
    finally:
        trimmer.stop()
