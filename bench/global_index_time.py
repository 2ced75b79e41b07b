"""Index time with sections and theme reports against the code before them, in one run.

usage: python bench/global_index_time.py [--base f58932e] [--docs DIR] [--rounds 3] [--max-ratio 1.2]

Builds a `git worktree` of --base (the commit before the sections stage and the c-TF-IDF
reports) in a temporary folder, then indexes --docs (default: the ten Debian manuals,
/work/cache/corpora/pdf-manuals) with the old code and with this tree, alternating old/new
--rounds times, each run a fresh index folder (no cache) in its own process with the same
Python. Prints each run's wall time and the new/old ratio of the medians, and per stage the
medians from the runs' logs; exits 1 when the ratio is above --max-ratio. Other work on the
machine slows both sides alike only on average: the alternation and the medians are what make
the ratio fair, so quote the load beside it.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGE = re.compile(r"index (\w+): done in ([0-9.]+) s")


def index_once(code: Path, docs: Path, out: Path) -> tuple[float, dict[str, float]]:
    """Wall seconds of one `provrag index` run of the tree at `code`, and its stages' seconds."""
    env = dict(os.environ, PYTHONPATH=str(code))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "provrag", "index", str(docs), "--out", str(out)],
                       cwd=code, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"index failed ({code}): {(r.stderr.strip().splitlines() or [''])[-1][:300]}")
    return wall, {m.group(1): float(m.group(2)) for m in STAGE.finditer(r.stderr + r.stdout)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="f58932e")
    ap.add_argument("--docs", default="/work/cache/corpora/pdf-manuals")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="global-index-time-"))
    old_tree = tmp / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(old_tree), a.base],
                   check=True, capture_output=True)
    times: dict[str, list[float]] = {"old": [], "new": []}
    stages: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    try:
        print(f"load before: {os.getloadavg()[0]:.1f}")
        for n in range(a.rounds):
            for side, code in (("old", old_tree), ("new", ROOT)):
                wall, per = index_once(code, Path(a.docs), tmp / f"{side}-{n}")
                times[side].append(wall)
                for k, v in per.items():
                    stages[side].setdefault(k, []).append(v)
                shutil.rmtree(tmp / f"{side}-{n}", ignore_errors=True)
                print(f"round {n + 1} {side}: {wall:.1f} s (load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_tree)], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    ratio = new / old
    print("| stage | old median s | new median s |\n| --- | --- | --- |")
    for k in dict.fromkeys(list(stages["old"]) + list(stages["new"])):
        o, w = stages["old"].get(k), stages["new"].get(k)
        print(f"| {k} | {statistics.median(o) if o else 0:.1f} | {statistics.median(w) if w else 0:.1f} |")
    print(f"{'holds: ' if ratio <= a.max_ratio else ''}index time new/old {ratio:.2f} (medians {new:.1f} s / "
          f"{old:.1f} s over {a.rounds} rounds each, {a.docs}); max {a.max_ratio}")
    return 0 if ratio <= a.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
