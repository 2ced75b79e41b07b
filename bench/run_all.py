"""Every speed bench of bench/ in one run, one JSON record and one markdown table (issue #7).

    .venv/bin/python bench/run_all.py [--only index,resolve,ask,embed,cost] [--skip ...]
                                      [--resolve-units 1000000] [--ask-n 20] [--ask-cli 5]
                                      [--cost-docs DIR] [--out-dir bench/results]

Runs, one after another on this machine (each in its own child process, so each child's peak
RSS is its own — os.wait4 — and a failing bench is recorded without stopping the others):

- index:   bench/index_speed.py — provrag's full index of the 10 Debian manuals against
           docling's own conversion (NativePdfPipeline) and bare pypdfium2, same PDFs, same
           run: ratio to docling, pages/s, per-stage seconds, peak RSS;
- resolve: bench/resolve_speed.py — citation resolution on a synthetic --resolve-units index,
           provrag's DuckDB path against the pandas path (speed-up measured in the run);
- ask:     bench/ask_speed.py — `ask` latency p50/p95 per method, in-process and through the
           CLI, on the ~10,000-unit bench corpus indexed first (into a temp folder);
- embed:   bench/embed_quality.py — retrieval hit@k/MRR of each embedder on SQuAD-over-PDF;
- cost:    the openai engine against the scripted server tests/llm_server.py: one index with
           KET-RAG's skeleton ([skeleton] beta, default 0.25), one with every unit extracted
           (beta 1.0, what GraphRAG does), in the same run on the same documents: LLM calls
           and tokens of both, their ratio, the manifest's own full-extraction estimate, and
           the calls of a cached re-run (must be 0);
- kill:    tests/test_reliability.py's kill -9 run with --kills moments (20 by default): after
           each kill the previous index answers and a re-run completes from the cache.

Writes bench/results/<date>.json (every figure, the machine described) and <date>.md (the
tables, also printed). Traces go to a temp XDG_DATA_HOME, never the user's.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
STEPS = ("index", "resolve", "ask", "embed", "cost", "kill")


# ---- the machine ------------------------------------------------------------------------------

def machine() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cores": os.cpu_count(), "usable_cores": affinity, "cpu_model": cpu, "memory_gib": mem_gib,
            "python": platform.python_version(), "platform": platform.platform(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


# ---- running one child -----------------------------------------------------------------------

def run_child(cmd: list[str], log: Path, env: dict, timeout: float) -> dict:
    """Run cmd with stdout+stderr to `log`; wall seconds, exit status, peak RSS (child tree)."""
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True)
        deadline = t0 + timeout
        status = ru = None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                os.killpg(p.pid, 9)
                _, status, ru = os.wait4(p.pid, 0)
                status = None
                break
            time.sleep(0.2)
        p.returncode = os.waitstatus_to_exitcode(status) if status is not None else -9
    return {"cmd": " ".join(map(str, cmd[1:])), "wall_seconds": round(time.perf_counter() - t0, 2),
            "exit": p.returncode, "timed_out": status is None,
            "peak_rss_mb": round(ru.ru_maxrss / 1024, 1) if ru else None, "log": str(log)}


def _tail(log: Path, n: int = 3) -> str:
    lines = [x for x in Path(log).read_text(errors="replace").splitlines() if x.strip()]
    return " | ".join(lines[-n:])[-400:]


def _newest(pattern: str, since: float) -> Path | None:
    files = [p for p in (BENCH / "results").glob(pattern) if p.stat().st_mtime >= since - 1]
    return max(files, key=lambda p: p.stat().st_mtime) if files else None


# ---- the steps -------------------------------------------------------------------------------

def step_index(a, env, work) -> dict:
    t = time.time()
    run = run_child([sys.executable, str(BENCH / "index_speed.py"), "--workers", str(a.workers)],
                    work / "index_speed.log", env, a.timeout)
    f = _newest("index_speed-*.json", t)
    if run["exit"] != 0 or f is None:
        return {"run": run, "unavailable": _tail(work / "index_speed.log")}
    return {"run": run, "result_file": str(f.relative_to(ROOT)), **json.loads(f.read_text())}


def step_resolve(a, env, work) -> dict:
    t = time.time()
    run = run_child([sys.executable, str(BENCH / "resolve_speed.py"), "--units", str(a.resolve_units),
                     "--citations", str(a.resolve_citations), "--work", str(a.resolve_work)],
                    work / "resolve_speed.log", env, a.timeout)
    f = _newest("resolve_speed-*.json", t)
    if run["exit"] != 0 or f is None:
        return {"run": run, "unavailable": _tail(work / "resolve_speed.log")}
    return {"run": run, "result_file": str(f.relative_to(ROOT)), **json.loads(f.read_text())}


ASK_ROW = re.compile(r"^(\w+)\s+([\d.]+|nan)\s+([\d.]+|nan)\s+([\d.]+|nan)\s+([\d.]+|nan)\s*$")


def step_ask(a, env, work) -> dict:
    idx = work / "ask-index"
    run = run_child([sys.executable, str(BENCH / "ask_speed.py"), "--build", str(idx), "--n", str(a.ask_n),
                     "--cli", str(a.ask_cli), "--methods", a.ask_methods], work / "ask_speed.log", env, a.timeout)
    text = (work / "ask_speed.log").read_text(errors="replace")
    shutil.rmtree(idx, ignore_errors=True)
    methods = {}
    for line in text.splitlines():
        m = ASK_ROW.match(line.strip())
        if m and m.group(1) in a.ask_methods.split(","):
            v = [float(x) for x in m.groups()[1:]]
            methods[m.group(1)] = {"in_process_p50_s": v[0], "in_process_p95_s": v[1], "cli_p50_s": v[2], "cli_p95_s": v[3]}
    out = {"run": run, "questions_in_process": a.ask_n, "questions_cli": a.ask_cli, "methods": methods,
           "failures": [x.strip() for x in text.splitlines() if "CLI failed" in x][:5]}
    m = re.search(r"indexed (\d+) documents → (\d+) text units, (\d+) reports in (\d+) s", text)
    if m:
        out["corpus"] = {"documents": int(m.group(1)), "text_units": int(m.group(2)), "reports": int(m.group(3)),
                         "index_seconds": int(m.group(4))}
    m = re.search(r"rerank (\w+)", text)
    if m:
        out["rerank"] = m.group(1)
    if run["exit"] != 0 or not methods:
        out["unavailable"] = _tail(work / "ask_speed.log")
    return out


def step_embed(a, env, work) -> dict:
    f = BENCH / "results" / f"embed_quality-{dt.date.today().isoformat()}.json"
    cmd = [sys.executable, str(BENCH / "embed_quality.py"), "--out", str(f), "--granularity", *a.embed_granularity]
    if not a.embed_windows:
        cmd.append("--no-windows")
    if a.embed_limit:
        cmd += ["--limit", str(a.embed_limit)]
    run = run_child(cmd, work / "embed_quality.log", env, a.timeout)
    if run["exit"] != 0 or not f.exists():
        return {"run": run, "unavailable": _tail(work / "embed_quality.log")}
    return {"run": run, "result_file": str(f.relative_to(ROOT)), **json.loads(f.read_text())}


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def step_cost(a, env, work) -> dict:
    """openai engine against tests/llm_server.py: skeleton extraction vs extraction of every unit."""
    port = _free_port()
    key_env, key = "PROVRAG_BENCH_KEY", "sk-bench-not-a-real-key"
    srv = subprocess.Popen([sys.executable, "-m", "tests.llm_server", "--port", str(port)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs: dict = {}
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            return {"unavailable": "tests.llm_server did not start"}
        base = (f'[llm]\nengine = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "scripted"\n'
                f'api_key_env = "{key_env}"\n')
        cenv = dict(env, **{key_env: key})
        provrag = str(Path(sys.executable).parent / "provrag")
        plan = (("skeleton", "", "skeleton"), ("skeleton_rerun", "", "skeleton"), ("full", "[skeleton]\nbeta = 1.0\n", "full"))
        for name, extra, folder in plan:
            cfg = work / f"cost-{folder}.toml"
            cfg.write_text(base + extra)
            out = work / f"cost-{folder}"
            run = run_child([provrag, "index", str(a.cost_docs), "--out", str(out), "--config", str(cfg)],
                            work / f"cost-{name}.log", cenv, a.timeout)
            if run["exit"] != 0:
                runs[name] = {"run": run, "unavailable": _tail(work / f"cost-{name}.log")}
                continue
            m = json.loads((out / "manifest.json").read_text())
            llm = m.get("llm") or {}
            runs[name] = {"run": run, "skeleton": m.get("skeleton"), "counts": m.get("counts"),
                          "calls": llm.get("calls"), "cached": llm.get("cached"), "failed": llm.get("failed"),
                          "input_tokens": llm.get("input_tokens"), "output_tokens": llm.get("output_tokens"),
                          "by_stage": {k: {x: v.get(x) for x in ("calls", "input_tokens", "output_tokens")}
                                       for k, v in (llm.get("by_stage") or {}).items()},
                          "extraction_cost_estimate": m.get("extraction_cost"), "index_seconds": (m.get("timings") or {}).get("total")}
    finally:
        srv.terminate()
        srv.wait(timeout=10)
        for folder in ("skeleton", "full"):
            shutil.rmtree(work / f"cost-{folder}", ignore_errors=True)
    res = {"docs": str(a.cost_docs), "engine": "openai → tests/llm_server.py (scripted)", "runs": runs}
    sk, full = runs.get("skeleton", {}), runs.get("full", {})
    if sk.get("calls") and full.get("calls"):
        def ratio(x, y):
            return round(x / y, 3) if y else None
        sx, fx = sk["by_stage"].get("extract", {}), full["by_stage"].get("extract", {})
        res["ratios_skeleton_over_full"] = {
            "llm_calls": ratio(sk["calls"], full["calls"]),
            "tokens": ratio(sk["input_tokens"] + sk["output_tokens"], full["input_tokens"] + full["output_tokens"]),
            "extract_calls": ratio(sx.get("calls") or 0, fx.get("calls") or 0),
            "extract_tokens": ratio((sx.get("input_tokens") or 0) + (sx.get("output_tokens") or 0),
                                    (fx.get("input_tokens") or 0) + (fx.get("output_tokens") or 0)),
        }
    else:
        res["unavailable"] = "; ".join(f"{k}: {v.get('unavailable')}" for k, v in runs.items() if v.get("unavailable")) \
            or "no LLM calls recorded"
    return res


def step_kill(a, env, work) -> dict:
    kenv = dict(env, PROVRAG_RELIABILITY_KILLS=str(a.kills))
    run = run_child([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-m", "slow",
                     "tests/test_reliability.py", "-k", "kill"], work / "kill.log", kenv, a.timeout)
    text = (work / "kill.log").read_text(errors="replace")
    out = {"run": run, "kills_asked": a.kills, "passed": run["exit"] == 0}
    m = re.search(r"kill -9 moments \(s, run ≈ ([\d.]+) s\): (\[.*\])", text)
    if m:
        moments = re.findall(r"\(([\d.]+), '(\w+)'\)", m.group(2))
        out.update({"run_seconds": float(m.group(1)), "moments": [[float(t), w] for t, w in moments],
                    "killed": sum(w == "killed" for _, w in moments), "finished_before_kill": sum(w == "finished" for _, w in moments)})
    if run["exit"] != 0:
        out["unavailable"] = f"reliability run failed: {_tail(work / 'kill.log', 5)}"
    return out


# ---- the tables ------------------------------------------------------------------------------

def _f(x, nd=2, suffix="") -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{nd}f}{suffix}"
    return f"{x}{suffix}"


def markdown(rep: dict) -> str:
    m = rep["machine"]
    L = [f"# provrag bench — {rep['date']}", "",
         f"Machine: {m['cores']} cores ({m['usable_cores']} usable), {m['cpu_model']}, {m['memory_gib']} GiB RAM, "
         f"Python {m['python']}; load average {m['load_average_at_start']} at start, {m.get('load_average_at_end')} at end. "
         f"Total {rep['total_seconds']:.0f} s. Every ratio below is between two figures measured in this run.", ""]
    ix = rep["steps"].get("index")
    if ix:
        L += ["## Index speed (10 Debian manuals, PDF)", ""]
        if ix.get("unavailable"):
            L += [f"unavailable: {ix['unavailable']}", ""]
        else:
            L += ["| measure | wall s | pages | pages/s | peak RSS MB |", "| --- | ---: | ---: | ---: | ---: |"]
            for name, r in ix["results"].items():
                if "unavailable" in r:
                    L.append(f"| {name} | – | – | – | unavailable: {r['unavailable'][:80]} |")
                else:
                    L.append(f"| {name} | {_f(r['wall_seconds'])} | {_f(r.get('pages'))} | {_f(r.get('pages_per_second'), 1)} "
                             f"| {_f(r.get('peak_rss_mb'), 0)} |")
            t = ix["results"].get("index", {}).get("timings") or {}
            if t:
                L += ["", "Index stages (s): " + ", ".join(f"{k} {v:.2f}" for k, v in t.items())]
            r = ix.get("ratios", {})
            L += ["", f"Ratios ({r.get('provrag_measured')} wall time): provrag / docling = **{_f(r.get('provrag_over_docling'))}** "
                      f"(target ≤ 1.5), provrag / pypdfium2 = {_f(r.get('provrag_over_pypdfium2'))}", ""]
    rs = rep["steps"].get("resolve")
    if rs:
        L += ["## Resolve speed (DuckDB vs pandas)", ""]
        if rs.get("unavailable"):
            L += [f"unavailable: {rs['unavailable']}", ""]
        else:
            d, p = rs["duckdb"], rs.get("pandas", {})
            pc = d["per_citation_ms"]
            L += [f"Synthetic index of {rs['index']['units']:,} text units ({rs['index']['mb_on_disk']} MB parquet), "
                  f"{rs['citations']['n']} citations (half Reports, half Sources).", "",
                  "| path | figure | value |", "| --- | --- | ---: |",
                  f"| DuckDB | batch of all citations (best of 3) | {d['batch_ms_best']:.0f} ms ({d['batch_ms_per_citation']} ms/citation) |",
                  f"| DuckDB | one at a time, p50 / p95 / max | {pc['median']} / {pc['p95']} / {pc['max']} ms |",
                  f"| DuckDB | lookup tables (built once per reader) | {d['lookup_tables_build_ms']:.0f} ms |",
                  f"| DuckDB | open index + resolve one (median) | {sorted(d['open_and_resolve_one_ms'])[len(d['open_and_resolve_one_ms']) // 2]} ms |"]
            if p:
                L += [f"| pandas | read tables + filter/rank | {p['load_seconds']} s + {p['filter_and_rank_seconds']} s = {p['total_seconds']} s |",
                      f"| ratio | pandas / DuckDB batch | **{rs['speedup_batch']}×** |",
                      f"| ratio | pandas / DuckDB one at a time (lookup build included) | {rs['speedup_one_at_a_time_incl_lookup_build']}× |",
                      f"| check | same top sources | {rs['same_top_sources']} |"]
            L.append("")
    ak = rep["steps"].get("ask")
    if ak:
        L += ["## Ask latency (offline engine)", ""]
        c = ak.get("corpus") or {}
        if c:
            L += [f"Bench corpus: {c['documents']} documents → {c['text_units']} text units, {c['reports']} reports "
                  f"(indexed in {c['index_seconds']} s); {ak['questions_in_process']} in-process and "
                  f"{ak['questions_cli']} CLI questions per method (SQuAD dev); rerank {ak.get('rerank')}.", ""]
        if ak.get("methods"):
            L += ["| method | in-process p50 s | p95 s | CLI p50 s | p95 s |", "| --- | ---: | ---: | ---: | ---: |"]
            for meth, v in ak["methods"].items():
                L.append(f"| {meth} | {v['in_process_p50_s']:.2f} | {v['in_process_p95_s']:.2f} | {v['cli_p50_s']:.2f} | {v['cli_p95_s']:.2f} |")
        if ak.get("unavailable"):
            L.append(f"unavailable: {ak['unavailable']}")
        L.append("")
    em = rep["steps"].get("embed")
    if em:
        L += ["## Embedding quality (SQuAD-over-PDF, gold page in top k)", ""]
        if em.get("unavailable"):
            L += [f"unavailable: {em['unavailable']}", ""]
        else:
            for gran, r in em["results"].items():
                L += [f"{gran}: {r['units']} units, {em['questions']} questions", "",
                      "| method | hit@1 | hit@3 | hit@5 | MRR |", "| --- | ---: | ---: | ---: | ---: |"]
                for meth, v in sorted(r["methods"].items(), key=lambda kv: -kv[1]["hit@5"]):
                    L.append(f"| {meth} | {v['hit@1']:.3f} | {v['hit@3']:.3f} | {v['hit@5']:.3f} | {v['mrr']:.3f} |")
                L += ["", "| embedder | units/s | seconds | query ms |", "| --- | ---: | ---: | ---: |"]
                for meth, v in r["speed"].items():
                    L.append(f"| {meth} | {v['units_per_s']:.1f} | {v['seconds']:.2f} | {_f(v.get('query_ms'))} |")
                L.append("")
    co = rep["steps"].get("cost")
    if co:
        L += ["## Cost: LLM calls and tokens, skeleton (KET-RAG) vs full extraction", ""]
        runs = co.get("runs", {})
        if runs:
            L += [f"Documents: {co['docs']}; engine {co['engine']}.", "",
                  "| run | units extracted / all | LLM calls | extract calls | input tokens | output tokens | index s |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for name, r in runs.items():
                if r.get("unavailable"):
                    L.append(f"| {name} | unavailable: {r['unavailable'][:100]} | | | | | |")
                    continue
                sk = r.get("skeleton") or {}
                ex = r["by_stage"].get("extract", {})
                L.append(f"| {name} | {sk.get('units')} / {sk.get('of')} | {r['calls']} | {ex.get('calls', 0)} | "
                         f"{r['input_tokens']:,} | {r['output_tokens']:,} | {_f(r.get('index_seconds'), 1)} |")
            est = (runs.get("skeleton") or {}).get("extraction_cost_estimate")
            if est:
                L.append(f"| manifest estimate of full extraction | {est['units']} / {est['units']} | – | {est['calls']} | "
                         f"{est['input_tokens']:,} | ~{est['output_tokens_est']:,} | – |")
        r = co.get("ratios_skeleton_over_full")
        if r:
            L += ["", f"Skeleton / full: LLM calls **{r['llm_calls']}**, tokens **{r['tokens']}**, extraction calls "
                      f"{r['extract_calls']}, extraction tokens {r['extract_tokens']}. "
                      f"Cached re-run: {(runs.get('skeleton_rerun') or {}).get('calls')} calls."]
        if co.get("unavailable"):
            L.append(f"unavailable: {co['unavailable']}")
        L.append("")
    kl = rep["steps"].get("kill")
    if kl:
        L += ["## Reliability: kill -9 during `provrag index`", ""]
        if kl.get("moments") is not None:
            L += [f"{kl['kills_asked']} moments drawn uniformly over 1.1× a run's length ({kl['run_seconds']:.1f} s): "
                  f"{kl['killed']} runs killed mid-way, {kl['finished_before_kill']} finished first; after each, the "
                  f"index {'answered and a re-run completed from the cache (0 LLM calls)' if kl['passed'] else 'check FAILED'}.",
                  ""]
        if kl.get("unavailable"):
            L += [f"unavailable: {kl['unavailable']}", ""]
    L += ["## Runs", "", "| step | wall s | peak RSS MB (child tree) | exit |", "| --- | ---: | ---: | ---: |"]
    for name, st in rep["steps"].items():
        run = st.get("run")
        if run:
            L.append(f"| {name} | {run['wall_seconds']:.0f} | {_f(run['peak_rss_mb'], 0)} | {run['exit']} |")
        elif name == "cost":
            for rn, r in st.get("runs", {}).items():
                L.append(f"| cost/{rn} | {r['run']['wall_seconds']:.0f} | {_f(r['run']['peak_rss_mb'], 0)} | {r['run']['exit']} |")
    return "\n".join(L) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(STEPS), help=f"steps to run (default all: {','.join(STEPS)})")
    ap.add_argument("--skip", default="", help="steps to leave out")
    ap.add_argument("--workers", type=int, default=2, help="index_speed: [load] workers")
    ap.add_argument("--resolve-units", type=int, default=1_000_000)
    ap.add_argument("--resolve-citations", type=int, default=100)
    ap.add_argument("--resolve-work", type=Path, default=Path(tempfile.gettempdir()) / "provrag-bench-resolve",
                    help="where the synthetic index is kept (reused across runs while unchanged)")
    ap.add_argument("--ask-n", type=int, default=15, help="ask_speed: in-process questions per method")
    ap.add_argument("--ask-cli", type=int, default=4, help="ask_speed: CLI calls per method")
    ap.add_argument("--ask-methods", default="basic,local,global")
    ap.add_argument("--embed-granularity", nargs="+", default=["unit"], choices=("unit", "page"))
    ap.add_argument("--embed-windows", action="store_true", help="also the windowed MiniLM variant (slower)")
    ap.add_argument("--embed-limit", type=int, default=0, help="embed_quality: first N questions only")
    ap.add_argument("--cost-docs", type=Path, default=SHARED / "corpora" / "small")
    ap.add_argument("--kills", type=int, default=20, help="kill -9 moments of the reliability run")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per bench before it is killed")
    ap.add_argument("--out-dir", type=Path, default=BENCH / "results")
    a = ap.parse_args()

    steps = [s for s in a.only.split(",") if s and s not in a.skip.split(",")]
    bad = [s for s in steps if s not in STEPS]
    if bad:
        ap.error(f"unknown steps {bad}; choose from {','.join(STEPS)}")
    work = Path(tempfile.mkdtemp(prefix="provrag-runall-"))
    env = dict(os.environ, XDG_DATA_HOME=str(work / "xdg-data"), XDG_CACHE_HOME=str(work / "xdg-cache"),
               PYTHONUNBUFFERED="1")
    rep = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
           "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()}, "steps": {}}
    fns = {"index": step_index, "resolve": step_resolve, "ask": step_ask, "embed": step_embed, "cost": step_cost,
           "kill": step_kill}
    t0 = time.perf_counter()
    try:
        for s in steps:
            print(f"[run_all] {s} … (log in {work})", file=sys.stderr, flush=True)
            ts = time.perf_counter()
            try:
                rep["steps"][s] = fns[s](a, env, work)
            except Exception as e:  # one broken bench must not lose the others' figures
                rep["steps"][s] = {"unavailable": f"{type(e).__name__}: {e}"}
            print(f"[run_all] {s} done in {time.perf_counter() - ts:.0f} s"
                  + (f" — unavailable: {rep['steps'][s]['unavailable']}" if rep["steps"][s].get("unavailable") else ""),
                  file=sys.stderr, flush=True)
    finally:
        rep["total_seconds"] = round(time.perf_counter() - t0, 1)
        rep["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        a.out_dir.mkdir(parents=True, exist_ok=True)
        day = dt.date.today().isoformat()
        (a.out_dir / f"{day}.json").write_text(json.dumps(rep, indent=1, default=str) + "\n")
        md = markdown(rep)
        (a.out_dir / f"{day}.md").write_text(md)
        print(md)
        print(f"written: {a.out_dir / f'{day}.json'} and {day}.md", file=sys.stderr)
        if any(st.get("unavailable") for st in rep["steps"].values()):
            print(f"logs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if not any(st.get("unavailable") for st in rep["steps"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
