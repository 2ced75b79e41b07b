"""PARSE: one file's bytes → its text (and page texts where the format has pages).

Per format, run inside a load worker process (load.py walks the folder and runs the pool):
- PDF through provrag/index/pdf.py (pypdfium2 by default, chosen by measurement); its pages
  without a text layer through provrag/index/ocr.py (Tesseract) when [load] ocr is on.
- DOCX, PPTX and HTML through docling's declarative backends driven directly by its
  `SimplePipeline`, because `docling.document_converter` imports torch even for DOCX.
- Plain text and Markdown read as they are (see `_read_text`).
- gzip is looked through by its magic bytes, with a cap on the decompressed size.
`parse_file` never raises: a file it cannot read comes back `failed` (or `skipped`, for a file
deliberately not indexed) with a one-line error, so no file can crash the run.
"""
from __future__ import annotations

import codecs
import gzip
import logging
from pathlib import Path

from provrag.index import ocr
from provrag.index.pdf import LoadError, OcrNeeded, parse_pdf

# Bump when a parser change alters any output: it is part of every parse-cache key.
# 2: PDF results carry "ocr_pages" (pages without a text layer are OCR'd).
# 3: results carry "outline": a PDF's bookmarks, the headings of DOCX/HTML/PPTX and Markdown.
# 4: results carry "ocr_waiting" (pages OCR would read when it cannot run: the summary names their files).
LOADER_VERSION = "4"


def one_line(message: str, limit: int = 300) -> str:
    """An error as the one line the documents table and the CLI show (whitespace collapsed, capped)."""
    line = " ".join(str(message).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class _Skip(LoadError):
    """A file deliberately not indexed (status 'skipped' rather than 'failed')."""


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


def docling_headings(doc, text: str) -> list[list]:
    """The headings of a docling document as [level, title, None, char offset into `text`]
    (its export_to_text), found in order; a heading not found in the text is left out."""
    out, pos = [], 0
    for item, _depth in doc.iterate_items():
        label = str(getattr(item, "label", ""))
        if not (label.endswith("section_header") or label.endswith("title")):
            continue
        title = " ".join(str(getattr(item, "text", "") or "").split())
        at = text.find(str(getattr(item, "text", "") or ""), pos) if title else -1
        if at < 0:
            continue
        level = 0 if label.endswith("title") else max(0, int(getattr(item, "level", 1) or 1) - 1)
        out.append([level, title[:300], None, at])
        pos = at + 1
    return out


def markdown_headings(text: str) -> list[list]:
    """ATX headings of Markdown ("# Title", "## Section") as [level, title, None, char offset]."""
    import re

    return [[len(m.group(1)) - 1, " ".join(m.group(2).split())[:300], None, m.start()]
            for m in re.finditer(r"(?m)^(#{1,6})[ \t]+(\S.*?)[ \t#]*$", text)]


def parse_file(path: str, fmt: str, opts: dict) -> dict:
    """Parse one file; never raises. Returns the parse-derived fields of a LoadedDocument.
    "outline": [level, title, page or None, char offset or None] per heading the file names
    (a PDF's bookmarks by page, other formats' headings by offset into the text)."""
    out = {"status": "ok", "error": None, "text": "", "page_texts": None, "page_labels": None,
           "running_heads": None, "title": None, "metadata": {}, "ocr_pages": [], "ocr_waiting": [], "outline": []}
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
            res = parse_pdf(data if compressed else p, opts["pdf_backend"], p.name, ocr_on=opts["ocr"],
                            running_heads=opts.get("running_heads", False))
            out.update(page_texts=res["pages"], page_labels=res["page_labels"], title=res["title"],
                       running_heads=res.get("running_heads"),
                       ocr_pages=res["ocr_pages"], ocr_waiting=res["ocr_waiting"],
                       outline=[[lv, t, pg, None] for lv, t, pg in res.get("outline") or []])
            out["metadata"].update(res["metadata"])
        else:
            data = data if compressed else p.read_bytes()
            if fmt in ("txt", "md"):
                text, meta = _read_text(data, opts["max_line_chars"])
                out["text"] = text
                out["metadata"].update(meta)
                if fmt == "md":
                    out["outline"] = markdown_headings(text)
            else:
                if fmt == "html":
                    from provrag.index.html_content import page_content

                    if b"\x00" in data[:65536]:
                        raise LoadError("binary content (NUL bytes), not HTML")
                    data = page_content(data)   # the page's own content, its text runs joined as rendered
                    if data is None:
                        raise LoadError("HTML without body text")
                doc = _docling(data, fmt, p.name)
                if fmt == "pptx":  # docling numbers slides from 1 as pages; keep the numbers as they are
                    out["page_texts"] = [doc.export_to_text(page_no=k).strip()
                                         for k in range(1, max(doc.pages, default=0) + 1)]
                else:
                    out["text"] = doc.export_to_text().strip()
                    out["outline"] = docling_headings(doc, out["text"])
        if out["page_texts"] is not None:
            out["text"] = "\n\n".join(out["page_texts"])
        if not out["text"].strip():
            raise LoadError("no text found in the file")
    except _Skip as e:
        out.update(status="skipped", error=one_line(e), **_no_text())
    except OcrNeeded as e:  # failed until OCR can run: its pages are named for the summary
        out.update(status="failed", error=one_line(e), **_no_text(), ocr_waiting=e.pages)
    except LoadError as e:
        out.update(status="failed", error=one_line(e), **_no_text())
    except Exception as e:  # any parser bug or damaged input: this file fails, the run goes on
        out.update(status="failed", error=one_line(f"{type(e).__name__}: {e}"), **_no_text())
    return out


def _no_text() -> dict:
    """What a file that is not indexed keeps of its parse: nothing but its metadata."""
    return {"text": "", "page_texts": None, "page_labels": None, "running_heads": None, "ocr_pages": [],
            "outline": []}


def result_options(fmt: str, opts: dict) -> dict:
    """The settings a parse result of this format depends on (part of its cache key)."""
    if fmt == "pdf":  # OCR output depends on the engine: installing tesseract re-parses such PDFs
        # [load] running_heads is in the key only when on ("kept": the result holds each page's
        # running heads, not only the pages without them); off, every result is as it was before it
        return {"pdf_backend": opts["pdf_backend"], "ocr": opts["ocr"], "ocr_engine": ocr.engine() if opts["ocr"] else None,
                **({"running_heads": "kept"} if opts.get("running_heads") else {})}
    if fmt in ("txt", "md"):
        return {"max_line_chars": opts["max_line_chars"]}
    if fmt == "html":  # a change in how pages are read re-parses HTML files only, not every PDF
        from provrag.index.html_content import READING

        return {"reading": READING}
    return {}
