"""OCR of PDF pages without a text layer: pdfium renders the page, Tesseract reads it.

Chosen by reading and measuring on the project machine (2 cores; 20 pages of the Debian
manuals rendered at 200 dpi and saved as image-only PDFs, OCR'd and compared with the pages'
own text layer: bench/ocr_quality.py, 99.0 % of the words, 1.2 s a page with 2 pages at once):
- Debian's `tesseract` binary run as a subprocess. docling's OCR stage needs its layout
  models (a download that fails offline); pytesseract is a wrapper around the same binary
  that writes every image to a temporary PNG first (0.12 s of encoding for a 300-dpi page,
  plus a file) for nothing we use. Here the page goes to tesseract's stdin as a PGM (raw
  grey pixels, no encoding), and no dependency is added.
- 300 dpi, greyscale: 98.7 % of the text layer's words found (99.0 % with the joins below)
  at 2.1 s a page; 200 dpi found 98.1 % at 1.6 s. 300 dpi is Tesseract's own advice too.
- One thread per tesseract (OMP_THREAD_LIMIT=1): its OpenMP threads made a page slower on
  2 cores (3.0 s against 2.1 s). Pages of one PDF run side by side instead, as processes.
- A word hyphenated at a line end ("conven-" / "tion") is joined when both sides are
  lower-case letters, as pdfium's soft hyphens are for a text layer: on 30 other pages all
  20 such joins gave a word of the text layer.
A page with nothing drawn on it (no page object at all) is blank, not scanned: it is not
OCR'd (the manuals' 9 empty pages are all such).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

INSTALL_HINT = "install Tesseract with `apt-get install tesseract-ocr` (or `make ocr`)"
LANGUAGE = "eng"            # Debian's tesseract-ocr ships English (tesseract-ocr-eng)
DPI = 300
MAX_SIDE_PX = 6000          # a poster-sized page is rendered smaller rather than as a 100 MB image
PAGE_TIMEOUT_S = 300        # one page; a hung tesseract fails the file instead of the run
PARALLEL_PAGES = max(1, min(4, os.cpu_count() or 1))
_LINE_END_HYPHEN = re.compile(r"(?<=[a-z])-\n(?=[a-z])")


def how_to_read(ocr_on: bool) -> str:
    """What to do so that the pages waiting for OCR are read (the index summary's advice)."""
    if not ocr_on:
        return "set [load] ocr = true in your --config file, then run `provrag index` again"
    return ("install Tesseract — `make ocr` (as root) or `sudo apt-get install tesseract-ocr` — "
            "then run `provrag index` again: it reads them")


class OcrError(Exception):
    """Tesseract could not read a page (the message is one line)."""


def tesseract() -> str | None:
    """The tesseract binary on PATH, or None (looked up each time: PATH may change)."""
    return shutil.which("tesseract")


@lru_cache(maxsize=4)
def _version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unusable ({type(e).__name__})"
    first = (out.stdout or out.stderr).strip().splitlines()
    return first[0] if first else "unknown"


def engine() -> str | None:
    """What OCR output depends on ("tesseract 5.3.0 eng 300dpi"), None without tesseract: part
    of the parse-cache key, so installing or upgrading it re-parses the PDFs that need OCR."""
    binary = tesseract()
    return f"{_version(binary)} {LANGUAGE} {DPI}dpi" if binary else None


def has_content(page) -> bool:
    """Whether anything is drawn on the page (an image, a path, a form): worth OCR."""
    return next(iter(page.get_objects(max_depth=1)), None) is not None


def page_image(page) -> bytes:
    """The page rendered greyscale at DPI (smaller when huge), as a binary PGM."""
    w, h = page.get_size()
    scale = min(DPI / 72, MAX_SIDE_PX / max(w, h, 1))
    # an opaque white fill and grayscale=True make pypdfium2 (5.15) render one byte per pixel
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        width, height, stride, channels = bitmap.width, bitmap.height, bitmap.stride, bitmap.n_channels
        buf = bytes(bitmap.buffer)
    finally:
        bitmap.close()
    if channels != 1:
        raise OcrError(f"pdfium rendered {channels} channels where one (grey) was asked for")
    rows = buf if stride == width else b"".join(buf[i * stride:i * stride + width] for i in range(height))
    return b"P5\n%d %d\n255\n" % (width, height) + rows


def read_image(image: bytes) -> str:
    """Tesseract's text of one page image (form feed and line-end hyphens removed)."""
    binary = tesseract()
    if binary is None:
        raise OcrError(f"no OCR engine: {INSTALL_HINT}")
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    try:
        out = subprocess.run([binary, "stdin", "stdout", "-l", LANGUAGE, "--dpi", str(DPI)], input=image,
                             capture_output=True, env=env, timeout=PAGE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise OcrError(f"tesseract took over {PAGE_TIMEOUT_S} s on a page") from None
    if out.returncode != 0:
        err = " ".join(out.stderr.decode("utf-8", "replace").split())[:200]
        raise OcrError(f"tesseract failed (exit {out.returncode}): {err}")
    text = out.stdout.decode("utf-8", "replace").replace("\f", "")
    return _LINE_END_HYPHEN.sub("", text)


def read_pages(pdf, page_numbers: list[int]) -> dict[int, str]:
    """OCR text of the given 1-based pages of an open pypdfium2 document ({page: text});
    blank pages are left out. Rendering stays in this thread (pdfium is not thread-safe);
    PARALLEL_PAGES tesseract processes read at a time, so at most that many images are held."""
    out: dict[int, str] = {}
    todo = list(page_numbers)
    with ThreadPoolExecutor(PARALLEL_PAGES) as pool:
        while todo:
            batch, todo = todo[:PARALLEL_PAGES], todo[PARALLEL_PAGES:]
            images = {}
            for n in batch:
                page = pdf[n - 1]
                try:
                    if has_content(page):
                        images[n] = page_image(page)
                finally:
                    page.close()
            for n, text in zip(images, pool.map(read_image, images.values())):
                out[n] = text
    return out
