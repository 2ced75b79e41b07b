"""Manual pages printed to PDF for eval/options: groff renders them, pypdfium2 reads them back.

eval/options asks about command-line options over two kinds of documents: PDFs that a Debian
package ships (Graphviz's, pinned by sha256 like eval/texlive's) and manual pages that only ship
as roff source, printed here with ``groff -t -man -Tpdf``. groff writes its creation date into the
PDF, so those bytes differ on every run; what the items were written from is the text. A rendered
document is therefore pinned by its package's .deb (sha256 in corpus.json's ``debs``), the page's
path in the package, and the PDF's page count and ``text_sha256``: the sha256 of its page texts as
pypdfium2 extracts them (one ``get_text_range()`` per physical page, joined by form feeds, UTF-8)
— the texts the items' answers were checked against. A groff other than the one the set was made
with (GNU groff 1.22.4, Debian 12) may lay a page out differently; the check then names the page.

groff's PDF device is in Debian's ``groff`` package; ``groff-base`` (what man-db needs) lacks it.
"""
from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
from pathlib import Path

GROFF = ("groff", "-t", "-man", "-Tpdf")  # -t: tbl, for the pages whose options are in a table
INSTALL = "Debian: apt-get install groff (groff-base, which man-db needs, has no PDF device)"


class RenderError(Exception):
    """A manual page could not be printed to PDF here."""


def groff_problem() -> str | None:
    """Why this machine cannot print a manual page to PDF, or None when it can."""
    if shutil.which("groff") is None:
        return f"groff is not installed ({INSTALL})"
    try:
        probe = subprocess.run(list(GROFF), input=b".TH PROBE 1\n.SH NAME\nprobe \\- probe\n",
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"groff could not run: {e}"
    if probe.returncode != 0 or not probe.stdout.startswith(b"%PDF"):
        why = (probe.stderr.decode(errors="replace").strip().splitlines() or ["no PDF written"])[-1]
        return f"groff cannot write PDF ({why}; {INSTALL})"
    return None


def render(page: Path, target: Path) -> None:
    """Print the manual page ``page`` (roff source, gzipped or not) to the PDF ``target``."""
    source = page.read_bytes()
    if page.suffix == ".gz":
        source = gzip.decompress(source)
    try:
        run = subprocess.run(list(GROFF), input=source, capture_output=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RenderError(f"groff could not print {page.name}: {e}") from e
    if run.returncode != 0 or not run.stdout.startswith(b"%PDF"):
        why = (run.stderr.decode(errors="replace").strip().splitlines() or ["no PDF written"])[-1]
        raise RenderError(f"groff could not print {page.name}: {why}")
    target.write_bytes(run.stdout)


def page_texts(pdf: Path) -> list[str]:
    """The PDF's text, one string per physical page, as pypdfium2 extracts it."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(pdf))
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def text_digest(pdf: Path) -> tuple[int, str]:
    """(page count, sha256 of the page texts joined by form feeds): what corpus.json pins."""
    texts = page_texts(pdf)
    return len(texts), hashlib.sha256("\f".join(texts).encode("utf-8")).hexdigest()
