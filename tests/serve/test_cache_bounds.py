"""A long-running server's per-process caches stop growing: what the judge keeps of the texts it
has read is bounded in memory, not only in entries (issue 30: server RSS over 10,000 requests).

The judge's analysis of a text (engines/offline/judge/analysis.py) weighs ~31 KB for a text unit's
worth of text; kept for 20,000 texts it could hold ~600 MB, and a server verifying answers over a
large index reads that many distinct units and spans. Memory is measured with tracemalloc: what
the cache retains after reading more texts than it keeps, and after as many again."""
from __future__ import annotations

import gc
import tracemalloc

from provrag.engines.offline.judge.analysis import analyse

TEXT_CHARS = 400       # a passage of a few sentences (a third of a text unit)
STEP = 7               # windows this far apart: every one a distinct text


def windows(text: str, start: int, n: int) -> list[str]:
    return [text[i:i + TEXT_CHARS] for i in range(start * STEP, (start + n) * STEP, STEP)]


def retained_after(read, texts: list[str]) -> int:
    for t in texts:
        read(t)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_the_judges_analyses_stop_growing_once_the_cache_is_full(small_corpus):
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    n = 2_200
    assert len(text) > 2 * n * STEP + TEXT_CHARS
    analyse.cache_clear()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        first = retained_after(analyse, windows(text, 0, n)) - base
        second = retained_after(analyse, windows(text, n, n)) - base
    finally:
        tracemalloc.stop()
        analyse.cache_clear()
    assert first > 0
    assert second < first * 1.15, f"{first >> 20} MB kept for {n} texts, then {second >> 20} MB for {2 * n}"
