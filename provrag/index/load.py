"""LOAD: every file under DOCS → a `LoadedDocument` (text, physical page offsets, page labels),
and the run's documents table.

Why it looks the way it does:
- One row per file, always: unknown formats, oversized or empty files and links are
  `skipped`, files a parser cannot read are `failed`, each with a one-line `error`; nothing
  is dropped and no file can crash the run (every parser call is wrapped per file, in a
  worker process).
- Which entries of DOCS there are, links and odd names included, is provrag/index/walk.py;
  parsing one file, format by format, is provrag/index/parse.py; this module decides what
  is not parsed at all, and runs the parsers.
- Files are parsed by the run's executor (`[load] workers` processes by default, or Ray
  tasks) but the result list is in sorted path order, so the index is the same whatever
  the scheduling.
- Parse results are cached by (file sha256, format, backend, loader version): a re-run over
  unchanged files parses nothing.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import mimetypes
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from provrag.config import Config, LoadSettings
from provrag.index.parse import LOADER_VERSION, one_line, parse_file, result_options
from provrag.index.progress import stage
from provrag.index.tables import OCR_PAGES, OCR_WAITING, OUTLINE, PAGES, frame, outline_type
from provrag.index.walk import walk
from provrag.store import schema
from provrag.store.cache import Cache, key_of
from provrag.store.paths import printable

if TYPE_CHECKING:
    import polars as pl

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


@dataclass
class LoadedDocument:
    path: str                                   # relative to DOCS, posix, escaped (provrag/store/paths.py)
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
    ocr_pages: list[int] = field(default_factory=list)   # physical pages whose text is OCR output
    outline: list[tuple[int, str, int]] = field(default_factory=list)  # (level, heading, char offset) in order
    ocr_waiting: list[int] = field(default_factory=list)  # pages OCR would read, had it run (no engine, or off)
    running_heads: list[str] | None = None      # per page, what its removed running heads said ([load] running_heads)


# ---- what a file is -----------------------------------------------------------------------

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


def _parse_task(task: tuple) -> dict:
    """One parse in a worker process (module level: the pool pickles it by name)."""
    return parse_file(*task)


# ---- assembling, caching, running ---------------------------------------------------------

def heading_offset(text: str, heading: str, start: int, end: int) -> int:
    """Where a bookmark's heading is printed on its page (text[start:end]) as a line of its own —
    not inside a running head ("Chapter 12: Distributions 21") — else the page's first character:
    several sections that begin on one page then stay apart."""
    words = re.findall(r"[^\W_]+", heading)
    if words:
        line = re.compile(r"(?m)^[ \t]*(?:(?:[0-9]+|[A-Z])(?:\.[0-9]+)*\.?[ \t]+)?"  # "4 Disclaimer", "A.1 Notes"
                          + r"\W{1,5}".join(re.escape(w) for w in words) + r"[ \t]*$", re.I)
        m = line.search(text, start, end)
        if m:
            return m.start()
    return start


def _assemble(rel: str, sha: str | None, mtime: str | None, fmt: str | None, parsed: dict) -> LoadedDocument:
    pages = None
    if parsed.get("page_texts") is not None:
        pages, pos = [], 0
        for i, t in enumerate(parsed["page_texts"]):
            pages.append((i + 1, pos, pos + len(t)))
            pos += len(t) + 2  # the "\n\n" between pages
    outline = []
    text = parsed.get("text") or ""
    for level, heading, page, at in parsed.get("outline") or []:
        if page is not None and pages and 1 <= page <= len(pages):
            at = heading_offset(text, str(heading), pages[page - 1][1], pages[page - 1][2])
        if at is not None:
            outline.append((int(level), printable(str(heading)), int(at)))
    mime = MIME_TYPES.get(fmt) if fmt else (mimetypes.guess_type(rel)[0] or "application/octet-stream")
    error = parsed.get("error")  # a parser's message may quote the file's raw name: made printable
    return LoadedDocument(
        path=rel, sha256=sha, mime_type=mime, title=printable(parsed.get("title") or _stem(rel)),
        text=parsed.get("text") or "", pages=pages, n_pages=len(pages) if pages is not None else None,
        page_labels=parsed.get("page_labels"), status=parsed["status"], error=printable(error) if error else None,
        creation_date=mtime, ocr_pages=list(parsed.get("ocr_pages") or []), outline=outline,
        ocr_waiting=list(parsed.get("ocr_waiting") or []),
        running_heads=[printable(h) for h in parsed["running_heads"]] if parsed.get("running_heads") else None,
        metadata={printable(str(k)): printable(str(v)) for k, v in (parsed.get("metadata") or {}).items()})


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()



def parse_options(load: LoadSettings) -> dict:
    """[load] as the options dict a parser process gets (load_config has checked every value)."""
    workers = load.workers
    return {"pdf_backend": load.pdf_backend, "running_heads": load.running_heads, "ocr": load.ocr,
            "max_file_mb": load.max_file_mb,
            "max_line_chars": load.max_line_chars, "workers": workers if workers > 0 else (os.cpu_count() or 1)}


def _crashed(task: tuple, reason: str) -> dict:
    """The parse result of a file whose parser raised or killed its worker (executors/)."""
    return {"status": "failed", "error": one_line(f"the parser crashed on this file ({reason})"),
            "text": "", "page_texts": None, "page_labels": None, "title": None, "metadata": {}}


def load_folder(root: Path, cfg: Config, cache: Cache | None = None, progress=None,
                executor=None) -> list[LoadedDocument]:
    """Every entry under root (a folder, or one file) as a LoadedDocument, in sorted path order
    (deterministic). Files are parsed by `executor` (provrag/executors/; default: local worker
    processes), the longest first (shortest makespan), one crash costing only its file."""
    opts = parse_options(cfg.load)
    if not cfg.load.parse_cache:
        cache = None
    parse_opts = {k: opts[k] for k in ("pdf_backend", "running_heads", "ocr", "max_file_mb", "max_line_chars")}
    files = walk(Path(root))
    results: list[LoadedDocument | None] = [None] * len(files)
    meta: dict[int, tuple] = {}  # slot -> (rel, sha, mtime, fmt, cache key)
    todo: list[tuple[int, tuple, float]] = []

    with stage(progress, "load", len(files)) as bar:
        def done(slot: int, parsed: dict) -> None:
            rel, sha, mtime, fmt, key = meta[slot]
            if cache is not None and key and parsed["status"] == "ok":
                cache.put(key, parsed)  # failures are not cached: a fixed environment may parse them
            results[slot] = _assemble(rel, sha, mtime, fmt, parsed)
            bar.advance(1)

        for slot, entry in enumerate(files):
            p, rel = entry.file, entry.path
            fmt = format_of(p.name)
            sha = mtime = key = None
            try:
                st = p.lstat() if entry.status else p.stat()
                mtime = dt.datetime.fromtimestamp(st.st_mtime, tz=dt.timezone.utc).isoformat(timespec="seconds")
                if entry.status:  # a link, a pipe, an unreadable folder: recorded, never opened
                    meta[slot] = (rel, None, mtime, fmt, None)
                    done(slot, {"status": entry.status, "error": entry.reason})
                    continue
                sha = _sha256(p)
            except OSError as e:
                meta[slot] = (rel, sha, mtime, fmt, None)
                done(slot, {"status": "failed", "error": one_line(f"cannot read the file: {e.strerror or e}")})
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
                key = key_of("parse", LOADER_VERSION, sha, fmt, result_options(fmt, parse_opts))
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

        if len(todo) > 1 and sum(t[2] for t in todo) >= POOL_MIN_SECONDS:
            from provrag.executors import default_executor

            todo.sort(key=lambda t: -t[2])
            parsed = (executor or default_executor(cfg)).map(_parse_task, [t[1] for t in todo], kind="isolated",
                                                             failed=_crashed)
            for (slot, _, _), result in zip(todo, parsed):
                done(slot, result)
        else:
            for slot, task, _ in todo:
                done(slot, parse_file(*task))
    return results  # type: ignore[return-value]


def documents_frame(docs: list[LoadedDocument]) -> pl.DataFrame:
    """The run's documents table: one row per file in load order, the contract's columns (the
    ids content-derived from path and bytes), plus the page offsets the chunker needs (`PAGES`)
    the pages whose text is OCR output (`OCR_PAGES`) and those waiting for OCR (`OCR_WAITING`), and
    the headings the file names (`OUTLINE`).
    `text_unit_ids` stays null until the chunk stage knows the units."""
    import polars as pl

    rows = [{schema.ID: schema.content_id("document", d.path, d.sha256 or ""), schema.HRID: i,
             schema.TITLE: d.title, schema.TEXT: d.text or "", "creation_date": d.creation_date,
             "metadata": {str(k): str(v) for k, v in (d.metadata or {}).items()},
             "path": d.path, "sha256": d.sha256, "mime_type": d.mime_type, "n_pages": d.n_pages,
             "page_labels": d.page_labels or None,  # null where the format or file prints none
             "running_heads": d.running_heads or None,  # null where none were found (or [load] running_heads is off)
             "status": d.status, "error": d.error}
            for i, d in enumerate(docs)]
    pages = [[list(p) for p in d.pages] if d.pages is not None else None for d in docs]
    return frame(schema.DOCUMENTS, rows).with_columns(pl.Series(PAGES, pages, dtype=pl.List(pl.List(pl.Int64))),
                                                      pl.Series(OCR_WAITING, [d.ocr_waiting for d in docs],
                                                                dtype=pl.List(pl.Int64)),
                                                      pl.Series(OCR_PAGES, [d.ocr_pages for d in docs],
                                                                dtype=pl.List(pl.Int64)),
                                                      pl.Series(OUTLINE, [[{"level": lv, "title": t, "char_start": at}
                                                                           for lv, t, at in d.outline] for d in docs],
                                                                dtype=outline_type()))
