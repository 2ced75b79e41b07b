"""Index speed against the two yardsticks of issue #2, measured in one run on the same PDFs.

    .venv/bin/python bench/index_speed.py [--corpus DIR] [--workers N] [--no-docling]

The corpus is the 10 Debian manuals (~700 pages) that ../shared/corpora/fetch-debian-docs.sh
fetches; it is downloaded once into bench/.corpora/ (not committed). Each measurement runs in
its own child process, so its wall time includes interpreter start and imports (as
../shared/checks/docling_baseline.py counts them) and its peak RSS is its own:

- docling:   docling's model-free NativePdfPipeline over every PDF (the baseline to beat);
- pypdfium2: bare text extraction of every page (the floor);
- load:      provrag's LOAD stage alone (provrag.index.load.load_folder);
- index:     provrag's full `run_index` (pipelines/index.py), with per-stage times from
             manifest.json. When the pipeline cannot run yet, the reason is recorded and
             the ratios use the load stage instead, marked as such.

Prints a table and writes bench/results/index_speed-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
FETCH = SHARED / "corpora" / "fetch-debian-docs.sh"
DEFAULT_CORPUS = ROOT / "bench" / ".corpora" / "pdf-manuals"


def _peak_rss_mb() -> float:
    """Peak RSS of this process and of the worker processes it waited for (Linux: KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


# ---- the measurements, each run in a child process ---------------------------------------

def part_docling(corpus: Path, workers: int) -> dict:
    t0 = time.perf_counter()
    from docling.backend.docling_parse_backend import DoclingParseDocumentBackend
    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.document import InputDocument
    from docling.datamodel.pipeline_options import NativePdfPipelineOptions
    from docling.pipeline.native_pdf_pipeline import NativePdfPipeline

    pipe = NativePdfPipeline(NativePdfPipelineOptions(generate_page_images=False, generate_picture_images=False))
    pages = 0
    for f in sorted(corpus.glob("*.pdf")):
        res = pipe.execute(InputDocument(path_or_stream=f, format=InputFormat.PDF,
                                         backend=DoclingParseDocumentBackend), raises_on_error=True)
        pages += len(res.document.pages)
    return {"pages": pages, "seconds_inside": round(time.perf_counter() - t0, 3)}


def part_pypdfium2(corpus: Path, workers: int) -> dict:
    t0 = time.perf_counter()
    import pypdfium2 as pdfium

    pages = chars = 0
    for f in sorted(corpus.glob("*.pdf")):
        pdf = pdfium.PdfDocument(f)
        for i in range(len(pdf)):
            page = pdf[i]
            tp = page.get_textpage()
            chars += len(tp.get_text_range())
            tp.close()
            page.close()
        pages += len(pdf)
        pdf.close()
    return {"pages": pages, "chars": chars, "seconds_inside": round(time.perf_counter() - t0, 3)}


def _cfg(workers: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from provrag.config import load_config

    return load_config(overrides={"load": {"workers": workers}})


def part_load(corpus: Path, workers: int) -> dict:
    t0 = time.perf_counter()
    cfg = _cfg(workers)
    from provrag.index.load import load_folder

    docs = load_folder(corpus, cfg)
    ok = [d for d in docs if d.status == "ok"]
    return {"pages": sum(d.n_pages or 0 for d in ok), "documents_ok": len(ok), "documents": len(docs),
            "chars": sum(len(d.text) for d in ok), "seconds_inside": round(time.perf_counter() - t0, 3)}


def part_index(corpus: Path, workers: int) -> dict:
    t0 = time.perf_counter()
    cfg = _cfg(workers)
    try:
        from provrag.pipelines.index import run_index
    except ImportError as e:
        return {"unavailable": f"provrag.pipelines.index cannot be imported: {e}"}
    with tempfile.TemporaryDirectory(prefix="provrag-bench-") as tmp:
        out = Path(tmp) / "index"
        try:
            summary = run_index(corpus, out, cfg)
        except Exception as e:  # the pipeline is being built: record why, keep the other figures
            return {"unavailable": f"run_index failed: {type(e).__name__}: {e}"}
        manifest = json.loads((out / "manifest.json").read_text())
    timings = manifest.get("timings") or summary.timings
    return {"pages": summary.pages, "documents_ok": summary.documents_ok,
            "text_units": summary.text_units, "entities": summary.entities,
            "communities": summary.communities, "timings": timings,
            "seconds_inside": round(time.perf_counter() - t0, 3)}


PARTS = {"docling": part_docling, "pypdfium2": part_pypdfium2, "load": part_load, "index": part_index}


def run_part(name: str, corpus: Path, workers: int) -> dict:
    """Run one measurement in a fresh interpreter; wall time measured from out here."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--part", name, "--corpus", str(corpus),
                           "--workers", str(workers)], capture_output=True, text=True, cwd=ROOT)
    wall = round(time.perf_counter() - t0, 3)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"wall_seconds": wall, "unavailable": f"exit {proc.returncode}: {tail}"}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["wall_seconds"] = wall
    if res.get("pages"):
        res["pages_per_second"] = round(res["pages"] / wall, 1)
    return res


# ---- the run ---------------------------------------------------------------------------

def ensure_corpus(corpus: Path) -> None:
    if corpus.is_dir() and len(list(corpus.glob("*.pdf"))) >= 10:
        return
    if not FETCH.exists():
        sys.exit(f"error: no corpus at {corpus} and no fetch script at {FETCH}")
    print(f"fetching the Debian manuals into {corpus} ...", file=sys.stderr)
    subprocess.run(["bash", str(FETCH), str(corpus), "pdf-manuals"], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--workers", type=int, default=2, help="[load] workers for provrag (default 2)")
    ap.add_argument("--no-docling", action="store_true", help="skip the (slow) docling baseline")
    ap.add_argument("--part", choices=sorted(PARTS), help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.part:  # child process: one measurement, one JSON line on stdout
        res = PARTS[args.part](args.corpus, args.workers)
        res["peak_rss_mb"] = _peak_rss_mb()
        print(json.dumps(res))
        return

    ensure_corpus(args.corpus)
    load_avg = os.getloadavg()
    results = {}
    for name in ("pypdfium2", "load", "index") + (() if args.no_docling else ("docling",)):
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        results[name] = run_part(name, args.corpus, args.workers)

    provrag_name = "index" if "unavailable" not in results["index"] else "load"
    ours = results[provrag_name]["wall_seconds"]
    ratios = {"provrag_measured": provrag_name,
              "provrag_over_pypdfium2": round(ours / results["pypdfium2"]["wall_seconds"], 2)}
    if "docling" in results and "unavailable" not in results["docling"]:
        ratios["provrag_over_docling"] = round(ours / results["docling"]["wall_seconds"], 2)
    report = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "corpus": str(args.corpus), "pdf_files": len(list(args.corpus.glob("*.pdf"))),
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load_avg],
                    "python": platform.python_version()},
        "workers": args.workers, "results": results, "ratios": ratios,
        "targets": {"provrag_over_docling": "<= 1.5 now", "provrag_over_pypdfium2": "<= 10 (goal)"},
    }

    print(f"\n{'measure':<10} {'wall s':>8} {'pages':>6} {'pages/s':>8} {'peak RSS MB':>12}")
    for name, r in results.items():
        if "unavailable" in r:
            print(f"{name:<10} {'-':>8}  unavailable: {r['unavailable']}")
            continue
        print(f"{name:<10} {r['wall_seconds']:>8.2f} {r.get('pages') or 0:>6} "
              f"{r.get('pages_per_second', 0):>8.1f} {r['peak_rss_mb']:>12.0f}")
    timings = results["index"].get("timings")
    if timings:
        print("index stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in timings.items()))
    print("ratios: " + ", ".join(f"{k} {v}" for k, v in ratios.items()))
    if load_avg[0] > (os.cpu_count() or 1):
        print(f"note: load average {load_avg[0]:.1f} on {os.cpu_count()} cpus at start; figures are pessimistic")

    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"index_speed-{dt.date.today().isoformat()}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
