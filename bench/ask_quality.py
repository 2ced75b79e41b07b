"""Page-level answer quality of `ask` per search method, offline engine (issue #4).

usage: python bench/ask_quality.py [--index INDEX] [--methods auto,basic,local,global] [--limit N]

Over every question of ../shared/eval/dev/squad/questions.jsonl (24 Wikipedia articles
rendered to PDF, gold pages known): gold page first (the first source is the gold PDF on a
page holding the answer), gold page in the top 5 sources, and whether the answer text
contains a gold answer string; plus the median answer length in words. Scoring is
check_ask.py's (same normalisation). Without --index, the corpus is indexed first into a
temporary folder. In-process (run_ask with save=False), so it measures answers, not start-up.
Baseline to beat (issue #4): a plain TF-IDF retriever with a 3-sentence extract, 78/95/78 %.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EVAL_DEV = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared")) / "eval" / "dev"

SQUAD = EVAL_DEV / "squad"


def norm(x: str) -> str:
    return " ".join("".join(ch.lower() if ch.isalnum() else " " for ch in x).split())


def score(q: dict, out) -> tuple[bool, bool, bool]:
    """(first source on a gold page, one of the first five is, the answer holds a gold answer)
    for one run_ask result (provrag.results.AskResult)."""
    gold = set(q.get("answer_pages") or q["pages"])
    answer = norm(str(out.answer or ""))
    contains = any(norm(g) and norm(g) in answer for g in q["answers"])
    top1 = top5 = False
    for rank, s in enumerate(out.sources[:5]):
        name = Path(str(s.path or s.document or "")).name
        a, b = s.page_start, s.page_end
        if name == q["document"] and a is not None and set(range(int(a), int(b or a) + 1)) & gold:
            top5, top1 = True, rank == 0
            break
    return top1, top5, contains


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, help="an index of the squad corpus (default: build one)")
    ap.add_argument("--methods", default="auto,basic,local,global")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions")
    ap.add_argument("--misses", type=int, default=0, help="print this many misses of the first method")
    ap.add_argument("--eval", type=Path, default=EVAL_DEV, help="an eval folder laid out as ../shared/eval/dev")
    ap.add_argument("--config", type=Path, help="a TOML file overriding config.toml (compare settings)")
    args = ap.parse_args()
    global SQUAD
    SQUAD = args.eval / "squad"

    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask

    cfg = load_config(args.config)
    qs = [json.loads(line) for line in (SQUAD / "questions.jsonl").read_text().splitlines() if line.strip()]
    if args.limit:
        qs = qs[:args.limit]
    tmp = None
    index = args.index
    if index is None:
        from provrag.pipelines.index import run_index

        tmp = Path(tempfile.mkdtemp())
        index = tmp / "idx"
        t0 = time.perf_counter()
        run_index(SQUAD / "corpus", index, cfg)
        print(f"indexed {SQUAD / 'corpus'} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    try:
        print(f"{len(qs)} questions, offline engine, index {index}")
        print(f"{'method':8} {'top-1':>7} {'top-5':>7} {'answer':>7} {'median words':>13} {'ms/q':>6}  chosen")
        for method in args.methods.split(","):
            t1 = t5 = cont = 0
            lens, chosen, misses = [], {}, []
            t0 = time.perf_counter()
            for q in qs:
                out = run_ask(q["question"], index, cfg, method=method, save=False)
                a, b, c = score(q, out)
                t1, t5, cont = t1 + a, t5 + b, cont + c
                lens.append(len(str(out.answer).split()))
                chosen[out.method] = chosen.get(out.method, 0) + 1
                if not (a and c):
                    misses.append((q, out))
            ms = (time.perf_counter() - t0) * 1000 / max(len(qs), 1)
            n = max(len(qs), 1)
            print(f"{method:8} {t1 / n:7.1%} {t5 / n:7.1%} {cont / n:7.1%} {statistics.median(lens):13.0f} {ms:6.0f}  {chosen}",
                  flush=True)
            if args.misses and method == args.methods.split(",")[0]:
                for q, out in misses[:args.misses]:
                    s0 = out.sources[0].to_json() if out.sources else {}
                    print(f"  MISS {q['id']} {q['question']} | gold {q['document']} {q.get('answer_pages')} {q['answers'][:2]}"
                          f"\n     first source {s0.get('path')} p{s0.get('page_start')}-{s0.get('page_end')}"
                          f"\n     answer: {out.answer[:300]}")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
