"""What reading before answering costs (issue 26): ask, verify and index time, before vs after, one run.

    .venv/bin/python bench/honest_cost.py [--before main] [--n 20] [--claims 20] [--rounds 2] [--out FILE]

"Before" is a git ref of this repository (default main), unpacked with `git archive` into a
temp folder and run by this same interpreter (the editable install's finder is set aside so
`import provrag` reads that tree); "after" is the working tree. Both sides run in turns, in
child processes, on the same index inputs, `--rounds` times, so load from other work on the
machine falls on both alike (the figures are ratios measured in one run):

- index: `run_index` of the dev split's 24 SQuAD PDFs (each side builds its own index);
- ask:   `run_ask` of the first `--n` SQuAD dev questions over that side's index, in one process
         (the first question warms the imports and models and is not counted);
- verify: `run_verify` of `--claims` one-claim answers (each question's gold answer made a
         claim by verify/claims.question_to_claim), p50 per claim.
Goals: ask ≤ 1.5× before per question, verify ≤ 200 ms per claim (p50), index within ±10 %.
Writes bench/results/honest_cost-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
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
SQUAD = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared")) / "eval" / "dev" / "squad"


def worker(tree: str | None, task: str, index: str, n: int) -> dict:
    """One side's measurement, in this (child) process."""
    if tree:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, tree)
    from provrag.config import load_config

    cfg = load_config()
    qs = [json.loads(x) for x in (SQUAD / "questions.jsonl").read_text().splitlines() if x.strip()]
    if task == "index":
        from provrag.pipelines.index import run_index

        t0 = time.perf_counter()
        run_index(SQUAD / "corpus", Path(index), cfg)
        return {"seconds": time.perf_counter() - t0}
    if task == "ask":
        from provrag.pipelines.ask import run_ask

        run_ask(qs[0]["question"], index, cfg, save=False)
        times = []
        for q in qs[1:n + 1]:
            t0 = time.perf_counter()
            run_ask(q["question"], index, cfg, save=False)
            times.append(time.perf_counter() - t0)
        return {"times": times}
    from provrag.pipelines.verify import run_verify
    from provrag.verify.claims import question_to_claim

    claims = [question_to_claim(q["question"], q["answers"][0])[0] for q in qs[1:n + 2]]
    run_verify(index, cfg, answer=claims[0], save=False)
    times = []
    for c in claims[1:]:
        t0 = time.perf_counter()
        run_verify(index, cfg, answer=c, save=False)
        times.append(time.perf_counter() - t0)
    return {"times": times}


def run_side(tree: str | None, task: str, index: Path, n: int, env: dict) -> dict:
    cmd = [sys.executable, __file__, "--worker", task, "--index", str(index), "--n", str(n)]
    if tree:
        cmd += ["--tree", tree]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(), timeout=7200)
    if p.returncode != 0:
        raise SystemExit(f"{task} ({tree or 'after'}) failed: {p.stderr.strip()[-600:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--claims", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    ap.add_argument("--index", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.tree, a.worker, a.index, a.n)))
        return

    work = Path(tempfile.mkdtemp(prefix="honest-cost-"))
    env = dict(os.environ, XDG_DATA_HOME=str(work / "xdg"))
    before = work / "before"
    before.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", a.before], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
    sides = {"before": str(before), "after": None}
    out: dict = {"before": a.before, "rounds": a.rounds, "questions": a.n, "claims": a.claims,
                 "cores": os.cpu_count(), "load": os.getloadavg(), "index": {}, "ask": {}, "verify": {}}
    try:
        for r in range(a.rounds):
            for side, tree in (sides.items() if r % 2 == 0 else reversed(sides.items())):
                idx = work / f"idx-{side}-{r}"
                out["index"].setdefault(side, []).append(run_side(tree, "index", idx, 0, env)["seconds"])
                out["ask"].setdefault(side, []).extend(run_side(tree, "ask", idx, a.n, env)["times"])
                out["verify"].setdefault(side, []).extend(run_side(tree, "verify", idx, a.claims, env)["times"])
                shutil.rmtree(idx, ignore_errors=True)
                print(f"round {r + 1} {side}: done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = {}
    for part in ("index", "ask", "verify"):
        b, f = out[part]["before"], out[part]["after"]
        summary[part] = {"before_mean": statistics.mean(b), "after_mean": statistics.mean(f),
                         "before_p50": statistics.median(b), "after_p50": statistics.median(f),
                         "ratio_mean": statistics.mean(f) / statistics.mean(b)}
    out["summary"] = summary
    out["goals"] = {"ask_ratio_le_1.5": summary["ask"]["ratio_mean"] <= 1.5,
                    "verify_p50_le_0.2s": summary["verify"]["after_p50"] <= 0.2,
                    "index_within_10pct": abs(summary["index"]["ratio_mean"] - 1) <= 0.10}
    print(f"{'part':8} {'before':>10} {'after':>10} {'ratio':>7}   (seconds; ask/verify per item, mean; p50 in JSON)")
    for part, s in summary.items():
        print(f"{part:8} {s['before_mean']:10.3f} {s['after_mean']:10.3f} {s['ratio_mean']:7.2f}")
    print(f"verify p50 per claim: before {summary['verify']['before_p50']:.3f} s, after {summary['verify']['after_p50']:.3f} s")
    print("goals: " + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in out["goals"].items()))
    dest = a.out or ROOT / "bench" / "results" / f"honest_cost-{dt.date.today().isoformat()}.json"
    dest.write_text(json.dumps(out, indent=1))
    print(f"→ {dest}")


if __name__ == "__main__":
    main()
