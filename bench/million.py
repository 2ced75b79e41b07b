"""Retrieval at a million text units vs ten thousand: the scaling row of issue 30.

    nice -n 10 .venv/bin/python bench/million.py [--units 10000,1000000] [--work DIR] [--questions 40] [--out FILE]

What it builds. A full index of a million units (load, chunk, skeleton, extraction, communities,
reports) takes hours on two cores, and a question's retrieval reads none of the graph: `build`
writes only what retrieval reads — text_units.parquet and documents.parquet (index/write.write_frame),
embeddings.parquet, the fitted embedder (index/embed.embed_stage), INDEX/retrieval/'s postings, IVF and
each unit's previous and next unit (store/postings.write_postings, store/vectors.write_vectors,
store/neighbours.write_unit_neighbours, as index/write.py writes them: without the last, an ask's
neighbouring-unit lookups fall back to a SQL window over the units' documents, a path real indexes
no longer take) — and no terms.parquet (the postings answer BM25 alone; its SQL fallback is
measured on the real dev indexes by bench/retrieval_parity.py).
The text is real and varied, not one document duplicated: the sentences of ../shared's texts
(bench/big_text.source_texts: the eval split's articles, the novella, the speech, the SQuAD and manual
PDFs, ~10,000 sentences), each unit six consecutive sentences from a seeded random place plus two
from anywhere, 100 units a document. To fit two shared cores the per-unit work is done per sentence:
each sentence is tokenized once by store/terms.py's tokenizer and a unit's term counts are its
sentences' summed (exactly what tokenizing the unit gives); the embedder is fitted on the sentences
and a unit's vector is the normalised sum of its sentences' vectors (TF-IDF's log tf and bigrams
across sentences make it differ from embedding the unit's text: the vectors are real-text LSA vectors
of the same kind, which is what the IVF's speed and recall depend on). Units are ~170 words (a real
one ~230).

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
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def sentences(shared: Path = SHARED) -> list[str]:
    """The sources' sentences of 6–60 words, whitespace folded, in source order."""
    out = []
    for text in source_texts(shared):
        for s in _SENTENCE.split(text):
            s = " ".join(s.split())
            if 6 <= len(s.split()) <= 60:
                out.append(s)
    return out


def compose(n_sentences: int, units: int, seed: int = 0):
    """Which sentences make each unit: a units × 8 matrix of sentence numbers, six consecutive
    from a seeded random place and two from anywhere (numpy's seeded generator)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    start = rng.integers(0, n_sentences - 6, size=units)
    return np.concatenate([start[:, None] + np.arange(6), rng.integers(0, n_sentences, size=(units, 2))], axis=1)


def _sentence_terms(pool: list[str]):
    """Each sentence's terms (store/terms.py's tokenizer) as CSR arrays over the sorted vocabulary."""
    from collections import Counter

    import numpy as np

    from provrag.text.words import terms_of

    counts = [Counter(terms_of(x)) for x in pool]
    vocabulary = sorted({t for c in counts for t in c})
    place = {t: i for i, t in enumerate(vocabulary)}
    lengths = np.array([len(c) for c in counts], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    codes = np.array([place[t] for c in counts for t in c], np.int64)
    tfs = np.array([v for c in counts for v in c.values()], np.int64)
    return vocabulary, offsets, codes, tfs


def _postings(pool: list[str], which, rank):
    """The term table of the units, numbered (term place, unit place in sorted ids, tf, dl) and
    sorted by term then unit: the sentences' term counts summed per unit, in numpy."""
    import numpy as np
    import polars as pl

    vocabulary, offsets, codes, tfs = _sentence_terms(pool)
    n, per = which.shape
    per_sentence = offsets[1:] - offsets[:-1]
    sentence_length = np.bincount(np.repeat(np.arange(len(per_sentence)), per_sentence), weights=tfs,
                                  minlength=len(per_sentence))
    dl = np.zeros(n, np.int32)
    dl[rank] = sentence_length[which].sum(axis=1)                  # by place in the sorted ids
    lengths = per_sentence[which]                                  # units × 8: terms of each sentence
    flat = lengths.ravel()
    first = np.repeat(offsets[:-1][which.ravel()] - np.concatenate([[0], np.cumsum(flat)[:-1]]), flat)
    entry = first + np.arange(int(flat.sum()))                     # each (unit, sentence term) → row of codes
    units = np.repeat(np.repeat(rank, per), flat)
    key = codes[entry] * n + units
    del first
    order = np.argsort(key, kind="stable")
    key, tf = key[order], tfs[entry][order]
    del order, entry, units
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    tf = np.add.reduceat(tf, starts).astype(np.int32)
    key = key[starts]
    unit = (key % n).astype(np.uint32)
    ranked = pl.DataFrame({"term": (key // n).astype(np.uint32), "unit": unit, "tf": tf,
                           "dl": dl[unit]})
    return ranked, vocabulary


def _frames(pool: list[str], which, seed: int):
    """(documents, text_units) frames: unit texts joined from their sentences, ~UNITS_PER_DOCUMENT a document."""
    import hashlib

    import numpy as np
    import polars as pl

    from provrag.index.tables import frame
    from provrag.store import schema

    n = len(which)
    texts = [" ".join(pool[j] for j in row) for row in which.tolist()]
    doc = np.arange(n) // UNITS_PER_DOCUMENT
    doc_ids = [schema.content_id("document", f"bench-{d:06d}.txt") for d in range(int(doc[-1]) + 1)]
    ids = [hashlib.sha256(f"bench {seed} {i} {t}".encode()).hexdigest() for i, t in enumerate(texts)]
    size = np.array([len(t) + 1 for t in texts], np.int64)
    first_of_doc = np.arange(n) % UNITS_PER_DOCUMENT == 0
    ends = np.cumsum(size)
    starts = ends - size
    starts -= np.maximum.accumulate(np.where(first_of_doc, starts, 0))
    page = 1 + (np.arange(n) % UNITS_PER_DOCUMENT) // 3
    empty = frame(schema.TEXT_UNITS, [])
    units = pl.DataFrame({schema.ID: ids, schema.HRID: np.arange(1, n + 1), schema.TEXT: texts,
                          schema.DOCUMENT_ID: [doc_ids[d] for d in doc.tolist()], "page_start": page, "page_end": page,
                          "char_start": starts, "char_end": starts + size - 1})
    units = pl.concat([empty, units], how="diagonal_relaxed").select(empty.columns)
    docs = frame(schema.DOCUMENTS, [{schema.ID: d, "title": f"Bench document {i}", "path": f"bench-{i:06d}.txt",
                                     "text": "", "status": schema.STATUS_OK} for i, d in enumerate(doc_ids)])
    return docs, units


def build(out_dir: Path, units: int, seed: int = 0, shared: Path = SHARED) -> dict:
    """Write a retrieval-only index of `units` units into `out_dir` (replaced); returns the
    seconds of each step and the size of each file group (MB)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from provrag.config import load_config
    from provrag.embeddings.base import EMBEDDER_DIR, normalise
    from provrag.index.embed import embed_stage
    from provrag.index.write import write_frame
    from provrag.store import schema
    from provrag.store.neighbours import NEIGHBOURS, write_unit_neighbours
    from provrag.store.postings import write_postings
    from provrag.store.terms import TOKENIZER
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

    pool = sentences(shared)
    which = compose(len(pool), units, seed)
    documents, text_units = _frames(pool, which, seed)
    write_frame(out_dir, schema.DOCUMENTS, documents)
    write_frame(out_dir, schema.TEXT_UNITS, text_units)
    step("units")
    write_unit_neighbours(out_dir, text_units)  # as index/write.write_index does, from the frame as written
    step("neighbours")
    from provrag.index.tables import frame

    sentence_frame = frame(schema.TEXT_UNITS, [{schema.ID: f"s{i}", schema.TEXT: x} for i, x in enumerate(pool)])
    emb, sentence_vectors = embed_stage(sentence_frame, cfg)
    emb.save(out_dir / EMBEDDER_DIR)
    vecs = np.zeros((units, sentence_vectors.shape[1]), np.float32)
    for s in range(0, units, 65_536):
        vecs[s:s + 65_536] = normalise(sentence_vectors[which[s:s + 65_536]].sum(axis=1))
    ids = text_units[schema.ID].to_list()
    step("embed")
    offsets = pa.array(np.arange(0, (units + 1) * vecs.shape[1], vecs.shape[1], dtype=np.int32))
    pq.write_table(pa.table({schema.ID: pa.array(ids, pa.string()),
                             "vector": pa.ListArray.from_arrays(offsets, pa.array(vecs.reshape(-1)))},
                            schema=schema.SCHEMAS[schema.EMBEDDINGS]), out_dir / f"{schema.EMBEDDINGS}.parquet",
                   row_group_size=65_536)
    step("write_embeddings")
    write_vectors(out_dir, ids, vecs)
    step("ivf")
    del vecs
    keys = np.asarray([i.encode() for i in ids], dtype=bytes)
    rank = np.empty(units, np.int64)
    rank[np.argsort(keys)] = np.arange(units)
    ranked, vocabulary = _postings(pool, which, rank)
    total = int(ranked.unique("unit")["dl"].sum())
    write_postings(out_dir, ranked, sorted(ids), vocabulary,
                   {"n_units": units, "avgdl": total / units, "tokenizer": TOKENIZER}, ids)
    step("postings")
    (out_dir / "manifest.json").write_text(json.dumps({"built_by": "bench/million.py", "config": cfg.to_dict(),
                                                       "counts": {"text_units": units, "documents": documents.height}}))

    def mb(paths):
        return round(sum(p.stat().st_size for p in paths if p.is_file()) / 2**20, 1)

    retrieval = list((out_dir / "retrieval").glob("*"))
    ivf = [p for p in retrieval if p.name.startswith(("vector", "centroid", "list_"))]
    beside = [out_dir / "retrieval" / NEIGHBOURS]
    sizes = {"units_and_documents": mb([out_dir / "text_units.parquet", out_dir / "documents.parquet"]),
             "embeddings_parquet": mb([out_dir / "embeddings.parquet"]), "ivf": mb(ivf),
             "neighbours": mb(beside), "postings_and_ids": mb([p for p in retrieval if p not in ivf + beside]),
             "embedder": mb(list((out_dir / EMBEDDER_DIR).rglob("*")))}
    return {"units": units, "sentences": len(pool), "seconds": seconds, "build_seconds": round(sum(seconds.values()), 1),
            "mb": sizes}


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


class WithoutRetrievalFiles:
    """Within the block, retrieval does not see INDEX/retrieval/ (the fallback scans an older index gets)."""

    def __enter__(self):
        from provrag.store import postings, terms, vectors

        self.saved = (terms.opened_postings, vectors.opened, postings.row_positions)
        terms.opened_postings = vectors.opened = postings.row_positions = lambda *a, **k: None

    def __exit__(self, *exc):
        from provrag.store import postings, terms, vectors

        terms.opened_postings, vectors.opened, postings.row_positions = self.saved


def _p(xs: list[float], q: float) -> float:
    return round(statistics.quantiles(xs, n=100)[int(q) - 1], 1) if len(xs) > 1 else round(xs[0], 1)


def warm_asks(reader, index: Path, qs: list[str], cfg) -> dict:
    """The whole warm `ask` (basic search: this index has no graph; not saved) per question, ms.
    The reader keeps the unit rows it reads, as the one a server lends does (serve/opened.py: one
    store/units.KeptUnits per index version; a one-shot ask gives its own reader one too): without
    it, each of an ask's five or six fetches of the same units (retrieval, context, citations, the
    check) scans text_units' million ids again, a path no real ask takes (~0.8 s of an ask at 1M)."""
    from provrag.pipelines.ask import run_ask
    from provrag.store.units import KeptUnits

    saved = getattr(reader, "kept_units", None)
    reader.kept_units = KeptUnits()
    times = []
    try:
        for q in qs:
            t = time.perf_counter()
            run_ask(q, index, cfg, method="basic", save=False, reader=reader)
            times.append((time.perf_counter() - t) * 1000)
    finally:
        reader.kept_units = saved
    return {"p50": _p(times[1:], 50), "questions": len(times) - 1}  # the first one warms the models


def measure(index: Path, n_questions: int = 40, scans: int = 5, shared: Path = SHARED, asks: int = 0) -> dict:
    """Warm retrieval over `index` (see the module docstring): p50/p90 ms of retrieve_units; the
    IVF's recall@100 against the exact scan of every vector; the fused top-10's overlap with the
    exact scan's; the SQL scan of embeddings.parquet alone (the dense channel of an index without
    INDEX/retrieval/) on the first `scans` questions; and the whole fallback when the index has a
    terms.parquet (bench/million's own indexes have none: their BM25 fallback would tokenize
    every unit at query time)."""
    from provrag.config import load_config
    from provrag.query.retrieve import dense, embed_query
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
        out["ivf"] = ann.describe()
        recalls, scan_ms = [], []
        for i, q in enumerate(qs):
            vec, _ = embed_query(reader, q)
            got = {u for u, _ in ann.search(vec, 100)}
            exact = {u for u, _ in ann.search(vec, 100, probes=int(ann.meta["lists"]))}
            recalls.append(len(got & exact) / max(len(exact), 1))
            if i < scans:
                t = time.perf_counter()
                dense(reader.con, vec, 100)
                scan_ms.append((time.perf_counter() - t) * 1000)
        out["ivf_recall_at_100"] = round(statistics.mean(recalls), 4)
        out["dense_sql_scan_ms"] = {"p50": _p(scan_ms, 50), "questions": len(scan_ms)}
        probes = ann.meta["probes"]
        ann.meta["probes"] = ann.meta["lists"]  # every list: the exact dense channel
        exact_times, exact_tops = _timed_retrievals(reader, qs, cfg)
        ann.meta["probes"] = probes
        out["exact_vectors_retrieve_ms"] = {"p50": _p(exact_times, 50)}
        out["top10_overlap_with_exact"] = round(statistics.mean(
            len(set(a[:10]) & set(b[:10])) / max(len(b[:10]), 1) for a, b in zip(tops, exact_tops)), 4)
        if asks:
            out["ask_ms"] = warm_asks(reader, Path(index), qs[:asks + 1], cfg)
        if (Path(index) / "terms.parquet").is_file():
            with WithoutRetrievalFiles():
                _timed_retrievals(reader, qs[:1], cfg)
                old_times, old_tops = _timed_retrievals(reader, qs[:scans], cfg)
            out["scan_retrieve_ms"] = {"p50": _p(old_times, 50), "questions": len(old_times)}
            out["top10_overlap_with_scan"] = round(statistics.mean(
                len(set(a[:10]) & set(b[:10])) / max(len(b[:10]), 1) for a, b in zip(tops, old_tops)), 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", default="10000,1000000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/provrag-million"), help="where the indexes are built (kept)")
    ap.add_argument("--reuse", action="store_true", help="measure indexes already built in --work")
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--scans", type=int, default=5, help="questions timed on the fallback scans")
    ap.add_argument("--asks", type=int, default=0, help="questions timed through the whole warm ask (seconds each)")
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
        r = measure(a.work / f"idx-{n}", a.questions, a.scans, asks=a.asks)
        r["units"] = n
        rep["runs"].append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    rep["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    small, big = rep["runs"][0], rep["runs"][-1]
    rep["ratio_p50"] = round(big["retrieve_ms"]["p50"] / small["retrieve_ms"]["p50"], 2)
    lines = ["| units | retrieve p50 ms | p90 ms | same, every list read | SQL scan of embeddings.parquet ms | IVF | "
             "recall@100 | top-10 overlap with exact |", "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for r in rep["runs"]:
        lines.append(f"| {r['units']} | {r['retrieve_ms']['p50']} | {r['retrieve_ms']['p90']} | "
                     f"{r['exact_vectors_retrieve_ms']['p50']} | {r['dense_sql_scan_ms']['p50']} | {r['ivf']} | "
                     f"{r['ivf_recall_at_100']} | {r['top10_overlap_with_exact']} |")
    if big.get("ask_ms"):
        rep["ratio_ask_p50"] = round(big["ask_ms"]["p50"] / small["ask_ms"]["p50"], 2)
        lines.append(f"\nwhole warm ask (basic) p50: {small['ask_ms']['p50']} ms at {small['units']}, "
                     f"{big['ask_ms']['p50']} ms at {big['units']} (÷ {rep['ratio_ask_p50']}; {big['ask_ms']['questions']} questions)")
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
