"""PDF → text per physical page, page labels and title, by one of three backends.

The default path is pypdfium2, chosen by measurement on the project machine: the 10 Debian
manuals that bench/index_speed.py fetches (709 pages), each backend in its own process:

| backend | ms/page | peak RSS | 30-char probes found on the same pypdfium2 page |
| --- | --- | --- | --- |
| pypdfium2 text page | 1.7 | 27 MB | 6562/6562 |
| docling-parse direct, line cells only | 18.7 | 163 MB | 6561/6562 |
| docling NativePdfPipeline | 52.7 | 921 MB | 6561/6562 |

All three put the same text on the same physical pages, so the fastest one wins; pypdfium2
is also what ../shared/checks/check_index.py reads a page with.
"docling-layout" (docling's StandardPdfPipeline with its layout models) is kept for users
who have the models and torch; without them the file is recorded as failed, never a crash.

Every function here returns a plain dict (picklable across worker processes):
{"pages": [page text, ...], "page_labels": [...] | None, "title": str | None,
 "metadata": {str: str}, "outline": [[level, title, page], ...]} (parse_pdf adds "ocr_pages": the 1-based pages whose text is OCR
output, and "running_heads": what each page's removed running lines said, with [load]
running_heads); problems raise `LoadError` with a one-line message.
"""
from __future__ import annotations

import re
from pathlib import Path

from provrag.index import ocr


class LoadError(Exception):
    """A file that cannot be turned into text; the message is the one-line `error`."""


# pdfium writes U+FFFE where a word was hyphenated at a line end ("Win\ufffedows"); it is a
# Unicode non-character, so it is dropped together with the line break that may follow it.
_SOFT_HYPHEN = re.compile("\ufffe[ \t]*(?:\r\n|\r|\n)?")
# C0 controls other than tab/newline, DEL, and the other non-character: never text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\uffff]")


def clean_page_text(text: str) -> str:
    """pdfium's page text with line ends unified and non-text characters removed."""
    text = _SOFT_HYPHEN.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text).strip()


_GENERIC_TITLE = re.compile(
    r"^(untitled|title|document|microsoft word|slide \d+|page \d+|none|null|unknown|\W+)$|"
    r"\.(docx?|pdf|tex|dvi|ps|indd|rtf|txt|odt|pptx?)$|^microsoft (word|powerpoint) - ", re.I)


def meaningful_title(title: str | None) -> str | None:
    """The PDF's Title entry when it reads as a title, not a tool's placeholder or a file name."""
    if not title:
        return None
    t = " ".join(str(title).split())
    if len(t) < 3 or len(t) > 300 or not re.search(r"[^\W\d_]", t) or _GENERIC_TITLE.search(t):
        return None
    return t


def _open_pdfium(source):
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(source)
    except pdfium.PdfiumError as e:
        msg = str(e)
        if "password" in msg.lower():
            raise LoadError("encrypted PDF: a password is needed to read it") from None
        if "format" in msg.lower():
            raise LoadError("not a readable PDF (damaged, truncated or not a PDF at all)") from None
        raise LoadError(f"cannot open PDF: {msg}") from None


_OUTLINE_LEVELS = 2      # chapters and their sections: the themes a reader names, not every sub-sub-heading
_OUTLINE_ENTRIES = 2000  # a generated outline this long is an index, not a table of contents


def pdf_outline(pdf) -> list[list]:
    """The PDF's bookmarks (its outline) as [level, title, page] — level 0 for a chapter, 1
    for its sections, page 1-based and physical — in outline order; entries that point to no
    page are left out. The outline is how a document's authors named its parts: the themes of
    a "what does it cover" answer (provrag/index/sections.py). A broken outline costs only itself."""
    out = []
    try:
        for b in pdf.get_toc():  # (max_depth would print a line for every deeper subtree)
            dest = b.get_dest()
            page = dest.get_index() if dest is not None else None
            title = " ".join((b.get_title() or "").split())
            if page is None or not title or b.level >= _OUTLINE_LEVELS:
                continue
            out.append([int(b.level), title[:300], int(page) + 1])
            if len(out) >= _OUTLINE_ENTRIES:
                break
    except Exception:  # pdfium raises on cyclic or damaged outline trees
        return out
    return out


def _labels_and_meta(pdf) -> tuple[list[str] | None, str | None, dict[str, str]]:
    labels = [pdf.get_page_label(i) or "" for i in range(len(pdf))]
    meta = {}
    try:
        raw = pdf.get_metadata_dict(skip_empty=True)
    except Exception:  # a broken Info dictionary costs the metadata, not the document
        raw = {}
    for k in ("Author", "Subject", "Creator", "Producer", "CreationDate"):
        v = raw.get(k)
        if v and str(v).strip():
            meta[f"pdf_{k.lower()}"] = " ".join(str(v).split())[:300]
    return (labels if any(labels) else None), meaningful_title(raw.get("Title")), meta


def pdf_pypdfium2(source: Path | bytes) -> dict:
    """Text of every page with pdfium's text page, closing each page at once (flat memory)."""
    pdf = _open_pdfium(source)
    try:
        pages = []
        for i in range(len(pdf)):
            page = pdf[i]
            try:
                tp = page.get_textpage()
                pages.append(clean_page_text(tp.get_text_range()))
                tp.close()
            finally:
                page.close()
        labels, title, meta = _labels_and_meta(pdf)
        outline = pdf_outline(pdf)
    finally:
        pdf.close()
    return {"pages": pages, "page_labels": labels, "title": title, "metadata": meta, "outline": outline}


def pdf_docling_parse(source: Path | bytes) -> dict:
    """docling-parse used directly with only line cells materialised; pages unloaded as read."""
    from io import BytesIO

    from docling_parse.pdf_parser import ContentConfig, ContentLevel, DecodeConfig, DoclingPdfParser

    skip, compute, keep = ContentLevel.SKIP, ContentLevel.COMPUTE, ContentLevel.COMPUTE_AND_MATERIALIZE
    content = ContentConfig(char_cells_content_level=compute, word_cells_content_level=skip,
                            line_cells_content_level=keep, shapes_content_level=skip,
                            bitmaps_content_level=skip, include_bitmap_bytes=False)
    # labels, title and the password/damage diagnosis come from pdfium (clearer messages)
    pdf = _open_pdfium(source)
    try:
        labels, title, meta = _labels_and_meta(pdf)
        outline = pdf_outline(pdf)
    finally:
        pdf.close()
    parser = DoclingPdfParser(loglevel="fatal")
    try:
        doc = parser.load(BytesIO(source) if isinstance(source, bytes) else Path(source),
                          decode_config=DecodeConfig(), content_config=content)
    except RuntimeError as e:
        raise LoadError(f"docling-parse cannot open the PDF: {e}") from None
    try:
        pages = []
        for n in range(1, doc.number_of_pages() + 1):
            seg = doc.get_page(n)
            pages.append(clean_page_text("\n".join(c.text for c in seg.textline_cells)))
            doc.unload_pages((n, n + 1))
    finally:
        doc.unload()
    return {"pages": pages, "page_labels": labels, "title": title, "metadata": meta, "outline": outline}


def pdf_docling_layout(source: Path | bytes, name: str) -> dict:
    """docling's layout pipeline (needs its models and torch); text per page from item provenance."""
    from io import BytesIO

    pdf = _open_pdfium(source)
    try:
        labels, title, meta = _labels_and_meta(pdf)
        outline = pdf_outline(pdf)
        n_pages = len(pdf)
    finally:
        pdf.close()
    try:
        from docling.backend.docling_parse_backend import DoclingParseDocumentBackend
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.document import InputDocument
        from docling.datamodel.pipeline_options import PdfPipelineOptions
        from docling.pipeline.standard_pdf_pipeline import StandardPdfPipeline

        import warnings

        with warnings.catch_warnings():  # docling warns about its own deprecated defaults here
            warnings.simplefilter("ignore", DeprecationWarning)
            pipe = StandardPdfPipeline(PdfPipelineOptions(do_ocr=False))
    except Exception as e:  # typically: no torch, or layout weights not downloadable offline
        raise LoadError(f"pdf_backend 'docling-layout' unavailable ({type(e).__name__}: {e}); "
                        "it needs docling's layout models — use 'pypdfium2'") from None
    stream = BytesIO(source if isinstance(source, bytes) else Path(source).read_bytes())
    res = pipe.execute(InputDocument(path_or_stream=stream, format=InputFormat.PDF,
                                     backend=DoclingParseDocumentBackend, filename=name), raises_on_error=True)
    doc = res.document
    pages = [clean_page_text(doc.export_to_text(page_no=k)) for k in range(1, n_pages + 1)]
    return {"pages": pages, "page_labels": labels, "title": title, "metadata": meta, "outline": outline}


BACKENDS = {"pypdfium2", "docling-parse", "docling-layout"}


class OcrNeeded(LoadError):
    """A PDF with no text layer on any page while OCR cannot run: `pages` (1-based) are those
    with something drawn on them, which OCR would read (the index summary lists such files)."""

    def __init__(self, message: str, pages: list[int]):
        super().__init__(message)
        self.pages = pages


def _drawn(source: Path | bytes, page_numbers: list[int]) -> list[int]:
    """Those of these 1-based pages with something drawn on them (not blank): what OCR would read."""
    pdf = _open_pdfium(source)
    try:
        out = []
        for n in page_numbers:
            page = pdf[n - 1]
            try:
                if ocr.has_content(page):
                    out.append(n)
            finally:
                page.close()
        return out
    finally:
        pdf.close()


def _ocr_pages(source: Path | bytes, page_numbers: list[int]) -> dict[int, str]:
    """OCR text of these 1-based pages, cleaned like a text layer; pages it finds nothing on are left out."""
    pdf = _open_pdfium(source)
    try:
        texts = ocr.read_pages(pdf, page_numbers)
    except ocr.OcrError as e:
        raise LoadError(f"OCR failed: {e}") from None
    finally:
        pdf.close()
    return {n: t for n, t in ((n, clean_page_text(t)) for n, t in texts.items()) if t}


def parse_pdf(source: Path | bytes, backend: str, name: str = "document.pdf", ocr_on: bool = True,
              running_heads: bool = False) -> dict:
    """The backend's pages; with `ocr_on`, pages without a text layer are OCR'd (provrag/index/ocr.py)
    and their numbers returned as "ocr_pages"; when OCR cannot run, the pages it would read are
    "ocr_waiting". A PDF with no text at all fails with what to do (OcrNeeded when OCR would help).
    With `running_heads` ([load] running_heads), the lines printed at the top or bottom of every
    page (title, chapter, page number) are removed (index/running_heads.py); metadata
    "running_lines" counts them, and "running_heads" holds what each page's said (its subject,
    which verify reads the page under: verify/evidence.py)."""
    if backend == "pypdfium2":
        out = pdf_pypdfium2(source)
    elif backend == "docling-parse":
        out = pdf_docling_parse(source)
    elif backend == "docling-layout":
        out = pdf_docling_layout(source, name)
    else:
        raise LoadError(f"unknown [load] pdf_backend {backend!r} (one of {', '.join(sorted(BACKENDS))})")
    pages = out["pages"]
    if not pages:
        raise LoadError("PDF has no pages")
    empty = [i + 1 for i, t in enumerate(pages) if not t]
    out["ocr_pages"], out["ocr_waiting"] = [], []
    if empty and ocr_on and ocr.tesseract() is not None:
        for n, text in sorted(_ocr_pages(source, empty).items()):
            pages[n - 1] = text
            out["ocr_pages"].append(n)
        empty = [n for n in empty if not pages[n - 1]]
    elif empty:  # OCR cannot run (no engine, or [load] ocr off): the pages it would read wait for it
        out["ocr_waiting"] = _drawn(source, empty)
        if len(empty) == len(pages):
            raise OcrNeeded(f"no text layer (scanned PDF?) and no OCR engine: {ocr.INSTALL_HINT}" if ocr_on
                            else "no text layer (scanned PDF?); enable [load] ocr", out["ocr_waiting"])
        if ocr_on:
            out["metadata"]["ocr"] = "not installed: " + ocr.INSTALL_HINT
    if len(empty) == len(pages):
        raise LoadError("no text layer, and [load] ocr found no text on its pages (blank or unreadable)")
    if running_heads:
        from provrag.index.running_heads import strip_running_lines

        out["pages"], removed, heads = strip_running_lines(pages)
        if removed:
            out["metadata"]["running_lines"] = str(removed)
            out["running_heads"] = heads
    if empty:
        out["metadata"]["pages_without_text"] = ",".join(map(str, empty))
    if out["ocr_pages"]:
        out["metadata"]["pages_ocr"] = ",".join(map(str, out["ocr_pages"]))
    out["metadata"]["pdf_backend"] = backend
    return out
