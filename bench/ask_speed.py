"""Wall time of `ask` per method (offline engine) on an index of ~10,000 text units (issue #4).

usage: python bench/ask_speed.py [--index INDEX] [--build INDEX] [--n 30] [--cli 8] [--rerank minilm|none]

The corpus: the dev split's text corpora (VitaminC's 600 Wikipedia pages, HaluEval's 300
knowledge files, the 24 SQuAD PDFs) copied six times under distinct names, ≈ 9,500
text units with the default 300-token units. `--build DIR` indexes it into DIR (minutes;
once), `--index DIR` reuses it. Questions are SQuAD's dev questions. Reported: p50/p95 of
run_ask in one process (warm: the reader, embedder and reranker are loaded per question,
as the CLI does, but Python modules are imported once) and of the `provrag ask --json`
command (cold: a new process each time, imports included).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EVAL_DEV = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared")) / "eval" / "dev"

COPIES = 6


def build(out: Path) -> None:
    from provrag.pipelines.index import run_index
    from provrag.config import load_config

    docs = Path(tempfile.mkdtemp())
    try:
        for c in range(COPIES):
            for sub, pattern in (("vitaminc/corpus", "*.md"), ("halueval/corpus", "*"), ("squad/corpus", "*.pdf")):
                dest = docs / f"copy{c}" / sub.split("/")[0]
                dest.mkdir(parents=True, exist_ok=True)
                for f in sorted((EVAL_DEV / sub).glob(pattern)):
                    if f.is_file():
                        shutil.copy(f, dest / f.name)
        t0 = time.perf_counter()
        s = run_index(docs, out, load_config())
        print(f"indexed {s.documents_ok} documents → {s.text_units} text units, {s.community_reports} reports "
              f"in {time.perf_counter() - t0:.0f} s", flush=True)
    finally:
        shutil.rmtree(docs, ignore_errors=True)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path)
    ap.add_argument("--build", type=Path, help="index the bench corpus into this folder first")
    ap.add_argument("--n", type=int, default=30, help="in-process questions per method")
    ap.add_argument("--cli", type=int, default=8, help="CLI calls per method")
    ap.add_argument("--methods", default="basic,local,global")
    ap.add_argument("--rerank", default=None, help="override [search] rerank (minilm | none)")
    args = ap.parse_args()
    if args.build:
        build(args.build)
        args.index = args.index or args.build
    if not args.index:
        ap.error("give --index (or --build)")

    from provrag.pipelines.ask import run_ask
    from provrag.config import load_config
    from provrag.store.reader import open_index

    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp()  # bench traces must not join the user's trace registry
    overrides = {"search": {"rerank": args.rerank}} if args.rerank else None
    cfg = load_config(overrides=overrides)
    with open_index(args.index) as r:
        n_units = r.count("text_units")
        n_reports = r.count("community_reports")
    qs = [json.loads(x)["question"] for x in (EVAL_DEV / "squad" / "questions.jsonl").read_text().splitlines() if x.strip()]
    print(f"index {args.index}: {n_units} text units, {n_reports} community reports; rerank {cfg.search.rerank}")
    env = dict(os.environ)
    cfg_file = None
    if args.rerank:
        cfg_file = Path(env["XDG_DATA_HOME"]) / "bench.toml"
        cfg_file.write_text(f'[search]\nrerank = "{args.rerank}"\n')
    provrag = str(Path(sys.executable).parent / "provrag")
    print(f"{'method':8} {'in-process p50':>15} {'p95':>8} {'CLI p50':>9} {'p95':>8}   (seconds)")
    for method in args.methods.split(","):
        run_ask(qs[0], args.index, cfg, method=method, save=False)  # warm the imports once
        times = []
        for q in qs[1:args.n + 1]:
            t0 = time.perf_counter()
            run_ask(q, args.index, cfg, method=method, save=True)
            times.append(time.perf_counter() - t0)
        cli = []
        for q in qs[args.n + 1:args.n + 1 + args.cli]:
            cmd = [provrag, "ask", q, "--index", str(args.index), "--method", method, "--json"]
            if cfg_file:
                cmd += ["--config", str(cfg_file)]
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
            cli.append(time.perf_counter() - t0)
            if p.returncode != 0:
                print(f"  CLI failed: {p.stderr.strip()[:200]}")
        print(f"{method:8} {statistics.median(times):15.2f} {pct(times, 0.95):8.2f} "
              f"{statistics.median(cli) if cli else float('nan'):9.2f} {pct(cli, 0.95) if cli else float('nan'):8.2f}",
              flush=True)


if __name__ == "__main__":
    main()
