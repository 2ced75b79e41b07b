"""A long-running server keeps its allocators bounded (provrag/serve/memory.py; issue 29, the soak,
where RSS grew 599 → 874 MB in 4 minutes while the memory in use stayed flat).

Each allocator check runs in a fresh interpreter: arenas and freed pages are process-wide state,
and the test process has its own history. Memory sizes, not timings, are asserted."""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from provrag.serve import memory

pytestmark = pytest.mark.skipif(memory.glibc() is None, reason="glibc malloc only (mallopt, malloc_trim)")

# 8 threads that each allocate and free at once, then the number of glibc arenas (malloc_info's
# <heap nr=…> elements): one per thread up to 8 per core unless the process was settled first
ARENAS_SCRIPT = r"""
import ctypes, json, os, sys, tempfile, threading
from provrag.serve import memory
if sys.argv[1] == "settled":
    memory.settle_allocators()
gate = threading.Barrier(8)
def work():
    gate.wait()
    keep = [bytearray(4096) for _ in range(2000)]
    gate.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
path = tempfile.mktemp()
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, f)
libc.fclose(f)
xml = open(path).read()
os.remove(path)
print(json.dumps({"arenas": xml.count("<heap nr=")}))
"""

# 300 MB in 4 KiB blocks, every 64th kept: the rest is freed but cannot be given back from the top
# of the heap, so RSS stays until trim() hands the free pages back
TRIM_SCRIPT = r"""
import json, sys
from provrag.serve import memory
def rss():
    return int([l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1]) // 1024
blocks = [bytearray(4096) for _ in range(75_000)]
kept = blocks[::64]
del blocks
before = rss()
trimmed = memory.trim() if sys.argv[1] == "trim" else False
print(json.dumps({"before": before, "after": rss(), "trimmed": trimmed, "kept": len(kept)}))
"""


# glibc's dynamic threshold: once an 8 MB block (mapped apart) is freed, the threshold climbs to 8 MB
# and a 4 MB block comes from the heap; a settled process maps it apart (mallinfo2's hblkhd)
MMAP_SCRIPT = r"""
import ctypes, json, sys
from provrag.serve import memory
if sys.argv[1] == "settled":
    memory.settle_allocators()
class MI2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI2
big = bytearray(8 << 20)
del big
before = libc.mallinfo2().hblkhd
block = bytearray(4 << 20)
print(json.dumps({"mapped_mb": (libc.mallinfo2().hblkhd - before) / (1 << 20)}))
"""


def run(script: str, arg: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, arg], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-800:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_settled_process_keeps_at_most_two_arenas_whatever_its_threads():
    unsettled = run(ARENAS_SCRIPT, "default")["arenas"]
    settled = run(ARENAS_SCRIPT, "settled")["arenas"]
    assert unsettled > memory.ARENAS, f"the control made {unsettled} arenas: the check would not tell"
    assert settled <= memory.ARENAS


def test_a_settled_process_maps_large_blocks_apart_so_freeing_them_returns_them():
    assert run(MMAP_SCRIPT, "default")["mapped_mb"] < 1        # the control: from the heap
    assert run(MMAP_SCRIPT, "settled")["mapped_mb"] >= 4


def test_trim_gives_the_freed_pages_in_the_middle_of_the_heap_back():
    kept = run(TRIM_SCRIPT, "no-trim")
    trimmed = run(TRIM_SCRIPT, "trim")
    assert kept["after"] > 200, kept              # freed, but still resident without a trim
    assert trimmed["trimmed"] is True
    assert trimmed["after"] < trimmed["before"] - 150, trimmed


def test_provrag_serve_runs_with_settled_allocators_and_a_trimmer(small_served_index, monkeypatch):
    """`provrag serve`'s whole lifetime (uvicorn.run) is inside memory.long_running()."""
    import pyarrow as pa
    import uvicorn

    from provrag.config import load_config
    from provrag.serve.app import serve

    seen = {}

    def fake_run(app, **kw):
        seen["pool"] = pa.default_memory_pool().backend_name
        seen["trimmer"] = any(t.name == "provrag-trim" and t.is_alive() for t in threading.enumerate())

    before = pa.default_memory_pool()
    monkeypatch.setattr(uvicorn, "run", fake_run)
    try:
        serve(small_served_index, load_config())
    finally:
        pa.set_memory_pool(before)
    assert seen == {"pool": "system", "trimmer": True}
    assert not any(t.name == "provrag-trim" for t in threading.enumerate())    # stopped with the server


# `provrag serve` as typed, uvicorn.run replaced by a read of the index's text units: which pool
# pyarrow's C++ side used (mimalloc's peak stays 0 when it is the system allocator)
SERVE_SCRIPT = r"""
import json, sys
import uvicorn
index = sys.argv[1]
def fake_run(app, **kw):
    import pyarrow as pa, pyarrow.parquet as pq
    pq.read_table(index + "/text_units.parquet")
    print(json.dumps({"mimalloc_peak": pa.mimalloc_memory_pool().max_memory()}))
uvicorn.run = fake_run
from provrag.cli import main
sys.argv = ["provrag", "serve", "--index", index]
try:
    main()
except SystemExit:
    pass
"""


def test_provrag_serve_puts_pyarrow_on_the_system_allocator_before_importing_it(small_served_index,
                                                                                 monkeypatch):
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    assert run(SERVE_SCRIPT, str(small_served_index))["mimalloc_peak"] == 0


def test_the_trimmer_trims_until_stopped():
    trimmer = memory.Trimmer(every_s=0.01).start()
    try:
        for _ in range(500):
            if trimmer.trims >= 3:
                break
            threading.Event().wait(0.01)
    finally:
        trimmer.stop()
    assert trimmer.trims >= 3
    assert not trimmer.thread.is_alive()


def test_a_page_image_opens_no_second_database(small_served_index, small_corpus, monkeypatch):
    """The soak draws ~1 page image a second: each used to open the whole index again (a DuckDB
    database, every table described) only to read manifest.json. It now borrows nothing but the
    manifest; the drawing is the same as the report's."""
    from provrag.audit.pages import render_page
    from provrag.config import load_config
    from provrag.serve.service import IndexService
    from provrag.store import reader as reader_module

    service = IndexService(small_served_index, load_config())
    opened = []
    real_open = reader_module.open_index
    monkeypatch.setattr(reader_module, "open_index", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    try:
        drawn = service.page_image("R-FAQ", 1)
    finally:
        service.close()
    assert opened == []
    assert drawn["png"] == render_page(small_corpus / "R-FAQ.pdf", 1, None)["png"]
