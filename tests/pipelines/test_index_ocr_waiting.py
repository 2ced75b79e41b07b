"""Nothing lost on a fresh machine (issue 29 items 6 and 7): a folder holding PDFs that fail —
scanned ones while OCR cannot run, broken ones — is "up to date" on a re-run when nothing
changed (it used to be a full update every time: run number up, index hash the same), and the
summary names the documents whose scanned pages wait for OCR and says how to have them read.
Once Tesseract is there, the next run reads them.

Real files: a real HTML page (the Debian developers reference's scope), two real broken PDFs of ../shared/corpora/bad,
and pages of the real R FAQ turned into a scan (every page a picture) and a mixed PDF (one
page a picture), as tests/scans.py makes them. "No Tesseract" is a PATH without it; "OCR off"
is the setting.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scans import mixed_pdf, needs_tesseract, scanned_pdf

BROKEN = ("truncated.pdf", "not-a-pdf.pdf")
WAITING = ["mixed.pdf", "scan.pdf"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory, small_corpus, bad_corpus) -> Path:
    docs = tmp_path_factory.mktemp("ocr-waiting") / "docs"
    docs.mkdir()
    shutil.copyfile(small_corpus / "debian-developers-reference-scope.html", docs / "scope.html")
    for name in BROKEN:
        shutil.copyfile(bad_corpus / name, docs / name)
    scanned_pdf(small_corpus / "R-FAQ.pdf", [10, 11], docs / "scan.pdf")
    mixed_pdf(small_corpus / "R-FAQ.pdf", [9, 10, 11], 10, docs / "mixed.pdf")
    return docs


def no_tesseract(tmp_path: Path) -> dict:
    bare = tmp_path / "bin"  # a PATH with python only: no tesseract to be found
    bare.mkdir(exist_ok=True)
    if not (bare / "python").exists():
        (bare / "python").symlink_to(sys.executable)
    return {**os.environ, "PATH": str(bare), "XDG_DATA_HOME": str(tmp_path / "xdg")}


def index(provrag_cli, docs, out, env, *extra) -> subprocess.CompletedProcess:
    r = subprocess.run([*provrag_cli, "index", str(docs), "--out", str(out), *extra], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr + r.stdout
    return r


@pytest.fixture(scope="module")
def without_tesseract(folder, provrag_cli, tmp_path_factory):
    """The folder indexed twice (--json) and a third time as a user reads it, with no tesseract on PATH."""
    work = tmp_path_factory.mktemp("no-tesseract")
    env, out = no_tesseract(work), work / "idx"
    first = json.loads(index(provrag_cli, folder, out, env, "--json").stdout)
    again = json.loads(index(provrag_cli, folder, out, env, "--json").stdout)
    shown = " ".join(index(provrag_cli, folder, out, env).stdout.split())  # rich wraps lines
    return {"out": out, "first": first, "again": again, "shown": shown}


def test_without_tesseract_a_rerun_is_up_to_date_and_names_what_waits(without_tesseract):
    first, again, out = without_tesseract["first"], without_tesseract["again"], without_tesseract["out"]
    assert first["mode"] == "first" and first["documents_ok"] == 2  # scope.html, and mixed.pdf without its picture page
    assert {p["path"] for p in first["problems"]} == {*BROKEN, "scan.pdf"}
    assert first["waiting_for_ocr"] == WAITING
    assert "make ocr" in first["ocr_hint"] and "apt-get install tesseract-ocr" in first["ocr_hint"]
    assert again["mode"] == "up to date", again["mode"]
    assert (again["run"], again["index_version"]) == (first["run"], first["index_version"]) == (1, first["index_version"])
    assert json.loads((out / "manifest.json").read_text())["run"] == 1
    assert again["waiting_for_ocr"] == WAITING and again["ocr_hint"] == first["ocr_hint"]
    shown = without_tesseract["shown"]  # what a user reads
    assert "up to date" in shown
    assert "waiting for OCR (2 documents with scanned pages not read): mixed.pdf, scan.pdf" in shown
    assert "`make ocr` (as root) or `sudo apt-get install tesseract-ocr`" in shown


def test_with_ocr_off_a_rerun_is_up_to_date_and_says_to_turn_it_on(folder, tmp_path, monkeypatch):
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    cfg = load_config(None, {"load": {"ocr": False}})
    first = run_index(folder, tmp_path / "idx", cfg)
    again = run_index(folder, tmp_path / "idx", cfg)
    assert first.documents_failed == 3 and again.mode == "up to date"
    assert (again.run, again.index_version) == (first.run, first.index_version) == (1, first.index_version)
    assert first.waiting_for_ocr == again.waiting_for_ocr == WAITING
    assert "[load] ocr = true" in first.ocr_hint
    changed = run_index(folder, tmp_path / "idx", load_config(None, {"load": {"ocr": False, "max_line_chars": 9999}}))
    assert changed.mode == "update" and changed.run == 2  # a setting that shapes the index still updates it


@needs_tesseract
def test_once_tesseract_is_there_the_next_run_reads_what_waited(folder, without_tesseract, provrag_cli, tmp_path):
    out = tmp_path / "idx"
    shutil.copytree(without_tesseract["out"], out)  # the index built without tesseract (run 1)
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}
    after = json.loads(index(provrag_cli, folder, out, env, "--json").stdout)
    assert after["mode"] == "update" and after["run"] == 2
    assert after["waiting_for_ocr"] == [] and after["ocr_hint"] is None
    assert after["pages_ocr"] == 3 and after["documents_ok"] == 3  # scan.pdf's two pages, mixed.pdf's one
    assert {p["path"] for p in after["problems"]} == set(BROKEN)
    final = json.loads(index(provrag_cli, folder, out, env, "--json").stdout)
    assert final["mode"] == "up to date" and final["run"] == 2  # the broken PDFs fail the same way: nothing to do
