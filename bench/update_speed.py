"""An index over time, measured in one run: first build, unchanged re-run, one file added, one
changed, one removed — and the update's tables against a full rebuild of the same folder.

    .venv/bin/python bench/update_speed.py [--corpus DIR] [--no-openai]

The corpus is the ten Debian manuals (../shared/corpora/fetch-debian-docs.sh, fetched once into
bench/.corpora/pdf-manuals like bench/index_speed.py). Every step is one `provrag index DOCS
--out INDEX --json` process, so its wall time includes start-up and imports, as a user pays
them. The steps, in one working copy of the corpus:

  first      a new index of nine manuals (maintain.pdf held back)
  unchanged  the same folder again
  added      maintain.pdf copied in
  changed    fhs-3.0.pdf replaced by its first two thirds (a real edit: pages gone)
  removed    CAD.pdf deleted

After `removed`, the index as it was before that step is copied and rebuilt with `--full` over
the same folder; every table of the two must be equal (`period`, the run's date, aside).

With the `openai` engine (tests/llm_server.py, the scripted OpenAI-compatible server, which
counts every request it is sent) the same steps run again and each step's requests are
counted: an unchanged re-run must send none. A one-file change sends the requests of its own
units, of units of other files that the re-computed skeleton now picks, and of the reports of
communities whose input changed; the table says how many of each.

Prints a table and writes bench/results/update_speed-<date>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.index_speed import DEFAULT_CORPUS, ensure_corpus  # noqa: E402

PROVRAG = [sys.executable, "-m", "provrag"]
HELD_BACK, EDITED, REMOVED = "maintain.pdf", "fhs-3.0.pdf", "CAD.pdf"
TABLES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports",
          "keywords", "embeddings", "terms", "ids")
KEY_ENV = "PROVRAG_BENCH_LLM_KEY"


def truncate_pdf(src: Path, dst: Path, keep: float) -> int:
    """dst = the first `keep` share of src's pages (a real content change); returns pages kept."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(src))
    n = len(pdf)
    kept = max(1, int(n * keep))
    for i in range(n - 1, kept - 1, -1):
        pdf.del_page(i)
    pdf.save(str(dst))
    pdf.close()
    return kept


def index_step(docs: Path, out: Path, config: Path | None, env: dict, extra: list[str] | None = None) -> dict:
    cmd = PROVRAG + ["index", str(docs), "--out", str(out), "--json"] + (extra or [])
    if config is not None:
        cmd += ["--config", str(config)]
    t0 = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if run.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {run.returncode}: {run.stderr.strip()[-400:]}")
    summary = json.loads(run.stdout)
    return {"seconds": round(seconds, 2), "mode": summary.get("mode"), "timings": summary.get("timings"),
            "changes": (summary.get("changes") or {}).get("counts"), "ids": summary.get("ids"),
            "index_version": summary.get("index_version"), "llm": summary.get("llm"),
            "text_units": summary.get("text_units"), "skeleton_units": summary.get("skeleton_units")}


def compare_tables(a: Path, b: Path) -> dict:
    """table → equal? (polars frame equality; `period` — the run's date — left out)."""
    import polars as pl

    out = {}
    for t in TABLES:
        fa, fb = a / f"{t}.parquet", b / f"{t}.parquet"
        if not fa.is_file() or not fb.is_file():
            out[t] = fa.is_file() == fb.is_file()
            continue
        x, y = pl.read_parquet(fa), pl.read_parquet(fb)
        drop = [c for c in ("period",) if c in x.columns]
        out[t] = x.drop(drop).equals(y.drop(drop))
    return out


def run_steps(corpus: Path, work: Path, config: Path | None, env: dict, server=None) -> dict:
    docs, out = work / "docs", work / "index"
    docs.mkdir(parents=True)
    for p in sorted(corpus.glob("*.pdf")):
        if p.name != HELD_BACK:
            shutil.copy(p, docs / p.name)
    steps: dict[str, dict] = {}

    def step(name: str, extra: list[str] | None = None, target: Path = out) -> None:
        before = server.stats()["requests"] if server else None
        steps[name] = index_step(docs, target, config, env, extra)
        if server:
            steps[name]["requests"] = server.stats()["requests"] - before
        print(f"  {name:<10} {steps[name]['seconds']:6.2f} s  mode {steps[name]['mode']}"
              + (f"  requests {steps[name]['requests']}" if server else ""), file=sys.stderr)

    step("first")
    step("unchanged")
    shutil.copy(corpus / HELD_BACK, docs / HELD_BACK)
    step("added")
    truncate_pdf(corpus / EDITED, docs / EDITED, 2 / 3)
    step("changed")
    snapshot = work / "before-removed"
    shutil.copytree(out, snapshot)
    (docs / REMOVED).unlink()
    step("removed")
    step("full", ["--full"], target=snapshot)
    steps["equal_to_full_rebuild"] = compare_tables(out, snapshot)
    return steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--no-openai", action="store_true", help="skip the scripted-server run")
    args = ap.parse_args()
    ensure_corpus(args.corpus)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = {"date": dt.date.today().isoformat(), "corpus": str(args.corpus), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="provrag-update-") as tmp:
        print("offline engine:", file=sys.stderr)
        result["offline"] = run_steps(args.corpus, Path(tmp) / "offline", None, env)
        if not args.no_openai:
            from tests.llm_server import ScriptedLLMServer

            with ScriptedLLMServer() as server:
                cfg = Path(tmp) / "openai.toml"
                cfg.write_text(f'[llm]\nengine = "openai"\nbase_url = "{server.url}"\nmodel = "scripted"\n'
                               f'api_key_env = "{KEY_ENV}"\nconcurrency = 4\n')
                print("openai engine (scripted server):", file=sys.stderr)
                result["openai"] = run_steps(args.corpus, Path(tmp) / "openai", cfg, env | {KEY_ENV: "sk-bench"}, server)
    report(result)


def report(result: dict) -> None:
    lines = [f"# Index updates on the ten Debian manuals ({result['date']}, {result['cpus']} CPUs)", "",
             "| engine | step | seconds | of first run | mode | files +/~/- | requests to the model | units | "
             "ids added / changed / retired (text units) |", "|---|---|---|---|---|---|---|---|---|"]
    for engine in ("offline", "openai"):
        steps = result.get(engine)
        if not steps:
            continue
        first = steps["first"]["seconds"]
        for name in ("first", "unchanged", "added", "changed", "removed", "full"):
            s = steps[name]
            c = s.get("changes") or {}
            tu = (s.get("ids") or {}).get("text_units") or {}
            lines.append(f"| {engine} | {name} | {s['seconds']:.2f} | {s['seconds'] / first:.0%} | {s['mode']} | "
                         f"{c.get('added', 0)}/{c.get('changed', 0)}/{c.get('removed', 0)} | "
                         f"{s.get('requests', '–')} | {s.get('text_units')} | "
                         f"{tu.get('added', '–')} / {tu.get('changed', '–')} / {tu.get('retired', '–')} |")
        eq = steps["equal_to_full_rebuild"]
        lines.append("")
        lines.append(f"{engine}: update vs `--full` rebuild of the same folder — "
                     + ", ".join(f"{t} {'equal' if ok else 'DIFFERENT'}" for t, ok in eq.items()))
        lines.append("")
        stage_rows = {n: steps[n].get("timings") or {} for n in ("first", "added", "changed", "removed")}
        stages = [k for k in stage_rows["first"] if k != "total"]
        lines.append(f"{engine}, seconds per stage:")
        lines.append("")
        lines.append("| step | " + " | ".join(stages) + " |")
        lines.append("|---|" + "---|" * len(stages))
        for n, t in stage_rows.items():
            lines.append(f"| {n} | " + " | ".join(f"{t.get(k, 0):.2f}" for k in stages) + " |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    out = ROOT / "bench" / "results" / f"update_speed-{result['date']}"
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    out.with_suffix(".md").write_text(text + "\n")
    print(f"\nwrote {out}.json and .md", file=sys.stderr)


if __name__ == "__main__":
    main()
