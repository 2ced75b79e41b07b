"""Exact vs approximate neighbours for the skeleton: recall@k, skeleton overlap, time of each.

    .venv/bin/python bench/ann_quality.py [--docs DIR] [--units 10000,39000] [--k 3] [--out FILE]

The skeleton ranks each document's units over its own KNN graph (provrag/index/skeleton.py);
above `[skeleton] ann_above` units the graph's cosine neighbours come from NN-descent
(provrag/index/neighbours.py) instead of exact block products. This bench takes the first N
text units of a corpus (default: the TeX Live PDFs of bench/scale.py, ~39,000 units, loaded and
chunked by provrag's own stages) as ONE document, the case the threshold is for, and for each N:

- neighbours: the exact and the approximate top-k of every unit (the skeleton's own TF-IDF
  rows), with recall@k = share of the approximate neighbours whose cosine reaches the unit's
  exact k-th best (ties count as found), and the seconds of each. NN-descent's first call in a
  process compiles with numba: that JIT is timed apart, once, on a small slice;
- skeleton: the whole skeleton stage with ann_above = 0 (exact) and = 1 (approximate), the
  overlap of their top-β units (|both| / |exact top-β|) and the seconds of each.
Past the corpus's own units, N is reached with copies of its units with 10 % of their words
dropped (seeded), and the output says how many. Both paths run single-threaded where they can
(NN-descent with one numba thread; the exact products use scipy's single-threaded sparse code).
Prints a table; writes bench/results/ann_quality-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale import DEFAULT_DOCS, ensure_docs

CACHE = ROOT / "bench" / ".corpora" / ".ann-parse-cache"
WORD_DROP = 0.10


def corpus_units(docs: Path) -> list[str]:
    """Text of every unit of the corpus, in file then unit order (parse results cached)."""
    from provrag.config import load_config
    from provrag.index.chunk import chunk_stage
    from provrag.index.load import documents_frame, load_folder
    from provrag.store.cache import Cache

    cfg = load_config()
    documents = documents_frame(load_folder(docs, cfg, cache=Cache(CACHE, namespace="parse")))
    return chunk_stage(documents, cfg)["text"].to_list()


def grown(texts: list[str], n: int, seed: int) -> tuple[list[str], int]:
    """The first n texts; past the real ones, copies with WORD_DROP of their words dropped."""
    out, copies, rng = list(texts[:n]), 0, random.Random(seed)
    while len(out) < n:
        for t in texts[: n - len(out)]:
            out.append(" ".join(w for w in t.split() if rng.random() >= WORD_DROP))
            copies += 1
    return out, copies


def recall_at_k(exact: list, approx: list) -> float:
    """Share of approximate neighbours whose (exact) cosine reaches the unit's k-th exact best."""
    kth: dict[int, float] = {}
    for a, _, w in exact:
        kth[a] = min(w, kth.get(a, w))
    hits = sum(1 for a, _, w in approx if w >= kth[a] - 1e-6)
    return hits / len(exact)


def one_document(texts: list[str]):
    from provrag.index.tables import frame
    from provrag.store import schema

    rows = [{schema.ID: f"u{i:07d}", schema.HRID: i, schema.TEXT: t, schema.DOCUMENT_ID: "bench-document"}
            for i, t in enumerate(texts)]
    return frame(schema.TEXT_UNITS, rows)


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, round(time.perf_counter() - t, 2)


def measure(texts: list[str], n: int, k: int, seed: int) -> dict:
    import polars as pl

    from provrag.config import load_config
    from provrag.index.neighbours import approximate_neighbours, exact_neighbours
    from provrag.index.skeleton import document_vectors, keyword_matrix, skeleton_stage

    units, copies = grown(texts, n, seed)
    vecs = document_vectors(keyword_matrix(units)[0])
    exact, t_exact = timed(exact_neighbours, vecs, k)
    approx, t_approx = timed(approximate_neighbours, vecs, k)
    frame = one_document(units)
    marked = {}
    seconds = {}
    for path, above in (("exact", 0), ("approximate", 1)):
        cfg = load_config(overrides={"skeleton": {"ann_above": above, "knn_k": k}})
        (table, _), seconds[path] = timed(skeleton_stage, frame, None, cfg)
        marked[path] = set(table.filter(pl.col("is_skeleton"))["id"])
    overlap = len(marked["exact"] & marked["approximate"]) / len(marked["exact"])
    return {"units": n, "copies": copies, "k": k, "recall_at_k": round(recall_at_k(exact, approx), 4),
            "exact_knn_s": t_exact, "approximate_knn_s": t_approx, "skeleton_overlap": round(overlap, 4),
            "skeleton_units": len(marked["exact"]), "exact_skeleton_s": seconds["exact"],
            "approximate_skeleton_s": seconds["approximate"]}


def jit_seconds(texts: list[str], k: int) -> float:
    """NN-descent's one-off numba compilation (and import) in this process, on 2,000 units."""
    from provrag.index.neighbours import approximate_neighbours
    from provrag.index.skeleton import document_vectors, keyword_matrix

    vecs = document_vectors(keyword_matrix(texts[:2000])[0])
    return timed(approximate_neighbours, vecs, k)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    ap.add_argument("--units", default="10000,39000", help="comma-separated sizes of the one document")
    ap.add_argument("--k", type=int, default=3, help="neighbours per unit ([skeleton] knn_k)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    ensure_docs(args.docs)
    texts, t_load = timed(corpus_units, args.docs)
    print(f"{len(texts)} units from {args.docs} in {t_load} s", flush=True)
    jit = jit_seconds(texts, args.k)
    print(f"NN-descent first call (numba JIT + import), 2,000 units: {jit} s", flush=True)
    rows = []
    head = (f"{'units':>7} {'copies':>7} {'recall@' + str(args.k):>9} {'exact knn s':>11} {'approx knn s':>12} "
            f"{'overlap':>8} {'top-β':>6} {'exact skel s':>12} {'approx skel s':>13}")
    print(head, flush=True)
    for n in (int(s) for s in args.units.split(",")):
        r = measure(texts, n, args.k, args.seed)
        rows.append(r)
        print(f"{r['units']:>7} {r['copies']:>7} {r['recall_at_k']:>9.3f} {r['exact_knn_s']:>11.1f} "
              f"{r['approximate_knn_s']:>12.1f} {r['skeleton_overlap']:>8.3f} {r['skeleton_units']:>6} "
              f"{r['exact_skeleton_s']:>12.1f} {r['approximate_skeleton_s']:>13.1f}", flush=True)
    out = args.out or ROOT / "bench" / "results" / f"ann_quality-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps({"docs": str(args.docs), "corpus_units": len(texts), "jit_s": jit,
                               "word_drop_of_copies": WORD_DROP, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
