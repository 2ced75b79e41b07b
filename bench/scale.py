"""How `provrag index` grows with the corpus: 1×, 2×, 4×, 8× a corpus, time and peak memory.

    .venv/bin/python bench/scale.py [--docs DIR] [--max-files 80] [--sizes 1,2,4,8] [--seed 0]
                                    [--workers 2] [--out FILE]

Default corpus: the TeX Live documentation PDFs (~600 files, ~15,000 pages) that
../shared/corpora/fetch-debian-docs.sh fetches as `pdf-texlive`, downloaded once into
bench/.corpora/pdf-texlive (gitignored). The files are shuffled with --seed and the run at
size k× indexes the first k·(max-files / largest size) of them — distinct real documents,
each set a superset of the smaller ones, so 8× is --max-files files. Each size is one
`provrag index` CLI run in a fresh output folder (cold: no parse cache), in a child process
whose peak RSS (its whole process tree, os.wait4) and wall time are measured from out here.

Pages differ from file to file, so the growth exponent b (time ∝ size^b, least squares on
log-log) is fitted against the pages actually indexed, and also against text units and the
file multiplier; b ≈ 1 is linear. Prints a table, writes bench/results/scale-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
FETCH = SHARED / "corpora" / "fetch-debian-docs.sh"
DEFAULT_DOCS = ROOT / "bench" / ".corpora" / "pdf-texlive"
DOC_EXT = {".pdf", ".docx", ".pptx", ".html", ".htm", ".md", ".markdown", ".txt", ".gz"}


def fit_exponent(xs: list[float], ys: list[float]) -> float | None:
    """Slope of log y on log x (least squares)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x and y and x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return round(sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx, 3)


def ensure_docs(docs: Path) -> None:
    if docs.is_dir() and any(docs.iterdir()):
        return
    if docs != DEFAULT_DOCS:
        sys.exit(f"error: no documents in {docs}")
    if not FETCH.exists():
        sys.exit(f"error: no corpus at {docs} and no fetch script at {FETCH}")
    print(f"fetching the TeX Live PDFs into {docs} …", file=sys.stderr, flush=True)
    subprocess.run(["bash", str(FETCH), str(docs), "pdf-texlive"], check=True, stdout=subprocess.DEVNULL)


def list_docs(docs: Path) -> list[Path]:
    return sorted(p for p in docs.rglob("*") if p.is_file() and p.suffix.lower() in DOC_EXT
                  and "licenses" not in p.relative_to(docs).parts and not p.name.startswith("."))


def run_index(docs: Path, out: Path, cfg: Path | None, env: dict, timeout: float) -> dict:
    provrag = str(Path(sys.executable).parent / "provrag")
    cmd = [provrag, "index", str(docs), "--out", str(out), "--json"] + (["--config", str(cfg)] if cfg else [])
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        p = subprocess.Popen(cmd, stdout=so, stderr=se, env=env, cwd=ROOT)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                p.kill()
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.1)
        wall = time.perf_counter() - t0
        so.seek(0)
        se.seek(0)
        out_text, err_text = so.read(), se.read()
    code = os.waitstatus_to_exitcode(status)
    res = {"wall_seconds": round(wall, 2), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1), "exit": code}
    if code != 0:
        res["error"] = (err_text.strip().splitlines() or ["?"])[-1][:300]
        return res
    try:
        summary = json.loads(out_text)
    except ValueError:
        summary = {}
    m = json.loads((out / "manifest.json").read_text())
    c = m.get("counts", {})
    res.update({"pages": c.get("pages"), "documents_ok": c.get("documents_ok"), "documents": c.get("documents"),
                "text_units": c.get("text_units"), "entities": c.get("entities"), "communities": c.get("communities"),
                "timings": m.get("timings"), "index_mb": round(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20, 1)})
    if summary.get("seconds") is not None:
        res["pipeline_seconds"] = summary["seconds"]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="corpus folder (default: TeX Live PDFs, fetched once)")
    ap.add_argument("--max-files", type=int, default=80, help="files in the largest run (the base is max-files / largest size)")
    ap.add_argument("--sizes", default="1,2,4,8", help="multipliers of the base corpus")
    ap.add_argument("--seed", type=int, default=0, help="shuffle of the files (0 keeps it deterministic too)")
    ap.add_argument("--workers", type=int, default=0, help="[load] workers (0 = config.toml's)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per size before it is killed")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default bench/results/scale-<date>.json)")
    a = ap.parse_args()

    sizes = sorted({int(s) for s in a.sizes.split(",") if s.strip()})
    ensure_docs(a.docs)
    files = list_docs(a.docs)
    random.Random(a.seed).shuffle(files)
    base = max(1, min(a.max_files, len(files)) // sizes[-1])
    if base * sizes[-1] > len(files):
        sys.exit(f"error: {len(files)} files in {a.docs}, {base * sizes[-1]} needed")
    work = Path(tempfile.mkdtemp(prefix="provrag-scale-"))
    env = dict(os.environ, XDG_DATA_HOME=str(work / "xdg-data"), XDG_CACHE_HOME=str(work / "xdg-cache"))
    cfg = None
    if a.workers:
        cfg = work / "cfg.toml"
        cfg.write_text(f"[load]\nworkers = {a.workers}\n")
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    rep = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "docs": str(a.docs),
           "files_available": len(files), "base_files": base, "seed": a.seed,
           "machine": {"cores": os.cpu_count(), "cpu_model": cpu, "load_average_at_start": [round(x, 2) for x in os.getloadavg()]},
           "runs": []}
    print(f"{a.docs}: {len(files)} files; base {base} files; sizes {sizes}", file=sys.stderr, flush=True)
    try:
        for k in sizes:
            docs = work / f"docs-{k}x"
            docs.mkdir()
            for i, f in enumerate(files[:base * k]):
                rel = f.relative_to(a.docs)
                dest = docs / f"{i:05d}-{rel.as_posix().replace('/', '_')}"  # flat and distinct
                try:
                    os.link(f, dest)
                except OSError:
                    shutil.copyfile(f, dest)
            print(f"indexing {k}× ({base * k} files) …", file=sys.stderr, flush=True)
            r = run_index(docs, work / f"idx-{k}x", cfg, env, a.timeout)
            r.update({"size": k, "files": base * k})
            rep["runs"].append(r)
            shutil.rmtree(work / f"idx-{k}x", ignore_errors=True)
            shutil.rmtree(docs, ignore_errors=True)
            if r["exit"] != 0:
                print(f"  failed: {r.get('error')}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ok = [r for r in rep["runs"] if r["exit"] == 0]
    rep["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    rep["growth_exponent"] = {
        "time_vs_pages": fit_exponent([r["pages"] for r in ok], [r["wall_seconds"] for r in ok]),
        "time_vs_text_units": fit_exponent([r["text_units"] for r in ok], [r["wall_seconds"] for r in ok]),
        "time_vs_size": fit_exponent([r["size"] for r in ok], [r["wall_seconds"] for r in ok]),
        "peak_rss_vs_pages": fit_exponent([r["pages"] for r in ok], [r["peak_rss_mb"] for r in ok]),
        "pipeline_time_vs_pages": fit_exponent([r["pages"] for r in ok], [r.get("pipeline_seconds") for r in ok]),
    }
    lines = [f"Machine: {os.cpu_count()} cores, {cpu}; load average {rep['machine']['load_average_at_start']} at start, "
             f"{rep['machine']['load_average_at_end']} at end. Corpus {a.docs} ({len(files)} files, seed {a.seed}).", "",
             "| size | files | pages | text units | entities | wall s | pipeline s | pages/s | peak RSS MB | index MB |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rep["runs"]:
        if r["exit"] != 0:
            lines.append(f"| {r['size']}× | {r['files']} | failed: {r.get('error', '')[:80]} | | | {r['wall_seconds']:.1f} | | | "
                         f"{r['peak_rss_mb']:.0f} | |")
            continue
        lines.append(f"| {r['size']}× | {r['files']} | {r['pages']} | {r['text_units']} | {r['entities']} | {r['wall_seconds']:.1f} | "
                     f"{r.get('pipeline_seconds') or 0:.1f} | {r['pages'] / r['wall_seconds']:.1f} | {r['peak_rss_mb']:.0f} | {r['index_mb']} |")
    g = rep["growth_exponent"]
    lines += ["", f"Growth exponent (log-log least squares; 1 = linear): wall time vs pages **{g['time_vs_pages']}**, "
                  f"vs text units {g['time_vs_text_units']}, vs file multiplier {g['time_vs_size']}; pipeline time "
                  f"(imports excluded) vs pages {g['pipeline_time_vs_pages']}; peak RSS vs pages {g['peak_rss_vs_pages']}."]
    if ok:
        stages = [s for s in (ok[-1].get("timings") or {}) if s != "total"]
        if stages:
            lines += ["", "| size | " + " | ".join(stages) + " |", "| ---: |" + " ---: |" * len(stages)]
            for r in ok:
                t = r.get("timings") or {}
                lines.append(f"| {r['size']}× | " + " | ".join(f"{t.get(s, 0):.2f}" for s in stages) + " |")
    text = "\n".join(lines)
    rep["table"] = text
    print(text)
    out = a.out or ROOT / "bench" / "results" / f"scale-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rep, indent=1) + "\n")
    print(f"\nwritten: {out}", file=sys.stderr)
    return 0 if len(ok) == len(rep["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
