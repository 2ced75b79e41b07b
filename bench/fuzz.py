"""`make fuzz`: the attack tests (tests/attack) at their large budget, and their figures.

usage: python bench/fuzz.py [--out FILE] [-- extra pytest arguments]

Runs `pytest -m fuzz tests/attack` with PROVRAG_FUZZ=full (Schemathesis: every operation, valid and
invalid data, 150 cases each, with and without the token; the MCP attacks; every property at its
large count; 30 kill -9 trials of an update while `provrag serve` answers; the short soak), each
test appending what it ran to a counts file; then writes bench/results/fuzz-<date>.json and .md:
operations x cases fuzzed and failures, property examples per property, crash trials and
consistent outcomes. Exit status: pytest's.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def summarise(rows: list[dict], exit_code: int, seconds: float) -> dict:
    http = [r for r in rows if r["test"] in ("with_token", "without_token")]
    crash = [r for r in rows if r["test"] == "crash"]
    props = {}
    for r in rows:
        if r["test"] == "property":
            props[r["property"]] = props.get(r["property"], 0) + r["examples"]
    return {"date": str(dt.date.today()), "pytest_exit": exit_code, "seconds": round(seconds),
            "machine": {"cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg(), "shared": True},
            "schemathesis": {"operations": len({r["operation"] for r in http}), "cases": sum(r["cases"] for r in http),
                             "failures": sum(r["failures"] for r in http), "runs": http},
            "properties": props,
            "crash": crash[-1] if crash else None}


def markdown(res: dict) -> str:
    s = res["schemathesis"]
    lines = [f"# fuzz — {res['date']}", "",
             f"`make fuzz` (PROVRAG_FUZZ=full), pytest exit {res['pytest_exit']}, {res['seconds']} s on the shared "
             "2-core machine (other developers' jobs ran at the same time).", "",
             f"## Schemathesis: {s['operations']} operations, {s['cases']} cases, {s['failures']} failures", "",
             "| operation | with token, valid | with token, invalid | without token |", "|---|---:|---:|---:|"]
    for op in sorted({r["operation"] for r in s["runs"]}):
        cell = {}
        for r in s["runs"]:
            if r["operation"] == op:
                key = "none" if r["test"] == "without_token" else r["mode"]
                cell[key] = f"{r['cases']}" + (f" ({r['failures']} failed)" if r["failures"] else "")
        lines.append(f"| {op} | {cell.get('positive', '–')} | {cell.get('negative', '–')} | {cell.get('none', '–')} |")
    lines += ["", "## Properties (Hypothesis examples)", "", "| property | examples |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in res["properties"].items()]
    c = res["crash"]
    if c:
        lines += ["", f"## kill -9 of `provrag index` during an update: {c['consistent']}/{c['trials']} consistent",
                  "", f"killed {c['killed']} times in windows {', '.join(c['windows'])}; `provrag serve` answered "
                  f"{c['served_requests']} requests meanwhile, {c['served_failures']} failed.", "",
                  "| window | fraction | killed at s | index after | rerun |", "|---|---:|---:|---|---|"]
        for o in c["outcomes"]:
            lines.append(f"| {o['window']} | {o['fraction']} | {o['at_s']} | {o['state'] or 'NEITHER'} | "
                         f"exit {o['rerun_exit']}{', differs: ' + ', '.join(o['rerun_differs']) if o['rerun_differs'] else ', = B'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--merge", type=Path, action="append", default=[],
                    help="also count the rows of this counts file (tests of tests/attack run apart, e.g. the crash "
                         "trials with PROVRAG_FUZZ=full PROVRAG_FUZZ_COUNTS=FILE pytest tests/attack/test_crash.py)")
    args, extra = ap.parse_known_args()
    counts = Path(tempfile.mkstemp(suffix=".jsonl")[1])
    env = dict(os.environ, PROVRAG_FUZZ="full", PROVRAG_FUZZ_COUNTS=str(counts))
    t0 = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-m", "fuzz", "tests/attack",
                            *[a for a in extra if a != "--"]], cwd=ROOT, env=env)
    rows = [json.loads(line) for f in (counts, *args.merge) for line in f.read_text().splitlines() if line.strip()]
    res = summarise(rows, code, time.monotonic() - t0)
    out = args.out or ROOT / "bench" / "results" / f"fuzz-{dt.date.today()}.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(res))
    print(markdown(res))
    print(f"wrote {out} and {out.with_suffix('.md')}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
