"""`make fuzz`: the attack tests (tests/attack) at their large budget, and their figures.

usage: python bench/fuzz.py [--out FILE] [--tests PATH ...] [--stop-after S] [-- extra pytest arguments]

Runs `pytest -m fuzz tests/attack tests/pipelines/test_reliability.py` with PROVRAG_FUZZ=full (Schemathesis: every operation, valid and
invalid data, 150 cases each, with and without the token; the MCP attacks; every property at its
large count; 30 kill -9 trials of an update while `provrag serve` answers; the short soak; 1,000
fuzzed citations and answers through resolve and verify), each
test appending what it ran to a counts file; then writes bench/results/fuzz-<date>-<commit>.json
and .md: the commit it ran at, the machine's load (sampled every 30 s), pytest's outcome per test,
operations x cases fuzzed and failures, property examples per property, crash trials and
consistent outcomes. Exit status: pytest's.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git_commit() -> dict:
    """The commit the run tested, and whether the worktree held uncommitted changes to tracked files."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return {"commit": head, "uncommitted_changes": bool(dirty)}


class LoadSampler(threading.Thread):
    """The 1-minute load average every `every` seconds while pytest runs: the figures of a shared
    2-core machine mean little without it (a test that waits on the machine fails at load 20)."""

    def __init__(self, every: float = 30.0):
        super().__init__(daemon=True)
        self.every, self.samples, self.stopped = every, [os.getloadavg()[0]], threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict:
        s = self.samples
        return {"samples": len(s), "every_s": self.every, "start": round(s[0], 2), "min": round(min(s), 2),
                "mean": round(sum(s) / len(s), 2), "max": round(max(s), 2)}


def test_outcomes(junit: Path) -> dict:
    """pytest's outcome per test file from its JUnit XML: passed/failed/errors/skipped, the names of
    the failing tests (so a partial failure says which part of the run it was)."""
    files: dict[str, dict] = {}
    if not junit.exists() or not junit.stat().st_size:
        return files
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = (case.get("classname") or "?").rsplit(".", 1)[-1]     # tests.attack.test_x -> test_x
        where = files.setdefault(name, {"passed": 0, "failed": 0, "errors": 0,
                                                                     "skipped": 0, "seconds": 0.0, "not_passed": []})
        where["seconds"] = round(where["seconds"] + float(case.get("time") or 0), 1)
        kind = next((k for k in ("failure", "error", "skipped") if case.find(k) is not None), None)
        where[{"failure": "failed", "error": "errors", "skipped": "skipped", None: "passed"}[kind]] += 1
        if kind in ("failure", "error"):
            where["not_passed"].append(f"{case.get('name')} ({kind})")
    return files


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
    load = res["machine"].get("load_avg_1min") or {}
    git = res.get("git") or {}
    lines = [f"# fuzz — {res['date']}", "",
             f"`make fuzz` (PROVRAG_FUZZ=full) at commit {git.get('commit', '?')[:10]}"
             f"{' (with uncommitted changes)' if git.get('uncommitted_changes') else ''}, started {res.get('started', '?')}"
             f"{', pytest arguments ' + ' '.join(res['pytest_args']) if res.get('pytest_args') else ''}, tests "
             f"{' '.join(res.get('tests_run') or ['tests/attack'])} in that order"
             f"{', INTERRUPTED after ' + str(round(res['interrupted_after_s'])) + ' s' if res.get('interrupted_after_s') else ''}: pytest exit "
             f"{res['pytest_exit']}, {res['seconds']} s on the shared {res['machine']['cpus']}-core machine (other "
             f"developers' jobs ran at the same time: 1-minute load {load.get('min', '?')}–{load.get('max', '?')}, "
             f"mean {load.get('mean', '?')}, sampled every {load.get('every_s', '?')} s).", "",
             "| test file | passed | failed | errors | skipped | s | not passed |", "|---|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {name} | {t['passed']} | {t['failed']} | {t['errors']} | {t['skipped']} | {t['seconds']} | "
              f"{'; '.join(t['not_passed']) or '–'} |" for name, t in sorted((res.get("tests") or {}).items())]
    lines += ["",
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
    ap.add_argument("--tests", nargs="+", default=["tests/attack", "tests/pipelines/test_reliability.py"],
                    help="what pytest runs, in this order (default: tests/attack, then the 1,000-example "
                         "fuzz of tests/pipelines/test_reliability.py); e.g. the files one by one, the "
                         "ones that matter most first, on a machine that may not give the run its whole time")
    ap.add_argument("--stop-after", type=float, default=None, metavar="S",
                    help="interrupt pytest (SIGINT) after S seconds: the tests that finished are recorded, the "
                         "results say the run was interrupted")
    args, extra = ap.parse_known_args()
    counts = Path(tempfile.mkstemp(suffix=".jsonl")[1])
    env = dict(os.environ, PROVRAG_FUZZ="full", PROVRAG_FUZZ_COUNTS=str(counts))
    t0 = time.monotonic()
    junit = counts.with_suffix(".xml")
    commit = git_commit()
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = LoadSampler()
    load.start()
    pytest = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-m", "fuzz", *args.tests, f"--junitxml={junit}",
                               *[a for a in extra if a != "--"]], cwd=ROOT, env=env)
    try:
        code, interrupted = pytest.wait(timeout=args.stop_after), False
    except subprocess.TimeoutExpired:        # pytest stops at SIGINT and still writes its report
        pytest.send_signal(signal.SIGINT)
        code, interrupted = pytest.wait(), True
    load.stopped.set()
    load.samples.append(os.getloadavg()[0])
    rows = [json.loads(line) for f in (counts, *args.merge) for line in f.read_text().splitlines() if line.strip()]
    res = summarise(rows, code, time.monotonic() - t0)
    res.update(started=started, git=commit, tests_run=args.tests,
               interrupted_after_s=args.stop_after if interrupted else None,
               pytest_args=[a for a in extra if a != "--"], tests=test_outcomes(junit))
    res["machine"]["load_avg_1min"] = load.summary()
    out = args.out or ROOT / "bench" / "results" / f"fuzz-{dt.date.today()}-{commit['commit'][:7]}.json"
    out.write_text(json.dumps(res, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(res))
    print(markdown(res))
    print(f"wrote {out} and {out.with_suffix('.md')}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
