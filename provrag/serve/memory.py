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
M_TRIM_THRESHOLD = -1
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


# one question's process: blocks this large (a reader run's arena chunks, MiniLM's attention scores)
# get a mapping of their own, returned at free; smaller ones are reused from the heap, where the
# server's 512 KiB threshold made MiniLM's per-block temporaries a fresh zeroed mapping each
ONE_QUESTION_MMAP_THRESHOLD = 16 * 1024 * 1024
# a fixed mmap threshold also fixes the trim threshold (at 128 KiB): the heap's top was given back
# and faulted in again around every pass (sys time); twice the mmap threshold, as glibc's dynamic rule
ONE_QUESTION_TRIM_THRESHOLD = 32 * 1024 * 1024


def settle_one_question() -> dict:
    """Set up a CLI process that answers one question (`ask`, `verify`) so its peak RSS is its
    largest stage, not the sum of them. Measured on the sample index (cold ask, issue 30): the
    reader's arena (~70 MB, held by onnxruntime after its runs), MiniLM's activations from its
    pool threads' own glibc arenas and the weights were all resident at once, ~435 MB at the
    peak; two glibc arenas, a fixed 16 MiB mmap threshold (32 MiB trim threshold), pyarrow on
    the system allocator and the reader's arena shrunk after each run (learned/reader.py) bring
    it to ~340 MB at the same CPU time (bench/results/cold-2026-11-27.md). Allocation only:
    every number computed is the same. Call it before pyarrow is imported. Returns what was done."""
    from provrag.learned import reader

    prefer_system_pool()
    done = {"glibc_arenas": None, "glibc_mmap_threshold": None, "reader_arena": reader.free_arena_after_runs()}
    libc = glibc()
    if libc is not None and libc.mallopt(M_ARENA_MAX, ARENAS) == 1:
        done["glibc_arenas"] = ARENAS
    if libc is not None and libc.mallopt(M_MMAP_THRESHOLD, ONE_QUESTION_MMAP_THRESHOLD) == 1:
        done["glibc_mmap_threshold"] = ONE_QUESTION_MMAP_THRESHOLD
        libc.mallopt(M_TRIM_THRESHOLD, ONE_QUESTION_TRIM_THRESHOLD)
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
