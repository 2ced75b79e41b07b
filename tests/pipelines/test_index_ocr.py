"""End to end through the CLI: a folder holding a scan of two real R FAQ pages (an image-only
PDF, tests/scans.py) and a text file is indexed with OCR; the scanned words are on their page
in text_units, the summary counts the OCR'd pages, `ask` finds words that only the scanned
second page holds and its sources say the page was OCR'd. Without Tesseract on PATH the
same folder is indexed with the scan recorded as failed and the install hint, no traceback."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from rich.console import Console

from provrag.index.summary import IndexSummary
from provrag.views.index import index_summary
from tests.scans import needs_tesseract, scanned_pdf

FAQ_SCANNED = [10, 11]                            # R-FAQ.pdf pages 10 and 11 → scan.pdf pages 1 and 2
QUESTION = "Who wrote Introductory Statistics with R?"  # R-FAQ page 11 only: "Peter Dalgaard (2008), “Introductory…"


def run(cli, *args, env=None):
    return subprocess.run([*cli, *map(str, args)], capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def folder(tmp_path_factory, small_corpus) -> Path:
    docs = tmp_path_factory.mktemp("scan") / "docs"
    docs.mkdir()
    scanned_pdf(small_corpus / "R-FAQ.pdf", FAQ_SCANNED, docs / "scan.pdf")
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sotu.txt")
    return docs


@pytest.fixture(scope="module")
def indexed(folder, provrag_cli):
    out = folder.parent / "out"
    r = run(provrag_cli, "index", folder, "--out", out, "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    return out, json.loads(r.stdout)


@needs_tesseract
def test_scanned_pages_are_indexed_with_their_ocr_pages(indexed):
    out, summary = indexed
    assert summary["documents_ok"] == 2 and summary["pages"] == 2
    assert summary["pages_ocr"] == 2 and summary["pages_without_text"] == 0
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert counts["pages_ocr"] == 2 and counts["pages_without_text"] == 0
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(index_summary(IndexSummary(**summary)))  # the table `index` prints
    assert re.search(r"of which by OCR\s*│\s*2\s*│", console.export_text())
    docs = {r["id"]: r["path"] for r in pq.read_table(out / "documents.parquet", columns=["id", "path"]).to_pylist()}
    units = pq.read_table(out / "text_units.parquet").to_pylist()
    scan = [u for u in units if docs[u["document_id"]] == "scan.pdf"]
    assert scan and all(u["ocr_pages"] == list(range(u["page_start"], u["page_end"] + 1)) for u in scan)
    assert all(u["ocr_pages"] == [] for u in units if docs[u["document_id"]] == "sotu.txt")
    dalgaard = [u for u in scan if "Dalgaard" in u["text"]]
    assert dalgaard and {u["page_start"] for u in dalgaard} == {2}


@needs_tesseract
def test_ask_finds_the_scanned_words_and_says_ocr(indexed, provrag_cli):
    out, _ = indexed
    r = run(provrag_cli, "ask", QUESTION, "--index", out, "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout)
    assert not res["abstained"] and "Dalgaard" in res["answer"]
    top = res["sources"][0]
    assert (top["path"], top["page_start"], top["ocr"]) == ("scan.pdf", 2, True) and "Dalgaard" in top["quote"]
    shown = run(provrag_cli, "ask", QUESTION, "--index", out)
    assert shown.returncode == 0 and "p. 2 (OCR)" in shown.stdout
    # the HTML audit report names the page as OCR'd too
    html = out.parent / "report.html"
    r = run(provrag_cli, "report", "--trace", res["trace_id"], "--index", out, "--out", html)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "page 2 (text by OCR)" in html.read_text(encoding="utf-8")


def test_without_tesseract_the_scan_fails_with_the_install_hint(folder, provrag_cli, tmp_path):
    bare = tmp_path / "bin"  # a PATH with python only: no tesseract to be found
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(bare)}
    r = run(provrag_cli, "index", folder, "--out", tmp_path / "out", "--json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr + r.stdout
    summary = json.loads(r.stdout)
    assert summary["documents_ok"] == 1 and summary["pages_ocr"] == 0
    (problem,) = summary["problems"]
    assert problem["path"] == "scan.pdf" and problem["status"] == "failed"
    assert "apt-get install tesseract-ocr" in problem["error"] and "make ocr" in problem["error"]
