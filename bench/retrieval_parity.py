"""Does retrieval from INDEX/retrieval/ (postings + IVF) rank as the scans did? Same top-k, same gold page.

    nice -n 10 .venv/bin/python bench/retrieval_parity.py --index IDX --questions FILE [--index IDX2 --questions FILE2 …]

For every question of a dev set (../shared/eval/dev/squad/questions.jsonl over an index of its
corpus; eval/manuals/questions.jsonl over the ten Debian manuals), `retrieve_units` runs twice on
the same index: with the memory-mapped postings and vectors, and with the SQL scans an index
written before them falls back to (bench/million.WithoutRetrievalFiles). It counts the questions whose top-k
unit ids are identical (k = [search] context_units, what the answerer reads), and retrieval's gold
page first both ways: the first unit is in the gold document on a page holding the answer.
Prints one row per set; writes bench/results/retrieval-parity-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.million import WithoutRetrievalFiles  # noqa: E402


def gold_first(q: dict, cands: list[dict]) -> bool:
    if not cands:
        return False
    c, gold = cands[0], set(q.get("answer_pages") or q.get("pages") or [])
    name = Path(str(c.get("path") or "")).name
    pages = set(range(int(c.get("page_start") or 0), int(c.get("page_end") or c.get("page_start") or 0) + 1))
    return name == q["document"] and bool(gold & pages)


def parity(index: Path, questions: Path) -> dict:
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units
    from provrag.store.reader import open_index

    cfg = load_config()
    qs = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    k, pool = cfg.search.context_units, cfg.search.candidate_pool
    same = first_new = first_old = 0
    differ = []
    t = time.perf_counter()
    with open_index(index) as reader:
        for q in qs:
            new = retrieve_units(reader, q["question"], cfg, k=k, pool=pool).candidates
            with WithoutRetrievalFiles():
                old = retrieve_units(reader, q["question"], cfg, k=k, pool=pool).candidates
            ids_new, ids_old = [c["text_unit_id"] for c in new], [c["text_unit_id"] for c in old]
            same += ids_new == ids_old
            if ids_new != ids_old:
                differ.append(q.get("id"))
            first_new += gold_first(q, new)
            first_old += gold_first(q, old)
    n = max(len(qs), 1)
    return {"index": str(index), "questions": len(qs), "k": k, "same_top_k": same, "differ": differ,
            "gold_page_first_scan": round(100 * first_old / n, 1), "gold_page_first_new": round(100 * first_new / n, 1),
            "seconds": round(time.perf_counter() - t, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, action="append", required=True)
    ap.add_argument("--questions", type=Path, action="append", required=True)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    rows = [parity(i, q) for i, q in zip(a.index, a.questions)]
    print("| questions | k | same top-k | gold page first: scans | memory-mapped |\n| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['questions']} ({Path(r['index']).name}) | {r['k']} | {r['same_top_k']}/{r['questions']} | "
              f"{r['gold_page_first_scan']} % | {r['gold_page_first_new']} % |")
    out = a.out or ROOT / "bench" / "results" / f"retrieval-parity-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["same_top_k"] == r["questions"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
