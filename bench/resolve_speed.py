"""Citation resolution on a 1,000,000-unit index: provrag's DuckDB path against pandas.

    .venv/bin/python bench/resolve_speed.py [--base INDEX] [--units 1000000] [--citations 100]
                                            [--work DIR] [--rebuild] [--skip-pandas]

1. Builds (once; reused while the base and size are unchanged) a synthetic index of
   --units text units by repeating and perturbing a real index's rows (default base: the
   real GraphRAG v3 index of ../shared/fixtures/graphrag-dulce). Copy r of base unit i gets a
   new content id, human_readable_id r·n + i, and a different ~150–250-word window of the
   base unit's words as its text (provrag-sized units, ~1.2 KB). Communities are repeated per
   group of 100 copies, so a community holds 100× its base units (hundreds of units per
   Report, as in a large real index); each community gets its base community's report.
   Tables are written with pyarrow, in batches, zstd, in the contract's schema.
2. Draws --citations citations (half Reports, half Sources, seeded), each with a real
   sentence as the claim (a report finding for Reports, a sentence of the unit for Sources).
3. DuckDB path (provrag.query.resolve over provrag.store.reader's views), timed three ways:
   - batch: open the index and resolve one answer holding all citations (what
     `provrag resolve` does with a whole answer) — best of 3;
   - one at a time: each citation resolved on its own (`resolve_refs`) with the reader kept
     open; the reader's lookup tables (expand.Lookups) are built on its second use, and
     that build time is reported separately and counted in the speed-up;
   - open + one: a new reader opened and a single citation resolved (5 samples).
4. pandas path, in the same run: read every table the chain needs whole
   (`pd.read_parquet`: community_reports, communities, text_units, documents), then filter
   per citation and rank with the same scoring code — what GraphRAG's query code and the
   usual notebook recipe do. Its top sources must equal the DuckDB path's. (The synthetic
   index has no entity/relationship tables, so pandas reads only the four tables the chain
   needs — which favours pandas.)

Prints the figures and writes bench/results/resolve_speed-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
DEFAULT_BASE = SHARED / "fixtures" / "graphrag-dulce" / "index-2026-v3"
GROUP = 100          # copies per community group
BATCH = 100_000      # rows per written batch / row group


# ---- 1. the synthetic index ---------------------------------------------------------------

def _hid(*parts) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def build(base: Path, out: Path, n_units: int, seed: int = 0) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from provrag.store.reader import open_index
    from provrag.store.schema import SCHEMAS

    t0 = time.perf_counter()
    with open_index(base) as r:
        units = r.con.execute("SELECT id, text, document_id, page_start, page_end FROM text_units "
                              "ORDER BY human_readable_id").fetchall()
        docs = r.con.execute("SELECT id, title, text, path, n_pages, page_labels FROM documents").fetchall()
        comms = r.con.execute("SELECT community, level, parent, title, text_unit_ids FROM communities "
                              "ORDER BY community").fetchall()
        reps = {row[0]: row for row in r.con.execute(
            "SELECT community, title, summary, full_content, rank, rating_explanation, findings "
            "FROM community_reports").fetchall()}
        base_kind = r.kind
    if not units or not comms:
        raise SystemExit(f"base index {base} needs text units and communities")
    out.mkdir(parents=True, exist_ok=True)
    n_base = len(units)
    copies = -(-n_units // n_base)
    n_doc_copies = min(copies, 1000)
    words = [u[1].split() for u in units]
    base_pos = {u[0]: i for i, u in enumerate(units)}

    # text units, written batch by batch
    schema = SCHEMAS["text_units"]
    w = pq.ParquetWriter(out / "text_units.parquet", schema, compression="zstd")
    k = 0
    while k < n_units:
        m = min(BATCH, n_units - k)
        cols = {c: [] for c in ("id", "human_readable_id", "text", "n_tokens", "document_id", "page_start", "page_end")}
        for j in range(k, k + m):
            r_, i = divmod(j, n_base)
            ws = words[i]
            length = min(len(ws), 150 + (r_ * 37 + i * 11) % 101)
            off = (r_ * 7919 + i * 104729) % max(1, len(ws) - length + 1)
            text = " ".join(ws[off:off + length])
            cols["id"].append(_hid("unit", r_, units[i][0]))
            cols["human_readable_id"].append(j)
            cols["text"].append(text)
            cols["n_tokens"].append(int(length * 1.3))
            cols["document_id"].append(_hid("doc", r_ % n_doc_copies, units[i][2]))
            cols["page_start"].append(units[i][3])
            cols["page_end"].append(units[i][4])
        w.write_table(pa.table({**cols, **{c: [None] * m for c in schema.names if c not in cols}}, schema=schema),
                      row_group_size=BATCH)
        k += m
    w.close()

    dschema = SCHEMAS["documents"]
    drows = {c: [] for c in ("id", "human_readable_id", "title", "text", "path", "n_pages", "page_labels", "status")}
    for c in range(n_doc_copies):
        for d in docs:
            drows["id"].append(_hid("doc", c, d[0]))
            drows["human_readable_id"].append(len(drows["id"]) - 1)
            drows["title"].append(d[1] if c == 0 else f"{d[1]} (copy {c})")
            drows["text"].append(d[2])
            drows["path"].append(d[3])
            drows["n_pages"].append(d[4])
            drows["page_labels"].append(d[5])
            drows["status"].append("ok")
    nd = len(drows["id"])
    pq.write_table(pa.table({**drows, **{c: [None] * nd for c in dschema.names if c not in drows}}, schema=dschema),
                   out / "documents.parquet", compression="zstd")

    # communities: group g of GROUP copies; community number g·n_c + c
    n_groups = -(-copies // GROUP)
    n_c = len(comms)
    cschema, rschema = SCHEMAS["communities"], SCHEMAS["community_reports"]
    crows = {c: [] for c in ("id", "human_readable_id", "community", "level", "parent", "title", "text_unit_ids", "size")}
    rrows = {c: [] for c in ("id", "human_readable_id", "community", "level", "parent", "title", "summary",
                             "full_content", "rank", "rating_explanation", "findings", "size")}
    for g in range(n_groups):
        rs = range(g * GROUP, min((g + 1) * GROUP, copies))
        for ci, (cnum, level, parent, title, tus) in enumerate(comms):
            num = g * n_c + ci
            ids = [_hid("unit", r_, tu) for r_ in rs for tu in (tus or [])
                   if tu in base_pos and r_ * n_base + base_pos[tu] < n_units]
            crows["id"].append(_hid("community", num))
            crows["human_readable_id"].append(num)
            crows["community"].append(num)
            crows["level"].append(level)
            crows["parent"].append(-1 if parent is None or parent < 0 else g * n_c + parent)
            crows["title"].append(f"{title} ({g})")
            crows["text_unit_ids"].append(ids)
            crows["size"].append(len(ids))
            rep = reps.get(cnum)
            rrows["id"].append(_hid("report", num))
            rrows["human_readable_id"].append(num)
            rrows["community"].append(num)
            rrows["level"].append(level)
            rrows["parent"].append(crows["parent"][-1])
            rrows["title"].append(rep[1] if rep else title)
            rrows["summary"].append(rep[2] if rep else "")
            rrows["full_content"].append(rep[3] if rep else "")
            rrows["rank"].append(rep[4] if rep else None)
            rrows["rating_explanation"].append(rep[5] if rep else None)
            rrows["findings"].append(rep[6] if rep else [])
            rrows["size"].append(len(ids))
    for rows, sch, name in ((crows, cschema, "communities"), (rrows, rschema, "community_reports")):
        n = len(rows["id"])
        pq.write_table(pa.table({**rows, **{c: [None] * n for c in sch.names if c not in rows}}, schema=sch),
                       out / f"{name}.parquet", compression="zstd", row_group_size=BATCH)
    info = {"base": str(base), "base_kind": base_kind, "units": n_units, "base_units": n_base, "copies": copies,
            "documents": nd, "communities": len(crows["id"]), "seed": seed,
            "build_seconds": round(time.perf_counter() - t0, 1)}
    (out / "manifest.json").write_text(json.dumps({"synthetic": info}, indent=1))
    info["mb_on_disk"] = round(sum(f.stat().st_size for f in out.glob("*.parquet")) / 2**20, 1)
    return info


# ---- 2. the citations ---------------------------------------------------------------------

def draw_citations(idx: Path, n: int, seed: int) -> list[tuple[str, int, str]]:
    """(kind, id, sentence): half Reports with a finding of that report, half Sources with a
    sentence of that unit, all seeded."""
    from provrag.store.reader import open_index

    rnd = random.Random(seed)
    with open_index(idx) as r:
        n_units = r.count("text_units")
        comms = [c for (c,) in r.con.execute("SELECT community FROM communities WHERE size > 0").fetchall()]
        picks_r = rnd.sample(comms, n // 2)
        picks_s = rnd.sample(range(n_units), n - n // 2)
        finds = dict(r.con.execute(
            f"SELECT community, findings FROM community_reports WHERE community IN ({', '.join(map(str, picks_r))})").fetchall())
        texts = dict(r.con.execute(
            f"SELECT human_readable_id, text FROM text_units WHERE human_readable_id IN ({', '.join(map(str, picks_s))})").fetchall())
    out = []
    for c in picks_r:
        fs = [f["summary"] for f in (finds.get(c) or []) if f.get("summary")] or ["the community and its members"]
        out.append(("Reports", c, rnd.choice(fs)))
    for h in picks_s:
        sents = [s for s in re.split(r"(?<=[.!?])\s+", texts[h]) if len(s.split()) >= 6] or [texts[h][:200]]
        out.append(("Sources", h, rnd.choice(sents)[:300]))
    rnd.shuffle(out)
    return out


def answer_of(cits) -> str:
    return "\n\n".join(f"{s.rstrip('.')} [Data: {k} ({i})]." for k, i, s in cits)


# ---- 3. DuckDB path -----------------------------------------------------------------------

def duckdb_path(idx: Path, cits, top_k: int) -> dict:
    from provrag.query.citations import Ref, parse_citations
    from provrag.store.reader import open_index
    from provrag.query.resolve import resolve_answer, resolve_refs

    answer = answer_of(cits)
    parsed = parse_citations(answer)
    assert len(parsed.blocks) == len(cits)
    batch = []
    for _ in range(3):
        t0 = time.perf_counter()
        with open_index(idx) as r:
            res = resolve_answer(r, answer, top_k=top_k, parsed=parsed)
        batch.append(time.perf_counter() - t0)
    assert not res.unresolved, res.unresolved[:3]
    per, tops = [], {}
    with open_index(idx) as r:
        resolve_refs(r, [Ref(cits[0][0], [cits[0][1]])], cits[0][2], top_k)  # first use: direct lookups
        t0 = time.perf_counter()  # second use of the reader builds its lookup tables (expand.Lookups)
        resolve_refs(r, [Ref(cits[0][0], [cits[0][1]])], cits[0][2], top_k)
        build_ms = (time.perf_counter() - t0) * 1000
        for k, i, s in cits:
            t0 = time.perf_counter()
            srcs, _ = resolve_refs(r, [Ref(k, [i])], s, top_k)
            per.append(time.perf_counter() - t0)
            tops[(k, i)] = [x.text_unit_id for x in srcs]
    cold = []
    for k, i, s in cits[:5]:
        t0 = time.perf_counter()
        with open_index(idx) as r:
            resolve_refs(r, [Ref(k, [i])], s, top_k)
        cold.append(time.perf_counter() - t0)
    per_ms = sorted(x * 1000 for x in per)
    return {
        "batch_seconds": [round(x, 3) for x in batch],
        "batch_ms_best": round(min(batch) * 1000, 1),
        "batch_ms_per_citation": round(min(batch) * 1000 / len(cits), 2),
        "lookup_tables_build_ms": round(build_ms, 1),
        "per_citation_ms": {"mean": round(statistics.mean(per_ms), 1), "median": round(statistics.median(per_ms), 1),
                            "p95": round(per_ms[int(0.95 * (len(per_ms) - 1))], 1), "max": round(per_ms[-1], 1),
                            "total": round(sum(per_ms), 1)},
        "per_citation_median_ms_by_kind": {
            kind: round(statistics.median(x * 1000 for x, (k, _, _) in zip(per, cits) if k == kind), 1)
            for kind in ("Reports", "Sources")},
        "open_and_resolve_one_ms": [round(x * 1000, 1) for x in cold],
        "sources": len(res.sources),
        "_tops": tops,
    }


# ---- 4. pandas path -----------------------------------------------------------------------

def pandas_path(idx: Path, cits, top_k: int) -> dict:
    import pandas as pd

    from provrag.query.resolve import _rank

    t0 = time.perf_counter()
    reports = pd.read_parquet(idx / "community_reports.parquet")
    comms = pd.read_parquet(idx / "communities.parquet")
    units = pd.read_parquet(idx / "text_units.parquet")
    docs = pd.read_parquet(idx / "documents.parquet")
    t_load = time.perf_counter() - t0
    t1 = time.perf_counter()
    tops = {}
    for k, i, s in cits:
        if k == "Reports":
            if not (reports["community"] == i).any():
                continue
            tus = comms.loc[comms["community"] == i, "text_unit_ids"].explode().dropna()
            sel = units[units["id"].isin(set(tus))]
            vias = {u: [f"Report {i} → community {i}"] for u in tus}
        else:
            sel = units[units["human_readable_id"] == i]
            vias = {u: [f"Source {i}"] for u in sel["id"]}
        sel = sel.merge(docs[["id", "title", "path", "page_labels"]].rename(columns={"id": "document_id"}),
                        on="document_id", how="left")
        rows = {}
        for rec in sel[["id", "human_readable_id", "text", "page_start", "page_end", "char_start", "char_end",
                        "document_id", "title", "path", "page_labels"]].itertuples(index=False):
            d = dict(zip(("id", "human_readable_id", "text", "page_start", "page_end", "char_start", "char_end",
                          "document_id", "title", "path", "page_labels"), rec))
            for c in ("page_start", "page_end", "char_start", "char_end"):
                d[c] = None if pd.isna(d[c]) else int(d[c])
            rows[d["id"]] = d
        from collections import OrderedDict

        cands = OrderedDict((u, vias[u]) for u in vias if u in rows)
        if len(cands) > 400:  # same candidate cap as the DuckDB path, done in pandas
            from provrag.text.similarity import content_words

            words = sorted(set(content_words(s)), key=len, reverse=True)[:24]
            hits = {u: sum(w in rows[u]["text"].lower() for w in words) for u in cands}
            keep = set(sorted(cands, key=lambda u: (-hits[u], rows[u]["human_readable_id"]))[:400])
            cands = OrderedDict((u, v) for u, v in cands.items() if u in keep)
        tops[(k, i)] = [x["text_unit_id"] for x in _rank(s, cands, rows, None, {}, top_k, None)]
    t_filter = time.perf_counter() - t1
    return {"load_seconds": round(t_load, 2), "filter_and_rank_seconds": round(t_filter, 2),
            "total_seconds": round(t_load + t_filter, 2), "_tops": tops,
            "rows_loaded": int(len(units) + len(comms) + len(reports) + len(docs))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, default=DEFAULT_BASE, help="real index whose rows are repeated")
    ap.add_argument("--units", type=int, default=1_000_000)
    ap.add_argument("--citations", type=int, default=100)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "provrag-bench-resolve")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--skip-pandas", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    load0 = os.getloadavg()
    idx = a.work / f"synthetic-{a.units}"
    info_file = idx / "manifest.json"
    info = json.loads(info_file.read_text())["synthetic"] if info_file.exists() and not a.rebuild else None
    if info is None or info.get("base") != str(a.base):
        print(f"building a {a.units:,}-unit index from {a.base} …", file=sys.stderr)
        info = build(a.base, idx, a.units, a.seed)
    info["mb_on_disk"] = round(sum(f.stat().st_size for f in idx.glob("*.parquet")) / 2**20, 1)
    print(f"index: {idx} — {info['units']:,} units, {info['communities']:,} communities, "
          f"{info['mb_on_disk']} MB parquet (built in {info['build_seconds']} s)")
    cits = draw_citations(idx, a.citations, a.seed)
    dk = duckdb_path(idx, cits, a.top)
    print(f"DuckDB path: batch of {len(cits)} citations {dk['batch_ms_best']} ms "
          f"({dk['batch_ms_per_citation']} ms per citation); one at a time: median {dk['per_citation_ms']['median']} ms, "
          f"p95 {dk['per_citation_ms']['p95']} ms, max {dk['per_citation_ms']['max']} ms "
          f"(reader open, lookup tables built once in {dk['lookup_tables_build_ms']} ms); "
          f"open index + resolve one: {dk['open_and_resolve_one_ms']} ms")
    result = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "machine": {"cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load0],
                          "python": platform.python_version()},
              "index": info, "citations": {"n": len(cits), "reports": sum(k == "Reports" for k, _, _ in cits),
                                           "sources": sum(k == "Sources" for k, _, _ in cits)},
              "top_k": a.top, "duckdb": {k: v for k, v in dk.items() if not k.startswith("_")},
              "load_average_at_end": None}
    if not a.skip_pandas:
        pd_ = pandas_path(idx, cits, a.top)
        same = sum(dk["_tops"].get((k, i)) == pd_["_tops"].get((k, i)) for k, i, _ in cits)
        speed_batch = pd_["total_seconds"] * 1000 / dk["batch_ms_best"]
        print(f"pandas path: read tables {pd_['load_seconds']} s + filter/rank {pd_['filter_and_rank_seconds']} s "
              f"= {pd_['total_seconds']} s")
        one_ms = dk["per_citation_ms"]["total"] + dk["lookup_tables_build_ms"]
        speed_one = pd_["total_seconds"] * 1000 / one_ms
        print(f"DuckDB batch is {speed_batch:.0f}× faster than pandas; one at a time (lookup build included) "
              f"{speed_one:.0f}× faster; same top sources for {same}/{len(cits)} citations")
        result["pandas"] = {k: v for k, v in pd_.items() if not k.startswith("_")}
        result["speedup_batch"] = round(speed_batch, 1)
        result["speedup_one_at_a_time_incl_lookup_build"] = round(speed_one, 1)
        result["same_top_sources"] = f"{same}/{len(cits)}"
    result["targets"] = {
        "duckdb_batch_under_100ms": dk["batch_ms_best"] < 100,
        "duckdb_per_citation_median_under_100ms": dk["per_citation_ms"]["median"] < 100,
        "duckdb_per_citation_p95_under_100ms": dk["per_citation_ms"]["p95"] < 100,
        "duckdb_batch_per_citation_under_100ms": dk["batch_ms_per_citation"] < 100,
        "at_least_10x_faster_than_pandas": result.get("speedup_batch", 0) >= 10 if not a.skip_pandas else None,
    }
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out = ROOT / "bench" / "results" / f"resolve_speed-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"targets: {result['targets']}\nwritten: {out}")


if __name__ == "__main__":
    main()
