"""LOAD: every file under DOCS → a `LoadedDocument` (text, physical page offsets, page labels).

Why it looks the way it does:
- One row per file, always: unknown formats, oversized or empty files are `skipped`, files
  a parser cannot read are `failed`, each with a one-line `error`; nothing is dropped and
  no file can crash the run (every parser call is wrapped per file, in a worker process).
- PDFs go through provrag/index/pdf.py (pypdfium2 by default, chosen by measurement).
  DOCX, PPTX and HTML go through docling's declarative backends driven directly by its
  `SimplePipeline`, because `docling.document_converter` imports torch even for DOCX.
  Plain text and Markdown are read as they are (see `_read_text`).
- Files are parsed in `[load] workers` processes but the result list is in sorted path
  order, so the index is the same whatever the scheduling.
- Parse results are cached by (file sha256, format, backend, loader version): a re-run over
  unchanged files parses nothing.
"""
from __future__ import annotations

import codecs
import datetime as dt
import gzip
import hashlib
import logging
import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path

from provrag.config import Config, ConfigError, LoadSettings
from provrag.store.cache import Cache, key_of
from provrag.index.pdf import LoadError, parse_pdf

# Bump when a parser change alters any output: it is part of every parse-cache key.
LOADER_VERSION = "1"

FORMATS = {".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".html": "html", ".htm": "html",
           ".xhtml": "html", ".md": "md", ".markdown": "md", ".txt": "txt", ".text": "txt"}
MIME_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "html": "text/html", "md": "text/markdown", "txt": "text/plain",
}
# Worker processes are started only when the parse is estimated to take longer than this:
# below it, starting them (a fresh Python each, ~0.3 s, plus docling's ~1.5 s import where an
# office file lands) costs more than the second core saves. Estimates measured on the
# project machine: pypdfium2 ≈ 0.3 s per MB of PDF, docling ≈ 0.3 s per DOCX/PPTX/HTML file;
# plain text is free. Tests set it to 0 to exercise the pool.
POOL_MIN_SECONDS = 2.0
_EST_SECONDS = {"pdf": lambda size: 0.3 * size / 1e6, "docx": lambda size: 0.3,
                "pptx": lambda size: 0.3, "html": lambda size: 0.3}


class LoadConfigError(ConfigError):
    """A [load] setting that cannot work (unknown pdf_backend); one-line message."""


@dataclass
class LoadedDocument:
    path: str                                   # relative to DOCS, posix
    sha256: str | None                          # of the raw file bytes (before gunzip)
    mime_type: str
    title: str
    text: str
    pages: list[tuple[int, int, int]] | None    # (page_no 1-based, char_start, char_end) into text
    n_pages: int | None
    page_labels: list[str] | None               # printed labels, one per page; None when the file has none
    status: str                                 # "ok" | "failed" | "skipped"
    error: str | None
    creation_date: str | None                   # file mtime, ISO-8601 UTC
    metadata: dict[str, str] = field(default_factory=dict)


# ---- walking the folder ---------------------------------------------------------------

def list_files(root: Path) -> list[Path]:
    """Every regular file under root, by posix path. Left out: hidden files and folders ('.*')
    and provrag index folders (`--out` inside DOCS must not index the index)."""
    root = Path(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")
                       and not (Path(dirpath, d, "manifest.json").is_file() and Path(dirpath, d, "text_units.parquet").is_file())]
        for name in filenames:
            p = Path(dirpath) / name
            if not name.startswith(".") and p.is_file():
                found.append(p)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def format_of(name: str) -> str | None:
    """Format from the name, looking through a trailing .gz ("x.pdf.gz" → "pdf")."""
    low = name.lower()
    if low.endswith(".gz"):
        low = low[:-3]
    return FORMATS.get(os.path.splitext(low)[1])


def _stem(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return os.path.splitext(name)[0] or name


def _one_line(message: str, limit: int = 300) -> str:
    line = " ".join(str(message).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# ---- parsers (run in worker processes; each returns a plain dict) -----------------------

def _gunzip(path: Path, max_bytes: int) -> bytes:
    """Decompress with a cap, so a small .gz that expands to gigabytes is refused, not loaded."""
    try:
        with gzip.open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except (OSError, EOFError) as e:
        raise LoadError(f"damaged gzip data: {e}") from None
    if len(data) > max_bytes:
        raise LoadError(f"decompressed size exceeds [load] max_file_mb ({max_bytes // 1_000_000} MB)")
    return data


def _read_text(data: bytes, max_line_chars: int) -> tuple[str, dict]:
    """UTF-8 (or a UTF-16/32 file with its BOM), else failed.

    Invalid UTF-8 fails on purpose rather than being decoded with replacement characters or
    a guessed code page: a wrong guess puts words into the index that are not in the file,
    so quotes and claim checks would cite text the user cannot find. The error names the
    offending byte and offset so the file can be fixed.
    Markdown is kept as written (not re-rendered by docling's Markdown backend), so a quote
    is exactly what the user sees when opening the file.
    """
    enc = "utf-8"
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
                      (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
                      (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            enc = name
            break
    try:
        text = data.decode(enc)
    except UnicodeDecodeError as e:
        raise LoadError(f"not valid {enc.upper()} text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                        "save it as UTF-8 to index it") from None
    if "\x00" in text:
        raise LoadError("binary content (NUL bytes), not text")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    longest = max(map(len, text.split("\n")), default=0)
    if max_line_chars and longest > max_line_chars:
        raise _Skip(f"a line of {longest:,} characters: not line-structured text (minified or generated "
                    f"data?); raise [load] max_line_chars to index it")
    return text, {"encoding": enc}


class _Skip(LoadError):
    """A file deliberately not indexed (status 'skipped' rather than 'failed')."""


_PIPELINE = None


def _docling(data: bytes, fmt: str, name: str):
    """docling's declarative backend for fmt through SimplePipeline (no torch, no models)."""
    global _PIPELINE
    from io import BytesIO

    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.document import InputDocument
    from docling.datamodel.pipeline_options import ConvertPipelineOptions
    from docling.pipeline.simple_pipeline import SimplePipeline

    if fmt == "docx":
        from docling.backend.msword_backend import MsWordDocumentBackend as backend
        kind = InputFormat.DOCX
    elif fmt == "pptx":
        from docling.backend.mspowerpoint_backend import MsPowerpointDocumentBackend as backend
        kind = InputFormat.PPTX
    else:
        from docling.backend.html_backend import HTMLDocumentBackend as backend
        kind = InputFormat.HTML
    if _PIPELINE is None:
        for noisy in ("docling", "bs4"):  # per-file problems are reported in `error`, not logged
            logging.getLogger(noisy).setLevel(logging.ERROR)
        _PIPELINE = SimplePipeline(ConvertPipelineOptions())
    doc_in = InputDocument(path_or_stream=BytesIO(data), format=kind, backend=backend, filename=name)
    if not doc_in.valid:
        raise LoadError(f"docling cannot open this {fmt.upper()} file (damaged or not a {fmt.upper()})")
    return _PIPELINE.execute(doc_in, raises_on_error=True).document


def _html_has_body_text(data: bytes) -> bool:
    import lxml.html

    try:
        root = lxml.html.document_fromstring(data)
    except Exception:  # lxml raises ParserError on a document with no elements at all
        return False
    for head in root.findall("head"):
        root.remove(head)
    return bool(root.text_content().strip())


def parse_file(path: str, fmt: str, opts: dict) -> dict:
    """Parse one file; never raises. Returns the parse-derived fields of a LoadedDocument."""
    out = {"status": "ok", "error": None, "text": "", "page_texts": None, "page_labels": None,
           "title": None, "metadata": {}}
    try:
        p = Path(path)
        max_bytes = int(opts["max_file_mb"] * 1_000_000)
        with p.open("rb") as f:
            head = f.read(1024)
        compressed = head[:2] == b"\x1f\x8b"
        if compressed:
            data = _gunzip(p, max_bytes)
            out["metadata"]["compression"] = "gzip"
            head = data[:1024]
        else:
            data = None  # read lazily: pdfium reads a PDF from its path without loading it whole
        if not head:
            raise _Skip("empty file")
        if fmt == "pdf":
            if b"%PDF" not in head:
                raise LoadError("not a PDF (no %PDF header)")
            res = parse_pdf(data if compressed else p, opts["pdf_backend"], p.name, ocr=opts["ocr"])
            out.update(page_texts=res["pages"], page_labels=res["page_labels"], title=res["title"])
            out["metadata"].update(res["metadata"])
        else:
            data = data if compressed else p.read_bytes()
            if fmt in ("txt", "md"):
                text, meta = _read_text(data, opts["max_line_chars"])
                out["text"] = text
                out["metadata"].update(meta)
            else:
                if fmt == "html" and b"\x00" in data[:65536]:
                    raise LoadError("binary content (NUL bytes), not HTML")
                if fmt == "html" and not _html_has_body_text(data):
                    raise LoadError("HTML without body text")
                doc = _docling(data, fmt, p.name)
                if fmt == "pptx":  # docling numbers slides from 1 as pages; keep the numbers as they are
                    out["page_texts"] = [doc.export_to_text(page_no=k).strip()
                                         for k in range(1, max(doc.pages, default=0) + 1)]
                else:
                    out["text"] = doc.export_to_text().strip()
        if out["page_texts"] is not None:
            out["text"] = "\n\n".join(out["page_texts"])
        if not out["text"].strip():
            raise LoadError("no text found in the file")
    except _Skip as e:
        out.update(status="skipped", error=_one_line(e), text="", page_texts=None, page_labels=None)
    except LoadError as e:
        out.update(status="failed", error=_one_line(e), text="", page_texts=None, page_labels=None)
    except Exception as e:  # any parser bug or damaged input: this file fails, the run goes on
        out.update(status="failed", error=_one_line(f"{type(e).__name__}: {e}"), text="",
                   page_texts=None, page_labels=None)
    return out


def _parse_task(task: tuple) -> dict:
    return parse_file(*task)


# ---- assembling, caching, running ---------------------------------------------------------

def _assemble(rel: str, sha: str | None, mtime: str | None, fmt: str | None, parsed: dict) -> LoadedDocument:
    pages = None
    if parsed.get("page_texts") is not None:
        pages, pos = [], 0
        for i, t in enumerate(parsed["page_texts"]):
            pages.append((i + 1, pos, pos + len(t)))
            pos += len(t) + 2  # the "\n\n" between pages
    mime = MIME_TYPES.get(fmt) if fmt else (mimetypes.guess_type(rel)[0] or "application/octet-stream")
    return LoadedDocument(
        path=rel, sha256=sha, mime_type=mime, title=parsed.get("title") or _stem(rel),
        text=parsed.get("text") or "", pages=pages, n_pages=len(pages) if pages is not None else None,
        page_labels=parsed.get("page_labels"), status=parsed["status"], error=parsed.get("error"),
        creation_date=mtime, metadata={str(k): str(v) for k, v in (parsed.get("metadata") or {}).items()})


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _result_opts(fmt: str, opts: dict) -> dict:
    """The settings a parse result of this format depends on (part of its cache key)."""
    if fmt == "pdf":
        return {"pdf_backend": opts["pdf_backend"], "ocr": opts["ocr"]}
    if fmt in ("txt", "md"):
        return {"max_line_chars": opts["max_line_chars"]}
    return {}


def _options(load: LoadSettings) -> dict:
    backend = load.pdf_backend
    from provrag.index.pdf import BACKENDS

    if backend not in BACKENDS:
        raise LoadConfigError(f"unknown [load] pdf_backend {backend!r} (one of: {', '.join(sorted(BACKENDS))})")
    workers = load.workers
    return {"pdf_backend": backend, "ocr": load.ocr, "max_file_mb": load.max_file_mb,
            "max_line_chars": load.max_line_chars, "workers": workers if workers > 0 else (os.cpu_count() or 1)}


def _ping() -> bool:
    return True


def _run_parsers(todo: list[tuple[int, tuple, float]], workers: int, on_done) -> None:
    """Parse todo items [(slot, task, estimated seconds)] in processes; on_done(slot, parsed) per file.

    The longest jobs are submitted first (shortest makespan). A parser that kills its worker
    (a native crash) breaks the pool: the files not yet done are then parsed one at a time
    in fresh single-worker pools, so only the file that crashes is recorded as failed. If
    worker processes cannot run at all here (a fresh one fails a no-op), the rest is
    parsed in this process instead.
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn")  # fork is unsafe once rich's refresh thread is running
    todo = sorted(todo, key=lambda t: -t[2])
    pending = {slot for slot, _, _ in todo}
    pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx)
    try:
        futures = {pool.submit(_parse_task, task): slot for slot, task, _ in todo}
        for fut in as_completed(futures):
            slot = futures[fut]
            on_done(slot, fut.result())
            pending.discard(slot)
        return
    except BrokenProcessPool:
        pass
    finally:  # on Ctrl-C or an error, queued files are dropped instead of parsed to the end
        pool.shutdown(wait=True, cancel_futures=True)
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
            workers_run = pool.submit(_ping).result()
    except BrokenProcessPool:
        workers_run = False
    for slot, task, _ in todo:
        if slot not in pending:
            continue
        if not workers_run:
            on_done(slot, parse_file(*task))
            continue
        try:
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
                parsed = pool.submit(_parse_task, task).result()
        except BrokenProcessPool:
            parsed = {"status": "failed", "error": "the parser crashed on this file (its worker process died)",
                      "text": "", "page_texts": None, "page_labels": None, "title": None, "metadata": {}}
        on_done(slot, parsed)


def load_folder(root: Path, cfg: Config, cache: Cache | None = None, progress=None) -> list[LoadedDocument]:
    """Every file under root as a LoadedDocument, in sorted path order (deterministic)."""
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root}")
    opts = _options(cfg.load)
    if not cfg.load.parse_cache:
        cache = None
    parse_opts = {k: opts[k] for k in ("pdf_backend", "ocr", "max_file_mb", "max_line_chars")}
    files = list_files(root)
    results: list[LoadedDocument | None] = [None] * len(files)
    meta: dict[int, tuple] = {}  # slot -> (rel, sha, mtime, fmt, cache key)
    todo: list[tuple[int, tuple, float]] = []

    from contextlib import nullcontext

    stage = progress.stage("load", total=len(files)) if progress is not None else nullcontext(None)
    with stage as bar:
        advance = bar.advance if bar is not None else (lambda n=1: None)

        def done(slot: int, parsed: dict) -> None:
            rel, sha, mtime, fmt, key = meta[slot]
            if cache is not None and key and parsed["status"] == "ok":
                cache.put(key, parsed)  # failures are not cached: a fixed environment may parse them
            results[slot] = _assemble(rel, sha, mtime, fmt, parsed)
            advance(1)

        for slot, p in enumerate(files):
            rel = p.relative_to(root).as_posix()
            fmt = format_of(p.name)
            sha = mtime = key = None
            try:
                st = p.stat()
                mtime = dt.datetime.fromtimestamp(st.st_mtime, tz=dt.timezone.utc).isoformat(timespec="seconds")
                sha = _sha256(p)
            except OSError as e:
                meta[slot] = (rel, sha, mtime, fmt, None)
                done(slot, {"status": "failed", "error": _one_line(f"cannot read the file: {e.strerror or e}")})
                continue
            if fmt is None:
                ext = os.path.splitext(p.name)[1] or "(none)"
                parsed = {"status": "skipped", "error": f"unsupported format {ext}: provrag reads PDF, DOCX, "
                          "PPTX, HTML, Markdown and plain text (.gz too)"}
            elif st.st_size > opts["max_file_mb"] * 1_000_000:
                parsed = {"status": "skipped", "error": f"file of {st.st_size / 1e6:.0f} MB is larger than "
                          f"[load] max_file_mb = {opts['max_file_mb']:g}"}
            elif st.st_size == 0:
                parsed = {"status": "skipped", "error": "empty file"}
            else:
                key = key_of("parse", LOADER_VERSION, sha, fmt, _result_opts(fmt, parse_opts))
                parsed = cache.get(key) if cache is not None else None
                if parsed is None:
                    meta[slot] = (rel, sha, mtime, fmt, key)
                    size = st.st_size * (3 if p.name.lower().endswith(".gz") else 1)  # ~ gzip ratio of PDFs
                    cost = _EST_SECONDS.get(fmt, lambda size: 0.0)(size)
                    todo.append((slot, (str(p), fmt, parse_opts), cost))
                    continue
                key = None  # a hit: nothing new to store
            meta[slot] = (rel, sha, mtime, fmt, key)
            done(slot, parsed)

        if opts["workers"] > 1 and len(todo) > 1 and sum(t[2] for t in todo) >= POOL_MIN_SECONDS:
            _run_parsers(todo, opts["workers"], done)
        else:
            for slot, task, _ in todo:
                done(slot, parse_file(*task))
    return results  # type: ignore[return-value]
