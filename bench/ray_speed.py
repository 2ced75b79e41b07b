"""The executors side by side: `local` against `ray` with 1 and 2 workers, on the ten Debian
manuals, in one run (same machine state), and the tables each built compared.

    .venv/bin/python bench/ray_speed.py [--corpus DIR] [--rounds N]

Every configuration is one `provrag index CORPUS --out INDEX --json` process with a fresh
index folder (no cache to reuse), so its wall time includes start-up, imports and, for Ray,
starting a Ray of this machine for the run (`[executor] address = ""`) and stopping it. The
stage times are the pipeline's own (`timings` in the --json summary). Peak RSS is measured
twice: the `provrag` process alone (os.wait4), and the whole process tree sampled every
0.1 s from /proc (Ray's raylet, GCS and workers are the run's cost too). With `--rounds N`
the configurations take turns N times and the table shows each one's best round.

Parsing goes to the executor only when load.py estimates it at ≥ POOL_MIN_SECONDS (2 s); the
ten manuals (4.1 MB of PDF) are estimated at ~1.2 s, so `load` runs in provrag's process in all
three configurations, as it does by default.

Every parquet table of each Ray index is compared row for row with the local one
(`period`, the run's date, aside): "tables equal" says whether all of them were.

Prints a table and writes bench/results/ray_speed-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANUALS = Path("/work/manuals")
CONFIGS = {  # name → [executor] section
    "local": {"kind": "local"},
    "ray, 1 worker": {"kind": "ray", "num_workers": 1},
    "ray, 2 workers": {"kind": "ray", "num_workers": 2},
}
STAGES = ("load", "chunk", "embed", "skeleton", "extract", "communities", "reports", "write", "total")


def tree_rss_mb(root_pid: int) -> float:
    """RSS of root_pid and every process below it, from /proc (MB)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            statm = Path(f"/proc/{entry}/statm").read_text().split()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = int(statm[1]) * page
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / 1e6


def index_once(corpus: Path, out: Path, executor: dict) -> dict:
    """One `provrag index` process; its summary, wall time and peak RSS (own, and tree)."""
    conf = out.with_suffix(".toml")
    lines = ["[executor]"] + [f"{k} = {json.dumps(v)}" for k, v in executor.items()]
    conf.write_text("\n".join(lines) + "\n")
    cmd = [sys.executable, "-m", "provrag", "index", str(corpus), "--out", str(out), "--json", "--config", str(conf)]
    stdout = out.with_suffix(".out")
    peak = [0.0]
    t0 = time.perf_counter()
    with stdout.open("w") as so:
        proc = subprocess.Popen(cmd, stdout=so, stderr=subprocess.DEVNULL, cwd=ROOT)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], tree_rss_mb(proc.pid))
                done.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        sampler.join()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {proc.returncode}")
    summary = json.loads(stdout.read_text())
    return {"wall_seconds": round(seconds, 2), "timings": summary["timings"], "text_units": summary["text_units"],
            "peak_rss_mb": round(usage.ru_maxrss / 1024), "peak_tree_rss_mb": round(peak[0])}


def tables_equal(a: Path, b: Path) -> dict[str, bool]:
    import polars as pl

    out = {}
    for f in sorted(a.glob("*.parquet")):
        x = pl.read_parquet(f)
        y = pl.read_parquet(b / f.name) if (b / f.name).exists() else None
        drop = [c for c in ("period",) if c in x.columns]
        out[f.stem] = y is not None and x.drop(drop).equals(y.drop(drop))
    return out


def table(results: dict[str, dict]) -> str:
    head = "| executor | " + " | ".join(STAGES) + " | wall s | peak RSS MB (provrag / tree) | tables equal |"
    lines = [head, "|" + "---|" * (len(STAGES) + 4)]
    for name, r in results.items():
        t = r["timings"]
        equal = "(reference)" if r.get("tables_equal") is None else ("yes" if all(r["tables_equal"].values()) else
                                                                      "no: " + ", ".join(k for k, v in r["tables_equal"].items() if not v))
        lines.append(f"| {name} | " + " | ".join(f"{t.get(s, 0):.1f}" for s in STAGES)
                     + f" | {r['wall_seconds']:.1f} | {r['peak_rss_mb']} / {r['peak_tree_rss_mb']} | {equal} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=MANUALS)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    best: dict[str, dict] = {}
    rounds: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ray_speed-") as tmp:
        for r in range(args.rounds):
            for i, (name, executor) in enumerate(CONFIGS.items()):
                out = Path(tmp) / f"r{r}-{i}"
                res = index_once(args.corpus, out, executor)
                res["tables_equal"] = None if i == 0 else tables_equal(Path(tmp) / f"r{r}-0", out)
                print(f"round {r + 1}, {name}: {res['wall_seconds']} s, pipeline {res['timings']['total']} s, "
                      f"peak {res['peak_rss_mb']} / {res['peak_tree_rss_mb']} MB", flush=True)
                rounds.append({"round": r + 1, "executor": name, **res})
                if name not in best or res["wall_seconds"] < best[name]["wall_seconds"]:
                    best[name] = res
    text = table(best)
    print("\n" + text)
    record = {"date": dt.date.today().isoformat(), "corpus": str(args.corpus), "cpus": os.cpu_count(),
              "configs": CONFIGS, "best": best, "rounds": rounds, "table": text}
    path = ROOT / "bench" / "results" / f"ray_speed-{record['date']}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nwritten: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
