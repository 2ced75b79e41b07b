"""Recall@k of retrieval alone: is the page that answers among the first k units retrieval returns?

    nice -n 10 .venv/bin/python bench/retrieval_recall.py --set NAME INDEX QUESTIONS [--set …] [--out FILE]

Issue 26 asks why `ask` does not put the page that answers first. Before changing anything in
between, this says which stage loses it: for every answerable question of a dev set (a
check_qa.py folder's questions.jsonl over an index of its corpus), `retrieve_units` runs alone
— BM25 + embeddings, fused, over a pool of 100, no reader — and the rank of the first unit on a
gold page (the gold document, a page of the unit's range among the gold pages: check_qa.py's
rule) is recorded. recall@k is the share of questions with that rank below k; k = 20 is what the
reader reads ([search] context_units), 60 what ask's wide retry reads. Prints one row per set
and writes each question's rank to --out (JSON), so a miss of `ask` can be traced to retrieval
(rank ≥ 20), to the order the reader reads passages in, or to its choice of the lead.
Never run it on a held-out set: it prints per-question ranks.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KS = (1, 5, 10, 20, 50, 100)
POOL = 100


def on_gold(unit: dict, document: str, pages: list[int]) -> bool:
    """check_qa.py's rule: the unit's file is the gold document and its pages meet the gold pages."""
    start, end = unit.get("page_start"), unit.get("page_end")
    if Path(str(unit.get("path") or "")).name != document or start is None:
        return False
    return bool(set(range(int(start), int(end if end is not None else start) + 1)) & set(pages))


def gold_ranks(index: Path, questions: list[dict]) -> list[dict]:
    """Each question's rank (0-based) of its first gold unit among POOL retrieved, or None."""
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units
    from provrag.store.reader import open_index

    cfg = load_config()
    reader = open_index(index)
    out = []
    for q in questions:
        found = retrieve_units(reader, q["question"], cfg, k=POOL, pool=POOL).candidates
        rank = next((i for i, c in enumerate(found) if on_gold(c, q["document"], q["pages"])), None)
        doc = next((i for i, c in enumerate(found) if Path(str(c.get("path") or "")).name == q["document"]), None)
        out.append({"id": q["id"], "gold_rank": rank, "document_rank": doc})
    return out


def recall(ranks: list[dict], k: int) -> float:
    return sum(1 for r in ranks if r["gold_rank"] is not None and r["gold_rank"] < k) / max(len(ranks), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", nargs=3, action="append", metavar=("NAME", "INDEX", "QUESTIONS"), required=True)
    ap.add_argument("--out", type=Path, default=None, help="per-question ranks (JSON)")
    a = ap.parse_args(argv)
    report = {}
    print("| set | questions | " + " | ".join(f"recall@{k}" for k in KS) + " | s |")
    print("| --- | ---: | " + " | ".join("---:" for _ in KS) + " | ---: |")
    for name, index, qfile in a.set:
        qs = [json.loads(line) for line in Path(qfile).read_text().splitlines() if line.strip()]
        t0 = time.perf_counter()
        ranks = gold_ranks(Path(index), qs)
        report[name] = {"questions": len(qs), **{f"recall@{k}": round(recall(ranks, k), 4) for k in KS},
                        "items": ranks}
        print(f"| {name} | {len(qs)} | " + " | ".join(f"{recall(ranks, k):.0%}" for k in KS)
              + f" | {time.perf_counter() - t0:.0f} |", flush=True)
    if a.out:
        a.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
