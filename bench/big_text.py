"""One big plain-text file made of real text, and what indexing it costs (time, peak RSS per stage).

    .venv/bin/python bench/big_text.py [--mb 50] [--pdfs DIR] [--config FILE] [--keep DIR] [--out FILE]

A user's 50 MB text file (a book collection exported as one file) is one document: every
stage meets all of it at once. The file is made the way Project Gutenberg bundles are, by
concatenating real texts copy after copy until the size is reached (see `source_texts`: by
default ../shared's articles, novella, speech and PDF pages, ~1.3 MB, so ~37 copies; with
--pdfs the page text of a folder of PDFs, e.g. bench/.corpora/pdf-texlive's 28 MB, the
larger vocabulary). Each copy starts with a "Copy N of the collection." line.

The index runs in a child process (`provrag index FILE --out …`, cold), timed from out here;
inside it each stage's own peak RSS (VmHWM, reset before the stage) and the RSS it leaves
are recorded (`stage_rss_hook`), so the table says which stage sets the peak.
Writes bench/results/big-text-<date>.json. tests/pipelines/test_index_memory.py holds the bound.
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
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))


def source_texts(shared: Path = SHARED, pdf_folder: Path | None = None) -> list[str]:
    """The real texts the big file is made of, in a fixed order: by default ../shared's plain
    texts (the eval split's halueval and vitaminc articles, the Dulce novella, Lincoln's 1863
    message) and the page text of its PDFs (the eval split's SQuAD articles, the small
    corpus's manuals), ~1.3 MB in all; with `pdf_folder`, the page text of its PDFs instead
    (the TeX Live documentation: ~28 MB, a far larger vocabulary)."""
    import pypdfium2 as pdfium

    if pdf_folder is not None:
        files = sorted(Path(pdf_folder).glob("*.pdf"))
    else:
        dev = shared / "eval" / "dev"
        files = sorted((dev / "halueval" / "corpus").glob("*.md")) + sorted((dev / "vitaminc" / "corpus").glob("*.md"))
        files += sorted((shared / "fixtures" / "graphrag-dulce" / "source").glob("Operation*.md"))
        files += sorted((shared / "corpora" / "small").glob("*.txt"))
        files += sorted((dev / "squad" / "corpus").glob("*.pdf")) + sorted((shared / "corpora" / "small").glob("*.pdf"))
    texts = []
    for f in files:
        if f.suffix != ".pdf":
            texts.append(f.read_text(encoding="utf-8", errors="replace").strip())
            continue
        try:
            doc = pdfium.PdfDocument(str(f))
        except pdfium.PdfiumError:
            continue  # a damaged PDF adds nothing
        pages = [page.get_textpage().get_text_range().replace("\r\n", "\n").strip() for page in doc]
        doc.close()
        texts.append("\n\n".join(p for p in pages if p))
    return [t for t in texts if t]


def make_big_text(dest: Path, megabytes: float = 50, shared: Path = SHARED, pdf_folder: Path | None = None) -> Path:
    """Write `dest`: the source texts concatenated, copy after copy, to `megabytes` MB (10^6
    bytes, cut at a paragraph end). Deterministic: the same bytes on every run."""
    texts = source_texts(shared, pdf_folder)
    if not texts:
        raise FileNotFoundError(f"no source texts under {pdf_folder or shared}")
    body = "\n\n".join(texts) + "\n\n"
    target = int(megabytes * 1_000_000)
    written, copy = 0, 0
    with Path(dest).open("w", encoding="utf-8") as f:
        while written < target:
            copy += 1
            data = f"Copy {copy} of the collection.\n\n{body}".encode()
            if written + len(data) > target:  # the last copy ends at a paragraph end
                f.write(data[: max(data[: target - written].rfind(b"\n\n"), 0)].decode("utf-8", errors="ignore") + "\n")
                break
            f.write(data.decode("utf-8"))
            written += len(data)
    return Path(dest)


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def stage_rss_hook() -> None:
    """Inside the child: wrap each stage of pipelines/index.py so that, after it, the stage's
    own peak RSS (VmHWM, reset before the stage through /proc/self/clear_refs) and the RSS it
    leaves go to $PROVRAG_STAGE_RSS, one JSON line per stage."""
    from provrag.pipelines import index as pipeline

    out = Path(os.environ["PROVRAG_STAGE_RSS"])

    def wrap(stage):
        def run(state):
            try:
                Path("/proc/self/clear_refs").write_text("5")  # Linux ≥ 4.0: peak RSS := current RSS
            except OSError:
                pass
            t0 = time.perf_counter()
            stage(state)
            with out.open("a") as f:
                f.write(json.dumps({"stage": stage.__name__, "seconds": round(time.perf_counter() - t0, 2),
                                    "peak_rss_mb": round(_status_mb("VmHWM")),
                                    "rss_after_mb": round(_status_mb("VmRSS"))}) + "\n")
        run.__name__ = stage.__name__
        return run

    pipeline.STAGES[:] = [wrap(s) for s in pipeline.STAGES]


_CHILD = ("import sys; sys.path.insert(0, {root!r}); from bench.big_text import stage_rss_hook; stage_rss_hook(); "
          "from provrag.cli import main; sys.exit(main())")


def index_measured(docs: Path, out: Path, cfg: Path | None = None, timeout: float = 7200,
                   env: dict | None = None) -> dict:
    """Index `docs` into `out` in a child process: wall seconds, peak RSS (the largest of the
    stages' own peaks and of what wait4 reports for the parser processes), exit code, the per-stage records, the index's
    size (MB), its counts and the pipeline's own stage timings (manifest.json)."""
    stages_file = out.parent / f".stages-{out.name}.jsonl"
    stages_file.unlink(missing_ok=True)
    env = dict(env or os.environ, PROVRAG_STAGE_RSS=str(stages_file))
    cmd = [sys.executable, "-c", _CHILD.format(root=str(ROOT)), "index", str(docs), "--out", str(out), "--json"]
    cmd += ["--config", str(cfg)] if cfg else []
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=ROOT)
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                p.kill()
                _, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.1)
        err.seek(0)
        err_text = err.read()
    res = {"wall_seconds": round(time.perf_counter() - t0, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024),
           "exit": os.waitstatus_to_exitcode(status)}
    if stages_file.exists():
        res["stages"] = [json.loads(line) for line in stages_file.read_text().splitlines()]
        stages_file.unlink()
        # resetting VmHWM per stage resets what wait4 reports too: the run's peak is the largest stage's
        res["peak_rss_mb"] = max([res["peak_rss_mb"]] + [s["peak_rss_mb"] for s in res["stages"]])
    if res["exit"] != 0:
        res["error"] = (err_text.strip().splitlines() or ["?"])[-1][:300]
        return res
    manifest = json.loads((out / "manifest.json").read_text())
    res["counts"], res["timings"] = manifest.get("counts", {}), manifest.get("timings", {})
    res["index_mb"] = round(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20, 1)
    res["embedder_mb"] = round(sum(f.stat().st_size for f in (out / "embedder").rglob("*") if f.is_file()) / 2**20, 1)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50, help="size of the text file in MB")
    ap.add_argument("--pdfs", type=Path, default=None, help="make the file of these PDFs' text (default: ../shared's texts)")
    ap.add_argument("--config", type=Path, default=None, help="a --config file for the index run")
    ap.add_argument("--keep", type=Path, default=None, help="keep the text file and the index in this folder")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default bench/results/big-text-<date>.json)")
    a = ap.parse_args()
    work = a.keep or Path(tempfile.mkdtemp(prefix="provrag-bigtext-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        docs = work / "docs"
        docs.mkdir(exist_ok=True)
        text = make_big_text(docs / "collection.txt", a.mb, pdf_folder=a.pdfs)
        print(f"{text}: {text.stat().st_size / 1e6:.1f} MB; indexing …", file=sys.stderr, flush=True)
        shutil.rmtree(work / "idx", ignore_errors=True)
        res = index_measured(docs, work / "idx", a.config)
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    res.update({"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "megabytes": a.mb,
                "source": str(a.pdfs or "../shared texts"),
                "load_average": [round(x, 2) for x in os.getloadavg()]})
    lines = [f"{a.mb:g} MB text file: wall {res['wall_seconds']} s, peak RSS {res['peak_rss_mb']} MB, "
             f"index {res.get('index_mb')} MB (embedder {res.get('embedder_mb')} MB), exit {res['exit']} "
             f"{res.get('error', '')}", "", "| stage | seconds | stage peak RSS MB | RSS after MB |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {s['stage']} | {s['seconds']} | {s['peak_rss_mb']} | {s['rss_after_mb']} |" for s in res.get("stages", [])]
    print("\n".join(lines))
    out = a.out or ROOT / "bench" / "results" / f"big-text-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    return 0 if res["exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
