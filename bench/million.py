"""Retrieval at a million text units vs ten thousand: the scaling row of issue 30.

    nice -n 10 .venv/bin/python bench/million.py [--units 10000,1000000] [--work DIR] [--questions 40] [--out FILE]

What it builds. A full index of a million units (load, chunk, skeleton, extraction, communities,
reports) takes hours on two cores, and a question's retrieval reads none of the graph: `build`
writes only what retrieval reads — text_units.parquet, documents.parquet, embeddings.parquet, the
fitted embedder, terms.parquet and INDEX/retrieval/ (postings and IVF) — through provrag's own
stage functions (index/embed.embed_stage, store/terms.write_terms, store/vectors.write_vectors,
index/write.write_frame). The text is real and varied, not one document duplicated: the sentences
of ../shared's texts (bench/big_text.source_texts: the eval split's articles, the novella, the
speech, the SQuAD and manual PDFs), each unit six consecutive sentences from a seeded random place
plus two from anywhere, every sentence with 10 % of its words dropped (seeded), ~100 units a
document. Units are ~150 words (a real unit is ~230): postings per unit are fewer than a real
index's, the vocabulary is the sources' own (~30,000 terms), so common terms have long postings.

What it measures. `measure(index)` asks the SQuAD dev questions (../shared/eval/dev/squad) of the
index, warm (the index opened, one question asked first), and times provrag.query.retrieve's
`retrieve_units` — BM25 + dense + fusion + fetching the units + why — per question: p50 and p90.
Beside it, in the same run: the same questions answered by the scans an index without
INDEX/retrieval/ falls back to (a few questions: at a million units each takes seconds), the dense
channel's recall@100 of the IVF against the exact scan of every vector, and the top-10 overlap of
the fused ranking with and without the IVF. `main` prints the table, the ratio p50(1M) / p50(10k)
(issue 30: ≤ 2) and writes bench/results/million-<date>.json. lane `speed`'s
bench/question_speed.py calls `build` and `measure`.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.big_text import SHARED, source_texts  # noqa: E402

UNITS_PER_DOCUMENT = 100
WORD_DROP = 0.10
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_FRAME = 50_000  # units made into one frame at a time


def sentences(shared: Path = SHARED) -> list[str]:
    """The sources' sentences of 6–60 words, whitespace folded, in source order."""
    out = []
    for text in source_texts(shared):
        for s in _SENTENCE.split(text):
            s = " ".join(s.split())
            if 6 <= len(s.split()) <= 60:
                out.append(s)
    return out


def unit_texts(pool: list[str], n: int, seed: int = 0):
    """n unit texts (see the module docstring), deterministic for a seed."""
    rng = random.Random(seed)
    for _ in range(n):
        start = rng.randrange(len(pool) - 6)
        chosen = pool[start:start + 6] + [pool[rng.randrange(len(pool))] for _ in range(2)]
        yield " ".join(" ".join(w for w in s.split() if rng.random() >= WORD_DROP) for s in chosen)


def _frames(pool: list[str], units: int, seed: int):
    """(documents, text_units) frames of `units` units, ~UNITS_PER_DOCUMENT a document."""
    import polars as pl

    from provrag.index.tables import frame
    from provrag.store import schema

    docs, parts, rows = [], [], []
    for i, text in enumerate(unit_texts(pool, units, seed)):
        d = i // UNITS_PER_DOCUMENT
        if i % UNITS_PER_DOCUMENT == 0:
            docs.append({schema.ID: schema.content_id("document", f"bench-{d:06d}.txt"), "title": f"Bench document {d}",
                         "path": f"bench-{d:06d}.txt", "text": "", "status": schema.STATUS_OK})
            offset = 0
        rows.append({schema.ID: schema.content_id("text_unit", f"bench-{d:06d}.txt", text, str(i)),
                     schema.HRID: i + 1, schema.TEXT: text, schema.DOCUMENT_ID: docs[-1][schema.ID],
                     "page_start": 1 + (i % UNITS_PER_DOCUMENT) // 3, "page_end": 1 + (i % UNITS_PER_DOCUMENT) // 3,
                     "char_start": offset, "char_end": offset + len(text), "n_tokens": len(text.split())})
        offset += len(text) + 1
        if len(rows) == _FRAME:
            parts.append(frame(schema.TEXT_UNITS, rows))
            rows = []
    if rows:
        parts.append(frame(schema.TEXT_UNITS, rows))
    return frame(schema.DOCUMENTS, docs), pl.concat(parts)


def build(out_dir: Path, units: int, seed: int = 0, shared: Path = SHARED) -> dict:
    """Write a retrieval-only index of `units` units into `out_dir` (replaced); returns the
    seconds of each step and the size of each file group (MB)."""
    import numpy as np
    import pyarrow as pa

    from provrag.config import load_config
    from provrag.embeddings.base import EMBEDDER_DIR
    from provrag.index.embed import embed_stage
    from provrag.index.write import write_frame
    from provrag.store import schema
    from provrag.store.terms import write_terms
    from provrag.store.vectors import write_vectors

    out_dir = Path(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    cfg = load_config()
    seconds, t = {}, time.perf_counter()

    def step(name):
        nonlocal t
        seconds[name] = round(time.perf_counter() - t, 1)
        print(f"  {units} units: {name} {seconds[name]} s", file=sys.stderr, flush=True)
        t = time.perf_counter()

    documents, text_units = _frames(sentences(shared), units, seed)
    step("text")
    write_frame(out_dir, schema.DOCUMENTS, documents)
    write_frame(out_dir, schema.TEXT_UNITS, text_units)
    step("write_units")
    emb, vecs = embed_stage(text_units, cfg)
    emb.save(out_dir / EMBEDDER_DIR)
    step("embed")
    ids = text_units[schema.ID].to_list()
    offsets = pa.array(np.arange(0, (len(ids) + 1) * vecs.shape[1], vecs.shape[1], dtype=np.int32))
    table = pa.table({schema.ID: pa.array(ids, pa.string()),
                      "vector": pa.ListArray.from_arrays(offsets, pa.array(vecs.reshape(-1)))},
                     schema=schema.SCHEMAS[schema.EMBEDDINGS])
    import pyarrow.parquet as pq

    pq.write_table(table, out_dir / f"{schema.EMBEDDINGS}.parquet", row_group_size=65_536)
    del table
    step("write_embeddings")
    write_vectors(out_dir, ids, vecs)
    step("ivf")
    del vecs
    write_terms(out_dir, text_units)
    step("terms_and_postings")
    (out_dir / "manifest.json").write_text(json.dumps({"built_by": "bench/million.py", "config": cfg.to_dict(),
                                                       "counts": {"text_units": units, "documents": documents.height}}))

    def mb(paths):
        return round(sum(p.stat().st_size for p in paths if p.is_file()) / 2**20, 1)

    sizes = {"units_and_documents": mb([out_dir / "text_units.parquet", out_dir / "documents.parquet"]),
             "embeddings_parquet": mb([out_dir / "embeddings.parquet"]), "terms_parquet": mb([out_dir / "terms.parquet"]),
             "ivf": mb([p for p in (out_dir / "retrieval").glob("*") if p.name.startswith(("vector", "centroid", "list_"))]),
             "postings": mb([p for p in (out_dir / "retrieval").glob("*") if not p.name.startswith(("vector", "centroid", "list_"))]),
             "embedder": mb(list((out_dir / EMBEDDER_DIR).rglob("*")))}
    return {"units": units, "seconds": seconds, "build_seconds": round(sum(seconds.values()), 1), "mb": sizes}


def questions(shared: Path = SHARED, limit: int = 40) -> list[str]:
    rows = [json.loads(line) for line in (shared / "eval" / "dev" / "squad" / "questions.jsonl").read_text().splitlines() if line.strip()]
    return [r["question"] for r in rows][:limit]


def _timed_retrievals(reader, qs: list[str], cfg) -> tuple[list[float], list[list[str]]]:
    from provrag.query.retrieve import retrieve_units

    times, tops = [], []
    for q in qs:
        t = time.perf_counter()
        r = retrieve_units(reader, q, cfg, k=cfg.search.context_units, pool=cfg.search.candidate_pool)
        times.append((time.perf_counter() - t) * 1000)
        tops.append([c["text_unit_id"] for c in r.candidates])
    return times, tops


class _Without:
    """Within the block, retrieval does not see INDEX/retrieval/ (the fallback scans an older index gets)."""

    def __enter__(self):
        from provrag.store import postings, terms, vectors

        self.saved = (terms.opened_postings, vectors.opened)
        terms.opened_postings = lambda *a, **k: None
        vectors.opened = lambda *a, **k: None

    def __exit__(self, *exc):
        from provrag.store import terms, vectors

        terms.opened_postings, vectors.opened = self.saved


def _p(xs: list[float], q: float) -> float:
    return round(statistics.quantiles(xs, n=100)[int(q) - 1], 1) if len(xs) > 1 else round(xs[0], 1)


def measure(index: Path, n_questions: int = 40, scans: int = 5, shared: Path = SHARED) -> dict:
    """Warm retrieval over `index`: p50/p90 ms with INDEX/retrieval/ and with the fallback scans
    (the first `scans` questions), IVF recall@100 against the exact scan, top-10 overlap."""
    from provrag.config import load_config
    from provrag.query.retrieve import embed_query
    from provrag.store.reader import open_index
    from provrag.store.vectors import opened

    cfg = load_config()
    qs = questions(shared, n_questions)
    out: dict = {"index": str(index), "questions": len(qs)}
    with open_index(index) as reader:
        _timed_retrievals(reader, qs[:1], cfg)  # warm: views, embedder, memory maps
        times, tops = _timed_retrievals(reader, qs, cfg)
        out["retrieve_ms"] = {"p50": _p(times, 50), "p90": _p(times, 90), "mean": round(statistics.mean(times), 1)}
        ann = opened(reader.path)
        recalls = []
        for q in qs:
            vec, _ = embed_query(reader, q)
            got = {u for u, _ in ann.search(vec, 100)}
            exact = {u for u, _ in ann.search(vec, 100, probes=int(ann.meta["lists"]))}
            recalls.append(len(got & exact) / max(len(exact), 1))
        out["ivf"] = ann.describe()
        out["ivf_recall_at_100"] = round(statistics.mean(recalls), 4)
        with _Without():
            _timed_retrievals(reader, qs[:1], cfg)
            old_times, old_tops = _timed_retrievals(reader, qs[:scans], cfg)
        out["scan_retrieve_ms"] = {"p50": _p(old_times, 50), "questions": len(old_times)}
        overlap = [len(set(a[:10]) & set(b[:10])) / max(len(b[:10]), 1) for a, b in zip(tops, old_tops)]
        out["top10_overlap_with_scan"] = round(statistics.mean(overlap), 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", default="10000,1000000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/provrag-million"), help="where the indexes are built (kept)")
    ap.add_argument("--reuse", action="store_true", help="measure indexes already built in --work")
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--scans", type=int, default=5, help="questions timed on the fallback scans")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    sizes = [int(s) for s in a.units.split(",")]
    rep: dict = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                 "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "builds": [], "runs": []}
    for n in sizes:
        idx = a.work / f"idx-{n}"
        if not (a.reuse and (idx / "retrieval" / "vectors.json").is_file()):
            rep["builds"].append(build(idx, n))
    for n in sizes:  # measured one after the other, in one process, after every build
        r = measure(a.work / f"idx-{n}", a.questions, a.scans)
        r["units"] = n
        rep["runs"].append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    rep["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    small, big = rep["runs"][0], rep["runs"][-1]
    rep["ratio_p50"] = round(big["retrieve_ms"]["p50"] / small["retrieve_ms"]["p50"], 2)
    lines = ["| units | retrieve p50 ms | p90 ms | fallback scans p50 ms | IVF | recall@100 | top-10 overlap |",
             "| ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for r in rep["runs"]:
        lines.append(f"| {r['units']} | {r['retrieve_ms']['p50']} | {r['retrieve_ms']['p90']} | "
                     f"{r['scan_retrieve_ms']['p50']} ({r['scan_retrieve_ms']['questions']} q) | {r['ivf']} | "
                     f"{r['ivf_recall_at_100']} | {r['top10_overlap_with_scan']} |")
    lines.append(f"\nretrieve p50 at {big['units']} ÷ at {small['units']}: **{rep['ratio_p50']}** (issue 30: ≤ 2); "
                 f"load average {rep['load_average_at_start']} → {rep['load_average_at_end']}")
    rep["table"] = "\n".join(lines)
    print(rep["table"])
    out = a.out or ROOT / "bench" / "results" / f"million-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rep, indent=1) + "\n")
    return 0 if rep["ratio_p50"] <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
