"""Issue #30's table in one run: how fast a question is answered, this code beside the commit before.

usage: python bench/question_speed.py [--base-ref 290dc73] [--reps 5] [--bench-index DIR]
         [--texlive-index DIR] [--million-index DIR] [--server-n 16] [--no-server] [--no-bytecode] [--out STEM] [--work DIR]

Every figure is measured for both trees in the same run, interleaved (base, new, base, new …),
so machine load falls on both alike; the ratio new ÷ base is the figure to trust on a shared
machine. The commit before is checked out as a detached worktree under --work and run through a
wrapper that puts that tree first on sys.path and drops the editable finder (the same venv, so the
same libraries). Rows:
- the floor: `python -c "import duckdb, pyarrow"` (interpreter start-up and the two libraries),
  run in the same rounds as the sample index's asks;
- `provrag ask` cold, median of --reps, wall time and peak RSS: the sample index (`make run`'s
  data/, indexed here once; the trees share a user cache, provrag/usercache.py, which the index
  run fills, and the new tree is also run with an empty one: the first ask after install) and the ~9,500-unit bench index (a link farm of --bench-index: ask
  writes its trace into INDEX/queries, so that folder is ours and the rest is read in place);
- the cold profile, stage by stage (imports, index open, retrieval, rerank/reader, answer check,
  citations, trace write) from one child process per tree, then the same question warm;
- the server (bench/serve_speed.py's start_server): /v1/ask p50 with 1 client, requests/s with 8
  clients ÷ 1 client, /v1/verify per claim p50;
- TeX Live (606 PDFs) and the 1M-unit rows when their indexes are given, else "not measured".
Writes bench/results/question_speed-<date>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

SAMPLE_QS = ["Who leads the Halcyon commissioning team?", "What caused the incident of 12 June 2025?"]
GOALS = {"cold_sample_x_floor": 4.0, "cold_sample_rss_mb": 250, "cold_bench_s": 1.5, "cold_texlive_s": 2.0,
         "ask_p50_s": 0.100, "texlive_ask_p50_s": 0.150, "clients8_over_1": 1.8, "verify_claim_p50_s": 0.150,
         "million_over_10k": 2.0}
NOT_GIVEN = "not measured: pass --texlive-index / --million-index"

# The child: one process per tree, the stages of one cold ask, then of another question warm (not
# the same one: ask keeps one question's readings for its retries). It runs as
# `python -c CHILD TREE INDEX QUESTION WARM_QUESTION` so the base tree's code is imported, never this one's.
CHILD = r"""
import os, sys, time, json, resource
t_start = time.perf_counter()
tree, index = sys.argv[1:3]
for module in filter(None, os.environ.get("QS_HIDE", "").split(",")):
    sys.modules[module] = None   # an accelerator the base tree does not pin (hidden_from)
if tree != "-":
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, tree)
def hwm_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
try:  # what `provrag ask` does first, in a tree that has it (allocation only)
    from provrag.serve.memory import settle_one_question
    settle_one_question()
except ImportError:
    pass
import provrag.cli
from provrag.config import load_config
import provrag.pipelines.ask as ask_pipeline
import provrag.store.reader as store_reader
imports_ms = 1000 * (time.perf_counter() - t_start)
hwm_imports = hwm_mb()
spent = {"index open": 0.0, "trace write": 0.0}
def timed(name, fn):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[name] += 1000 * (time.perf_counter() - t)
    return wrapper
store_reader.IndexReader.__init__ = timed("index open", store_reader.IndexReader.__init__)
ask_pipeline.save_trace = timed("trace write", ask_pipeline.save_trace)
cfg = load_config(None)
runs, answers = [], []
for question in sys.argv[3:5]:
    for k in spent: spent[k] = 0.0
    t = time.perf_counter()
    result = ask_pipeline.run_ask(question, index, cfg)
    answers.append(result.answer)
    total = 1000 * (time.perf_counter() - t)
    stages = {s.get("name"): s.get("ms", 0.0) for s in (result.trace or {}).get("stages", []) if isinstance(s, dict)}
    runs.append({"total_ms": total, "stages": stages, "hwm_mb": hwm_mb(), **spent})
print(json.dumps({"imports_ms": imports_ms, "runs": runs, "hwm_imports_mb": hwm_imports,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "answers": answers}))
"""
# the stage names ← the trace's stage names
STAGES = (("question (terms, method)", ("question",)), ("retrieval", ("exploration",)), ("rerank/reader", ("focus", "synthesis")),
          ("answer check", ("check",)), ("citations", ("citations",)))


def run_timed(argv: list[str], env: dict) -> tuple[float, str]:
    """Wall seconds of one child and its stdout."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, timeout=900)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… failed: {done.stderr.decode(errors='replace')[-400:]}")
    return wall, done.stdout.decode(errors="replace")


def peak_rss_run(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child, waited for with wait4 (its own rusage)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… failed: {proc.stderr.read().decode(errors='replace')[-400:]}")
    return wall, usage.ru_maxrss / 1024


def base_tree(ref: str, work: Path) -> Path:
    """The commit before, as a detached worktree (made once, reused while it is that commit)."""
    tree = work / "base"
    want = subprocess.run(["git", "-C", str(ROOT), "rev-parse", ref], capture_output=True, text=True,
                          check=True).stdout.strip()
    if tree.exists():
        have = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        if have == want:
            return tree
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), want], check=True,
                   capture_output=True)
    return tree


# C accelerators a library picks up when they are installed (distribution → module): snowballstemmer
# hands stemmer() to PyStemmer. This venv has them; a base tree whose pyproject does not pin one
# runs with it hidden (its import fails), as that tree ran when it was installed.
ACCELERATORS = {"PyStemmer": "Stemmer"}


def hidden_from(tree: Path) -> list[str]:
    """The accelerator modules `tree`'s pyproject.toml does not pin."""
    pins = (tree / "pyproject.toml").read_text()
    return [module for dist, module in ACCELERATORS.items() if f'"{dist}==' not in pins]


def wrapper(tree: Path, work: Path) -> Path:
    """An executable `provrag` that runs `tree`'s code with this venv's libraries (hidden_from's hidden)."""
    path = work / "provrag-base"
    hide = "".join(f"sys.modules['{m}'] = None\n" for m in hidden_from(tree))
    path.write_text(f"""#!/bin/sh
exec {sys.executable} -c "
import sys
{hide}sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]
sys.path.insert(0, '{tree}')
import provrag
assert provrag.__file__.startswith('{tree}'), provrag.__file__
from provrag.cli import main
sys.argv[0] = 'provrag'
main()
" "$@"
""")
    path.chmod(0o755)
    return path


def link_farm(index: Path, into: Path) -> Path:
    """A folder that reads `index` in place but keeps its own queries/ (ask writes traces there)."""
    if not into.exists():
        into.mkdir(parents=True)
        for entry in index.iterdir():
            if entry.name != "queries":
                (into / entry.name).symlink_to(entry.resolve())
    return into


def sample_index(work: Path, env: dict) -> Path:
    out = work / "sample-idx"
    if not (out / "manifest.json").exists():
        subprocess.run([str(Path(sys.executable).parent / "provrag"), "index", str(ROOT / "data"), "--out", str(out)],
                       env=env, check=True, capture_output=True)
    return out


FLOOR = [sys.executable, "-c", "import duckdb, pyarrow"]


def cold(clis: dict, index: Path, question: str, reps: int, env: dict, floor: bool = False,
         empty_cache: Path | None = None) -> dict:
    """Median wall time and RSS of `provrag ask` per tree (and of the floor), interleaved: each
    round runs every command once, so the load of the moment falls on all of them. The trees
    share the user cache of env (provrag/usercache.py: a user's second question onwards);
    `empty_cache`: also the new tree with an empty one each time (the first ask after install)."""
    argvs = {name: [str(cli), "ask", question, "--index", str(index), "--json"] for name, cli in clis.items()}
    if floor:
        argvs = {"floor": FLOOR, **argvs}
    if empty_cache is not None:
        argvs["new_empty_cache"] = argvs["new"]
    runs: dict = {name: [] for name in argvs}
    for rep in range(reps):
        for name, argv in argvs.items():
            run_env = env
            if name == "new_empty_cache":
                run_env = dict(env, PROVRAG_CACHE_DIR=str(empty_cache / f"empty-{os.getpid()}-{rep}"))
            runs[name].append(peak_rss_run(argv, run_env))
    return {name: {"median_s": statistics.median(w for w, _ in r), "rss_mb": statistics.median(m for _, m in r),
                   "walls_s": [w for w, _ in r]} for name, r in runs.items()}


def profile(trees: dict, index: Path, questions: list[str], env: dict) -> dict:
    """Per tree: the child's stages (ms) for questions[0] cold, then questions[1] warm."""
    out = {}
    for name, tree in trees.items():
        hide = ",".join(hidden_from(Path(tree))) if tree != "-" else ""
        _, said = run_timed([sys.executable, "-c", CHILD, tree, str(index), *questions[:2]], dict(env, QS_HIDE=hide))
        got = json.loads(said.strip().splitlines()[-1])
        rows = {}
        for label, run in (("cold", got["runs"][0]), ("warm", got["runs"][1])):
            st = run["stages"]
            row = {"imports": got["imports_ms"] if label == "cold" else 0.0, "index open": run["index open"]}
            row.update({k: sum(st.get(s, 0.0) for s in parts) for k, parts in STAGES})
            row["trace write"] = run["trace write"]
            row["other"] = run["total_ms"] - sum(v for k, v in row.items() if k != "imports")
            row["total"] = row["imports"] + run["total_ms"]
            rows[label] = row
        out[name] = {"stages_ms": rows, "peak_rss_mb": got["peak_rss_mb"], "answers": got["answers"],
                     "hwm_mb": {"imports": got.get("hwm_imports_mb"), "cold": got["runs"][0].get("hwm_mb"),
                                "warm": got["runs"][1].get("hwm_mb")}}
    return out


def main() -> None:
    from question_speed_server import server_rows

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-ref", default="290dc73", help="the commit before (default: main before issue 30)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--bench-index", type=Path, default=Path("/work/scratch/soak/bench-idx"),
                    help="the ~9,500-unit index (bench/ask_speed.py --build makes one); read, never written")
    ap.add_argument("--texlive-index", type=Path)
    ap.add_argument("--million-index", type=Path)
    ap.add_argument("--server-n", type=int, default=16, help="requests per server figure and tree")
    ap.add_argument("--no-server", action="store_true")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE: every import compiles its source, as this machine's "
                         "sessions set it (default: bytecode cached under --work, as pip compiles a wheel's)")
    ap.add_argument("--out", help="results file stem under bench/results (default question_speed-<date>)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "question_speed")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    # traces of a read-only index stay here; the user cache (provrag/usercache.py) too, filled by the
    # sample index's build as a user's is
    env = dict(os.environ, XDG_DATA_HOME=str(args.work / "xdg"), PROVRAG_CACHE_DIR=str(args.work / "usercache"))
    if not args.no_bytecode:   # a user's installed provrag has its .pyc files (~0.1 s of a cold ask's imports)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(args.work / "pycache")
    base = base_tree(args.base_ref, args.work)
    clis = {"base": wrapper(base, args.work), "new": Path(sys.executable).parent / "provrag"}
    trees = {"base": str(base), "new": "-"}
    result: dict = {"base_ref": args.base_ref, "machine": platform.platform(), "cpus": os.cpu_count(),
                    "bytecode": not args.no_bytecode,
                    "load_before": os.getloadavg(), "rows": {}}
    rows = result["rows"]

    sample = sample_index(args.work, env)
    rows["cold_sample"] = cold(clis, sample, SAMPLE_QS[0], args.reps, env, floor=True, empty_cache=args.work / "empty")
    rows["floor_s"] = rows["cold_sample"].pop("floor")["median_s"]
    print(f"floor (import duckdb, pyarrow, interleaved with the sample asks): {rows['floor_s']:.2f} s", flush=True)
    rows["profile_sample"] = profile(trees, sample, SAMPLE_QS, env)
    bench = link_farm(args.bench_index, args.work / "bench-idx") if args.bench_index.exists() else None
    squad = _questions()
    if bench:
        rows["cold_bench"] = cold(clis, bench, squad[0], args.reps, env)
        rows["profile_bench"] = profile(trees, bench, squad[:2], env)
    if args.texlive_index:
        rows["cold_texlive"] = cold(clis, link_farm(args.texlive_index, args.work / "texlive-idx"),
                                    "How do I change the page margins?", args.reps, env)
    if not args.no_server and bench:
        rows["server_bench"] = server_rows(clis, bench, squad, args.server_n, env, args.work)
    if not args.no_server and args.texlive_index:
        rows["server_texlive"] = server_rows(clis, args.work / "texlive-idx", squad, args.server_n, env, args.work)
    if args.million_index and bench:
        million = link_farm(args.million_index, args.work / "million-idx")
        rows["million"] = {"1M": profile(trees, million, squad[:2], env), "10k": rows["profile_bench"]}
    result["load_after"] = os.getloadavg()
    _write(result, args.out)


def _questions() -> list[str]:
    from ask_speed import EVAL_DEV

    return [json.loads(x)["question"] for x in (EVAL_DEV / "squad" / "questions.jsonl").read_text().splitlines()
            if x.strip()]


def _write(result: dict, stem: str | None = None) -> None:
    from question_speed_report import report

    md = report(result, GOALS, NOT_GIVEN)
    print(md)
    out = ROOT / "bench" / "results" / (stem or f"question_speed-{dt.date.today()}")
    out.with_suffix(".json").write_text(json.dumps(result, indent=1, default=str))
    out.with_suffix(".md").write_text(md)
    print(f"wrote {out}.json and .md")


if __name__ == "__main__":
    main()
