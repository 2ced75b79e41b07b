"""Scanned PDFs made from real pages, for the OCR tests: a page of a real PDF rendered to a
picture and saved as an image-only PDF (Pillow), as a scanner would produce it.

`needs_tesseract` marks a test that runs Debian's tesseract binary: skipped where it is absent, a
failure in CI (tests/components.py; .ci/run installs it).
"""
from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium
import pytest

needs_tesseract = pytest.mark.usefixtures("tesseract_binary")

SCAN_DPI = 200  # an ordinary office scanner's resolution


def text_layer(pdf_path: Path, page_no: int) -> str:
    """The text of a 1-based page of a real PDF, as provrag reads a text layer."""
    from provrag.index.pdf import clean_page_text

    pdf = pdfium.PdfDocument(pdf_path)
    try:
        page = pdf[page_no - 1]
        return clean_page_text(page.get_textpage().get_text_range())
    finally:
        pdf.close()


def scanned_pdf(src: Path, pages: list[int], out: Path) -> Path:
    """An image-only PDF of the given 1-based pages of src, in that order."""
    pdf = pdfium.PdfDocument(src)
    try:
        images = [pdf[n - 1].render(scale=SCAN_DPI / 72, grayscale=True).to_pil() for n in pages]
    finally:
        pdf.close()
    images[0].save(out, "PDF", resolution=SCAN_DPI, save_all=True, append_images=images[1:])
    return out


def mixed_pdf(src: Path, pages: list[int], scanned: int, out: Path) -> Path:
    """The given pages of src with their text layer, except `scanned`, which is a picture of itself."""
    buf = io.BytesIO()
    scanned_pdf(src, [scanned], buf)
    picture = pdfium.PdfDocument(buf.getvalue())
    original = pdfium.PdfDocument(src)
    doc = pdfium.PdfDocument.new()
    for n in pages:
        doc.import_pages(picture if n == scanned else original, [0 if n == scanned else n - 1])
    doc.save(out)
    for d in (doc, picture, original):
        d.close()
    return out


def words(text: str) -> Counter:
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def word_recall(reference: str, ocr_text: str) -> float:
    """Share of the reference's words (with their counts) found in the OCR text."""
    ref, got = words(reference), words(ocr_text)
    total = sum(ref.values())
    return sum(min(c, got[w]) for w, c in ref.items()) / total if total else 1.0
