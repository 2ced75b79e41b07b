"""How `provrag index` grows with the corpus: 10,000 → 100,000 text units, time and peak memory.

    .venv/bin/python bench/scale.py [--docs DIR] [--units 10000,20000,50000,100000] [--seed 0]
                                    [--workers 2] [--timeout 7200] [--out FILE]

Default corpus: the TeX Live documentation PDFs (~600 files, ~15,000 pages, ~37,000 text
units) that ../shared/corpora/fetch-debian-docs.sh fetches as `pdf-texlive`, downloaded once
into bench/.corpora/pdf-texlive (gitignored). The files are shuffled with --seed; a run that
targets U text units indexes the first files of that order until their text (measured once
with pypdfium2, cached beside the corpus) makes about U units, going round the list again
when it runs out — each round's copies under their own names (`r2-…`), as a user with
several copies of the same manuals would have them. Each set is a prefix of the next.

Each size is one cold `provrag index` run in a fresh output folder, in a child process whose
peak RSS (os.wait4) and wall time are measured from out here, with each stage's own peak RSS
(bench/big_text.py's stage hook). The growth exponent b (time ∝ size^b, least squares on
log-log) is fitted against the pages indexed and against text units; b ≈ 1 is linear.
Prints tables, writes bench/results/scale-<date>.json.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.big_text import index_measured  # after the path: bench/ is not a package

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
FETCH = SHARED / "corpora" / "fetch-debian-docs.sh"
DEFAULT_DOCS = ROOT / "bench" / ".corpora" / "pdf-texlive"
DOC_EXT = {".pdf", ".docx", ".pptx", ".html", ".htm", ".md", ".markdown", ".txt", ".gz"}
CHARS_PER_UNIT = 745  # first guess (the TeX Live text at [chunk] size_tokens = 300); refitted after each run


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


def text_sizes(docs: Path, files: list[Path]) -> dict[str, int]:
    """Characters of text per file (PDF page text by pypdfium2, other files' size), cached in
    DOCS/../.<name>-chars.json by (name, bytes): only a guide to how many units a file makes."""
    import pypdfium2 as pdfium

    cache_file = docs.parent / f".{docs.name}-chars.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    out = {}
    for f in files:
        key = f"{f.relative_to(docs).as_posix()}:{f.stat().st_size}"
        if key not in cache:
            chars = f.stat().st_size
            if f.suffix.lower() == ".pdf":
                try:
                    doc = pdfium.PdfDocument(str(f))
                    chars = sum(len(page.get_textpage().get_text_range()) for page in doc)
                    doc.close()
                except pdfium.PdfiumError:
                    chars = 0
            cache[key] = chars
        out[str(f)] = cache[key]
    cache_file.write_text(json.dumps(cache))
    return out


def pick(files: list[Path], sizes: dict[str, int], units: int, chars_per_unit: float) -> list[tuple[int, Path]]:
    """(round, file) in order until their text makes about `units` units; round 1 is the
    shuffled list, round 2 the same again, and so on."""
    chosen, chars, rnd = [], 0, 0
    while chars < units * chars_per_unit:
        rnd += 1
        for f in files:
            if chars >= units * chars_per_unit:
                break
            chosen.append((rnd, f))
            chars += sizes[str(f)]
        if not chars:
            break
    return chosen


def stage_tables(runs: list[dict]) -> list[str]:
    """Seconds and own peak RSS (MB) of each stage, one row per size."""
    ok = [r for r in runs if r["exit"] == 0 and r.get("stages")]
    if not ok:
        return []
    names = [s["stage"] for s in ok[-1]["stages"]]
    lines = ["", "Stage seconds / stage peak RSS MB:", "", "| text units | " + " | ".join(names) + " |",
             "| ---: |" + " ---: |" * len(names)]
    for r in ok:
        by = {s["stage"]: s for s in r["stages"]}
        lines.append(f"| {r['counts'].get('text_units')} | " + " | ".join(
            f"{by[n]['seconds']:.0f} s / {by[n]['peak_rss_mb']}" if n in by else "" for n in names) + " |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="corpus folder (default: TeX Live PDFs, fetched once)")
    ap.add_argument("--units", default="10000,20000,50000,100000", help="text units each run aims at")
    ap.add_argument("--seed", type=int, default=0, help="shuffle of the files (0 keeps it deterministic too)")
    ap.add_argument("--workers", type=int, default=0, help="[load] workers (0 = config.toml's)")
    ap.add_argument("--timeout", type=float, default=7200, help="seconds per size before it is killed")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default bench/results/scale-<date>.json)")
    a = ap.parse_args()

    targets = sorted({int(s) for s in a.units.split(",") if s.strip()})
    ensure_docs(a.docs)
    files = list_docs(a.docs)
    random.Random(a.seed).shuffle(files)
    sizes = text_sizes(a.docs, files)
    work = Path(tempfile.mkdtemp(prefix="provrag-scale-"))
    env = dict(os.environ, XDG_DATA_HOME=str(work / "xdg-data"), XDG_CACHE_HOME=str(work / "xdg-cache"))
    cfg = None
    if a.workers:
        cfg = work / "cfg.toml"
        cfg.write_text(f"[load]\nworkers = {a.workers}\n")
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    rep = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "docs": str(a.docs),
           "files_available": len(files), "seed": a.seed,
           "machine": {"cores": os.cpu_count(), "cpu_model": cpu, "memory_gb": round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30, 1),
                       "load_average_at_start": [round(x, 2) for x in os.getloadavg()]},
           "runs": []}
    print(f"{a.docs}: {len(files)} files, {sum(sizes.values()) / 1e6:.1f} M characters; targets {targets} units",
          file=sys.stderr, flush=True)
    chars_per_unit = CHARS_PER_UNIT
    try:
        for target in targets:
            chosen = pick(files, sizes, target, chars_per_unit)
            docs = work / f"docs-{target}"
            docs.mkdir()
            for i, (rnd, f) in enumerate(chosen):
                dest = docs / f"r{rnd}-{i:05d}-{f.relative_to(a.docs).as_posix().replace('/', '_')}"  # flat, distinct
                try:
                    os.link(f, dest)
                except OSError:
                    shutil.copyfile(f, dest)
            print(f"indexing ~{target} units ({len(chosen)} files) …", file=sys.stderr, flush=True)
            r = index_measured(docs, work / f"idx-{target}", cfg, a.timeout, env)
            chars = sum(sizes[str(f)] for _, f in chosen)
            r.update({"target_units": target, "files": len(chosen), "rounds": chosen[-1][0] if chosen else 0,
                      "chars": chars})
            rep["runs"].append(r)
            shutil.rmtree(work / f"idx-{target}", ignore_errors=True)
            shutil.rmtree(docs, ignore_errors=True)
            if r["exit"] != 0:
                print(f"  failed: {r.get('error')}", file=sys.stderr)
                break  # a larger size would fail too (or was killed at the timeout)
            if r["counts"].get("text_units"):
                chars_per_unit = chars / r["counts"]["text_units"]
            print(f"  {r['counts'].get('text_units')} units, {r['wall_seconds']} s, peak {r['peak_rss_mb']} MB",
                  file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ok = [r for r in rep["runs"] if r["exit"] == 0]
    rep["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    pages, units = [r["counts"].get("pages") for r in ok], [r["counts"].get("text_units") for r in ok]
    wall, pipeline = [r["wall_seconds"] for r in ok], [r.get("timings", {}).get("total") for r in ok]
    rep["growth_exponent"] = {
        "time_vs_pages": fit_exponent(pages, wall), "time_vs_text_units": fit_exponent(units, wall),
        "pipeline_time_vs_pages": fit_exponent(pages, pipeline),
        "peak_rss_vs_text_units": fit_exponent(units, [r["peak_rss_mb"] for r in ok]),
    }
    lines = [f"Machine: {os.cpu_count()} cores, {cpu}, {rep['machine']['memory_gb']} GB; load average "
             f"{rep['machine']['load_average_at_start']} at start, {rep['machine']['load_average_at_end']} at end. "
             f"Corpus {a.docs} ({len(files)} files, seed {a.seed}).", "",
             "| target units | files | rounds | pages | text units | entities | wall s | pipeline s | pages/s | peak RSS MB | index MB |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rep["runs"]:
        if r["exit"] != 0:
            lines.append(f"| {r['target_units']} | {r['files']} | {r['rounds']} | failed: {r.get('error', '')[:80]} | | | "
                         f"{r['wall_seconds']:.0f} | | | {r['peak_rss_mb']} | |")
            continue
        c = r["counts"]
        lines.append(f"| {r['target_units']} | {r['files']} | {r['rounds']} | {c.get('pages')} | {c.get('text_units')} | "
                     f"{c.get('entities')} | {r['wall_seconds']:.0f} | {r.get('timings', {}).get('total', 0):.0f} | "
                     f"{(c.get('pages') or 0) / r['wall_seconds']:.1f} | {r['peak_rss_mb']} | {r['index_mb']} |")
    g = rep["growth_exponent"]
    lines += ["", f"Growth exponent (log-log least squares; 1 = linear): wall time vs pages **{g['time_vs_pages']}**, "
                  f"vs text units {g['time_vs_text_units']}; pipeline time (imports excluded) vs pages "
                  f"{g['pipeline_time_vs_pages']}; peak RSS vs text units {g['peak_rss_vs_text_units']}."]
    lines += stage_tables(rep["runs"])
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
