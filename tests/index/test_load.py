"""LOAD stage on real files: page offsets against pypdfium2's own page text, page labels,
the bad corpus, gzip, determinism across worker processes, and the parse cache."""
from __future__ import annotations

import gzip
import hashlib
import re
import shutil
from pathlib import Path

import pytest

from provrag.config import load_config
from provrag.index import load as L
from provrag.index.parse import parse_file
from provrag.store.cache import Cache

pytestmark = pytest.mark.usefixtures("shared")

_NOT_TEXT = re.compile(r"[\s\ufffe\uffff\x00-\x1f\x7f]+")


def squash(s: str) -> str:
    """Text with whitespace and non-characters removed: what must survive loading unchanged."""
    return _NOT_TEXT.sub("", s)


def cfg(**load) -> dict:
    return load_config(overrides={"load": load} if load else None)


def pdfium_pages(path: Path | bytes) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


@pytest.fixture(scope="module")
def small_docs(small_corpus):
    return {d.path: d for d in L.load_folder(small_corpus, cfg(workers=1))}


@pytest.fixture(scope="module")
def bad_docs(bad_corpus):
    return {d.path: d for d in L.load_folder(bad_corpus, cfg(workers=1))}


def test_every_file_has_a_row_in_sorted_order(small_docs, small_corpus):
    files = sorted(p.relative_to(small_corpus).as_posix() for p in small_corpus.rglob("*") if p.is_file())
    assert list(small_docs) == files
    for d in small_docs.values():
        assert d.status in ("ok", "failed", "skipped")
        assert (d.error is None) == (d.status == "ok")
        assert d.sha256 == hashlib.sha256((small_corpus / d.path).read_bytes()).hexdigest()
        assert d.creation_date and d.creation_date.endswith("+00:00")


def test_pdf_pages_are_physical_and_match_pypdfium2(small_docs, small_corpus):
    pdfs = [d for d in small_docs.values() if d.path.endswith(".pdf")]
    assert len(pdfs) == 3
    for d in pdfs:
        assert d.status == "ok" and d.mime_type == "application/pdf"
        ref = pdfium_pages(small_corpus / d.path)
        assert d.n_pages == len(ref) == len(d.pages)
        assert [p[0] for p in d.pages] == list(range(1, len(ref) + 1))
        assert d.pages[0][1] == 0 and d.pages[-1][2] == len(d.text)
        for (_, s, e), (_, s2, _) in zip(d.pages, d.pages[1:]):
            assert s <= e and s2 == e + 2 and d.text[e:s2] == "\n\n"
        for (no, s, e), page in zip(d.pages, ref):
            assert squash(d.text[s:e]) == squash(page), f"{d.path} page {no} differs from pypdfium2"
        assert "\r" not in d.text and "\ufffe" not in d.text


def test_page_labels_kept_where_the_pdf_has_them(small_docs):
    faq = small_docs["R-FAQ.pdf"]
    assert faq.page_labels is not None and len(faq.page_labels) == faq.n_pages
    assert faq.page_labels[:5] == ["T-1", "i", "ii", "iii", "1"]
    assert faq.page_labels[-1].isdigit()  # body pages are numbered; physical page is not the label
    assert int(faq.page_labels[-1]) < faq.n_pages
    assert small_docs["asymptote-CAD.pdf"].page_labels is None


def test_titles_from_pdf_metadata_or_file_stem(small_docs):
    assert small_docs["asymptote-asy-latex.pdf"].title == "The asymptote package"
    assert small_docs["R-FAQ.pdf"].title == "R-FAQ"  # no Title entry
    assert small_docs["sotu-1863-lincoln.txt"].title == "sotu-1863-lincoln"


def test_pageless_formats_are_faithful(small_docs, small_corpus):
    txt = small_docs["sotu-1863-lincoln.txt"]
    raw = (small_corpus / txt.path).read_text(encoding="utf-8")
    assert txt.mime_type == "text/plain" and txt.text == raw.replace("\r\n", "\n")
    assert txt.pages is None and txt.n_pages is None and txt.page_labels is None

    import docx
    import lxml.html

    d = small_docs["carroll-lookingglass.docx"]
    assert d.status == "ok" and d.pages is None and d.mime_type.endswith("wordprocessingml.document")
    paras = [p.text for p in docx.Document(str(small_corpus / d.path)).paragraphs if p.text.strip()]
    assert len(paras) > 10
    body = squash(d.text)
    assert all(squash(p) in body for p in paras)

    h = small_docs["debian-developers-reference-scope.html"]
    assert h.status == "ok" and h.pages is None and h.mime_type == "text/html"
    root = lxml.html.parse(str(small_corpus / h.path)).getroot()
    # every paragraph of the page's own content, none of its site chrome (index/html_content.py)
    (main,) = root.xpath("//*[@role='main']")
    ps = [p.text_content() for p in main.iter("p") if p.text_content().strip()]
    assert ps and all(squash(p) in squash(h.text) for p in ps)
    chrome = [p.text_content() for nav in root.xpath("//*[@role='navigation']") for p in nav.iter("p")]
    assert chrome and not any(squash(p) in squash(h.text) for p in chrome)


def test_unknown_formats_are_skipped_not_dropped(small_docs):
    lic = [d for d in small_docs.values() if d.path.startswith("licenses/")]
    assert lic and all(d.status == "skipped" and ".copyright" in d.error for d in lic)


def test_every_bad_file_is_recorded_with_a_one_line_error(bad_docs, bad_corpus):
    files = sorted(p.name for p in bad_corpus.iterdir() if p.is_file())
    assert list(bad_docs) == files
    for d in bad_docs.values():
        assert d.status in ("failed", "skipped"), d.path
        assert d.error and "\n" not in d.error and len(d.error) <= 300
        assert d.text == "" and d.pages is None
    assert "password" in bad_docs["encrypted.pdf"].error
    assert bad_docs["unknown-format.xyz"].status == "skipped"
    assert bad_docs["empty.pdf"].status == bad_docs["empty.md"].status == "skipped"
    assert "UTF-8" in bad_docs["invalid-utf8.txt"].error and "0x" in bad_docs["invalid-utf8.txt"].error
    assert bad_docs["one-huge-line.txt"].status == "skipped"
    assert bad_docs["not-a-pdf.pdf"].status == bad_docs["truncated.pdf"].status == "failed"
    assert "body" in bad_docs["html-no-body.html"].error


def test_documents_frame_is_the_contract_table_plus_pages(small_docs, bad_docs):
    import polars as pl

    from provrag.index.tables import OCR_PAGES, OCR_WAITING, OUTLINE, PAGES, frame, to_arrow
    from provrag.store import schema

    docs = list(small_docs.values()) + list(bad_docs.values())
    df = L.documents_frame(docs)
    assert df.drop(PAGES, OCR_PAGES, OUTLINE, OCR_WAITING).schema == frame(schema.DOCUMENTS, []).schema
    assert df["human_readable_id"].to_list() == list(range(len(docs))) and df["id"].n_unique() == len(docs)
    assert df["path"].to_list() == [d.path for d in docs] and df["text_unit_ids"].null_count() == len(docs)
    faq = df.filter(pl.col("path") == "R-FAQ.pdf").row(0, named=True)
    assert faq[PAGES] == [list(p) for p in small_docs["R-FAQ.pdf"].pages] and faq["n_pages"] == len(faq[PAGES])
    assert faq["page_labels"] == small_docs["R-FAQ.pdf"].page_labels
    # the PDF's outline: each bookmark at the line its heading is printed on, on its page
    first = faq[OUTLINE][0]
    _, p0, p1 = faq[PAGES][4]  # "1 Introduction" starts on physical page 5
    assert (first["level"], first["title"]) == (0, "1 Introduction") and p0 <= first["char_start"] < p1
    assert small_docs["R-FAQ.pdf"].text[first["char_start"]:].startswith("1 Introduction")
    html = df.filter(pl.col("mime_type") == "text/html").row(0, named=True)
    assert html[PAGES] is None and html["page_labels"] is None
    not_ok = df.filter(pl.col("status") != "ok")
    assert set(not_ok["text"]) == {""} and not_ok[PAGES].null_count() == not_ok.height
    table = to_arrow(schema.DOCUMENTS, df)  # as written: the contract's schema, metadata a map again
    assert table.schema == schema.SCHEMAS[schema.DOCUMENTS]
    assert table.column("metadata").to_pylist() == [list(d.metadata.items()) for d in docs]


def test_long_line_limit_is_a_setting(tmp_path):
    (tmp_path / "wide.txt").write_text("word " * 30_000, encoding="utf-8")
    assert L.load_folder(tmp_path, cfg(workers=1))[0].status == "skipped"
    assert L.load_folder(tmp_path, cfg(workers=1, max_line_chars=0))[0].status == "ok"


def test_gzip_is_transparent_by_magic_not_only_by_name(tmp_path, small_docs, small_corpus):
    src = small_corpus / "asymptote-CAD.pdf"
    (tmp_path / "CAD.pdf.gz").write_bytes(gzip.compress(src.read_bytes()))
    # gzip data under a plain name: the magic number decides, not the name
    (tmp_path / "speech.txt").write_bytes(gzip.compress((small_corpus / "sotu-1863-lincoln.txt").read_bytes()))
    (tmp_path / "cut.pdf.gz").write_bytes(gzip.compress(src.read_bytes())[:300])
    docs = {d.path: d for d in L.load_folder(tmp_path, cfg(workers=1))}
    gz, plain = docs["CAD.pdf.gz"], small_docs["asymptote-CAD.pdf"]
    assert gz.status == "ok" and gz.mime_type == "application/pdf" and gz.title == "CAD"
    assert (gz.text, gz.pages, gz.n_pages) == (plain.text, plain.pages, plain.n_pages)
    assert gz.sha256 == hashlib.sha256((tmp_path / "CAD.pdf.gz").read_bytes()).hexdigest() != plain.sha256
    assert gz.metadata["compression"] == "gzip"
    assert docs["speech.txt"].text == small_docs["sotu-1863-lincoln.txt"].text
    assert docs["cut.pdf.gz"].status == "failed" and "gzip" in docs["cut.pdf.gz"].error


def test_hidden_files_ignored_and_size_limit(tmp_path, small_corpus):
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "x.txt").write_text("hidden folder", encoding="utf-8")
    (tmp_path / ".notes.txt").write_text("hidden file", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    shutil.copyfile(small_corpus / "R-FAQ.pdf", tmp_path / "sub" / "R-FAQ.pdf")
    (tmp_path / "a.txt").write_text("visible text", encoding="utf-8")
    docs = L.load_folder(tmp_path, cfg(workers=1, max_file_mb=0.1))
    assert [d.path for d in docs] == ["a.txt", "sub/R-FAQ.pdf"]
    assert docs[0].status == "ok"
    assert docs[1].status == "skipped" and "max_file_mb" in docs[1].error


def test_pdf_without_text_layer_fails_loudly(tmp_path):
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    pdf.new_page(595, 842)
    pdf.new_page(595, 842)
    pdf.save(str(tmp_path / "scan.pdf"))
    d = L.load_folder(tmp_path, cfg(workers=1))[0]
    assert d.status == "failed" and "no text layer" in d.error and "ocr" in d.error


def test_pptx_pages_are_slides(tmp_path):
    from pptx import Presentation

    prs = Presentation()
    titles = ["Intake and screens", "Membrane trains", "Disinfection"]
    for i, t in enumerate(titles):
        s = prs.slides.add_slide(prs.slide_layouts[1])
        s.shapes.title.text = t
        s.placeholders[1].text = f"Point {i + 1} about {t.lower()}"
    prs.save(str(tmp_path / "deck.pptx"))
    d = L.load_folder(tmp_path, cfg(workers=1))[0]
    assert d.status == "ok" and d.mime_type.endswith("presentationml.presentation")
    assert d.n_pages == 3 and [p[0] for p in d.pages] == [1, 2, 3]
    for (no, s, e), t in zip(d.pages, titles):
        assert d.text[s:e].startswith(t) and f"Point {no} about" in d.text[s:e]


def test_docling_parse_backend_puts_text_on_the_same_pages(small_corpus):
    res = parse_file(str(small_corpus / "asymptote-CAD.pdf"), "pdf",
                     {**L.parse_options(cfg().load), "pdf_backend": "docling-parse"})
    assert res["status"] == "ok" and res["metadata"]["pdf_backend"] == "docling-parse"
    alnum = lambda s: re.sub(r"[^a-z0-9]+", "", s.lower())  # the normalisation of checks/check_index.py
    ref = [alnum(p) for p in pdfium_pages(small_corpus / "asymptote-CAD.pdf")]
    assert len(res["page_texts"]) == len(ref)
    hits = total = 0
    for page, want in zip(res["page_texts"], ref):
        t = alnum(page)
        for k in range(0, max(1, len(t) - 30), 50):
            total += 1
            hits += t[k:k + 30] in want
    assert total > 50 and hits / total >= 0.95


def test_unavailable_layout_backend_is_a_recorded_failure(small_corpus):
    try:
        import torch  # noqa: F401
        pytest.skip("torch present: the layout pipeline may really run")
    except ImportError:
        pass
    res = parse_file(str(small_corpus / "asymptote-CAD.pdf"), "pdf",
                     {**L.parse_options(cfg().load), "pdf_backend": "docling-layout"})
    assert res["status"] == "failed" and "docling-layout" in res["error"]


def test_unknown_pdf_backend_is_a_config_error():
    from provrag.config import ConfigError
    from provrag.index.pdf import BACKENDS

    with pytest.raises(ConfigError, match="'load.pdf_backend' must be one of 'pypdfium2', 'docling-parse'"):
        cfg(pdf_backend="acrobat")
    import dataclasses

    from provrag.config import LoadSettings

    allowed = {f.name: f.metadata for f in dataclasses.fields(LoadSettings)}["pdf_backend"]["one_of"]
    assert set(allowed) == BACKENDS  # the config accepts exactly the backends the loader has


@pytest.fixture()
def mixed(tmp_path, small_corpus, bad_corpus):
    """PDFs, text and every bad file, without office formats (keeps worker start-up cheap)."""
    root = tmp_path / "docs"
    root.mkdir()
    for p in small_corpus.glob("*"):
        if p.suffix in (".pdf", ".txt"):
            shutil.copyfile(p, root / p.name)  # copyfile: the shared originals are read-only
    shutil.copytree(bad_corpus, root / "bad", copy_function=shutil.copyfile)
    return root


def test_deterministic_whatever_the_number_of_worker_processes(mixed, monkeypatch):
    one = L.load_folder(mixed, cfg(workers=1))
    monkeypatch.setattr(L, "POOL_MIN_SECONDS", 0.0)  # force the process pool even for a small folder
    two = L.load_folder(mixed, cfg(workers=2))
    again = L.load_folder(mixed, cfg(workers=2))
    assert [d.path for d in one] == sorted(d.path for d in one)
    assert one == two == again
    assert sum(d.status == "ok" for d in one) == 4


def test_progress_counts_every_file(mixed):
    class Bar:
        def __init__(self):
            self.stages, self.done = [], 0

        def stage(self, name, total=None):
            from contextlib import contextmanager

            @contextmanager
            def cm():
                self.stages.append((name, total))
                yield self

            return cm()

        def advance(self, n=1):
            self.done += n

    bar = Bar()
    docs = L.load_folder(mixed, cfg(workers=1), progress=bar)
    assert bar.stages == [("load", len(docs))] and bar.done == len(docs)


def test_parse_cache_hit_calls_no_parser(mixed, tmp_path, monkeypatch):
    cache = Cache(tmp_path / "cache")
    calls = []
    real = L.parse_file
    monkeypatch.setattr(L, "parse_file", lambda *a: calls.append(a[0]) or real(*a))
    first = L.load_folder(mixed, cfg(workers=1), cache=cache)
    n_ok = sum(d.status == "ok" for d in first)
    assert n_ok == 4 and len(calls) > n_ok

    # a second run over the same files through the previous run's cache (as the index does)
    calls.clear()
    second = L.load_folder(mixed, cfg(workers=1), cache=Cache(tmp_path / "cache2", previous=tmp_path / "cache"))
    assert second == first
    parsed_again = {Path(c).name for c in calls}
    assert not parsed_again & {Path(d.path).name for d in first if d.status == "ok"}  # no ok file reparsed
    assert parsed_again  # failures are not cached: a fixed environment may read them next time

    # a changed file is a miss; a renamed one is a hit that takes its new path and title
    calls.clear()
    (mixed / "sotu-1863-lincoln.txt").write_text("A different speech.\n", encoding="utf-8")
    (mixed / "R-FAQ.pdf").rename(mixed / "faq.pdf")
    third = {d.path: d for d in L.load_folder(mixed, cfg(workers=1), cache=cache)}
    assert "sotu-1863-lincoln.txt" in {Path(c).name for c in calls}
    assert "faq.pdf" not in {Path(c).name for c in calls}
    faq = next(d for d in first if d.path == "R-FAQ.pdf")
    assert third["faq.pdf"].title == "faq" and third["faq.pdf"].text == faq.text
    assert third["sotu-1863-lincoln.txt"].text == "A different speech.\n"

    # parse_cache = false ignores the cache
    calls.clear()
    L.load_folder(mixed, cfg(workers=1, parse_cache=False), cache=cache)
    assert "faq.pdf" in {Path(c).name for c in calls}


def crash_on_purpose(task: tuple) -> dict:
    """A parser that kills its worker process on files named crash*, like a native segfault."""
    import os

    if Path(task[0]).name.startswith("crash"):
        os._exit(3)
    return L.parse_file(*task)


def test_a_parser_crash_costs_only_its_file(tmp_path, monkeypatch):
    for name in ("a.txt", "crash.txt", "z.txt"):
        (tmp_path / name).write_text(f"Text of {name}.\n", encoding="utf-8")
    monkeypatch.setattr(L, "_parse_task", crash_on_purpose)  # pickled by name: workers import it from here
    monkeypatch.setattr(L, "POOL_MIN_SECONDS", 0.0)
    docs = {d.path: d for d in L.load_folder(tmp_path, cfg(workers=2))}
    assert docs["crash.txt"].status == "failed" and "crashed" in docs["crash.txt"].error
    assert docs["a.txt"].status == docs["z.txt"].status == "ok"
    assert docs["z.txt"].text == "Text of z.txt.\n"
