"""End to end: `provrag index` over real documents plus the broken-file corpus.

One index of ../shared/corpora/small with ../shared/corpora/bad copied in as bad/ is built
once per session (through the CLI, as a user runs it) and checked against CONTRACT.md §1–§2.
"""
import json
import re
import shutil
import subprocess

import duckdb
import pyarrow.parquet as pq
import pypdfium2 as pdfium
import pytest

from provrag.store import schema


@pytest.fixture(scope="module")
def run_cli(provrag_cli):
    """`provrag ARGS` in a subprocess: the CompletedProcess."""
    def run(*args, **kw):
        return subprocess.run([*provrag_cli, *map(str, args)], capture_output=True, text=True, timeout=600, **kw)
    return run


@pytest.fixture(scope="module")
def built(tmp_path_factory, run_cli, small_corpus, bad_corpus):
    w = tmp_path_factory.mktemp("idx")
    docs = w / "docs"
    shutil.copytree(small_corpus, docs, ignore=shutil.ignore_patterns("licenses"))
    shutil.copytree(bad_corpus, docs / "bad")
    r = run_cli("index", docs, "--out", w / "out", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    return docs, w / "out", json.loads(r.stdout)


def _con(out):
    con = duckdb.connect()
    for t in schema.GRAPHRAG_TABLES + (schema.KEYWORDS,):
        con.execute(f"create view {t} as select * from read_parquet('{out / (t + '.parquet')}')")
    return con


def test_tables_have_exactly_the_contract_schema(built):
    _, out, _ = built
    for name, want in schema.SCHEMAS.items():
        got = pq.read_schema(out / f"{name}.parquet")
        assert got.names == want.names, name
        for f in want:
            assert got.field(f.name).type == f.type, (name, f.name)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["docs_root"] and manifest["counts"]["text_units"] > 0
    assert set(manifest["timings"]) >= {"load", "chunk", "embed", "skeleton", "extract", "communities", "reports", "total"}


def test_every_file_has_a_row_and_bad_ones_say_why(built):
    docs, out, summary = built
    files = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.is_file())
    con = _con(out)
    rows = dict((p, (s, e)) for p, s, e in con.execute("select path, status, error from documents").fetchall())
    assert sorted(rows) == files
    for p in files:
        status, error = rows[p]
        if p.startswith("bad/") and p not in ("bad/one-huge-line.txt",):
            assert status in ("failed", "skipped") or p == "bad/invalid-utf8.txt", p
        if status != "ok":
            assert error and "\n" not in error, p
    assert summary["documents_failed"] + summary["documents_skipped"] >= 6
    assert summary["documents_ok"] >= 6


def test_pdf_units_sit_on_their_pages(built):
    docs, out, _ = built
    con = _con(out)
    norm = lambda s: re.sub(r"[^a-z0-9]+", "", s.lower())
    rows = con.execute("""select d.path, d.n_pages, u.page_start, u.page_end, u.text from text_units u
        join documents d on u.document_id = d.id where d.mime_type = 'application/pdf'""").fetchall()
    assert rows
    pages_of = {}
    for path, n_pages, a, b, text in rows:
        assert 1 <= a <= b <= n_pages
        if path not in pages_of:
            pdf = pdfium.PdfDocument(str(docs / path))
            pages_of[path] = [norm(pdf[i].get_textpage().get_text_range()) for i in range(len(pdf))]
        span, t = "".join(pages_of[path][a - 1:b]), norm(text)
        assert t[:30] in span and t[-30:] in span, (path, a, b)


def test_page_labels_and_pageless_formats(built):
    _, out, _ = built
    con = _con(out)
    labels, n = con.execute("select page_labels, n_pages from documents where path = 'R-FAQ.pdf'").fetchone()
    assert labels and len(labels) == n and labels[0] != "1", "R-FAQ prints roman front matter"
    for mime in ("text/plain", "text/html"):
        assert con.execute(f"""select count(*) from text_units u join documents d on u.document_id = d.id
            where d.mime_type = '{mime}' and u.page_start is not null""").fetchone()[0] == 0


def test_char_offsets_point_into_document_text(built):
    _, out, _ = built
    con = _con(out)
    bad = con.execute("""select count(*) from text_units u join documents d on u.document_id = d.id
        where substr(d.text, u.char_start + 1, u.char_end - u.char_start) <> u.text""").fetchone()[0]
    assert bad == 0


def test_skeleton_graph_and_reports(built):
    _, out, _ = built
    con = _con(out)
    n, n_sk = con.execute("select count(*), count(*) filter (where is_skeleton) from text_units").fetchone()
    beta = json.loads((out / "manifest.json").read_text())["config"]["skeleton"]["beta"]
    assert abs(n_sk - beta * n) <= 1
    leak = con.execute("""select count(*) from (select unnest(text_unit_ids) tu from entities) e
        join text_units u on u.id = e.tu where not u.is_skeleton""").fetchone()[0]
    assert leak == 0
    assert con.execute("select count(*) from entities").fetchone()[0] > 20
    # hierarchy: parents exist one level up, children lists agree with parents
    comms = {c: (lvl, p, ch) for c, lvl, p, ch in con.execute("select community, level, parent, children from communities").fetchall()}
    for c, (lvl, p, ch) in comms.items():
        if p is not None and p != -1:
            assert p in comms and comms[p][0] == lvl - 1
        for k in ch or []:
            assert comms[k][1] == c
    reports = con.execute("select community, full_content from community_reports").fetchall()
    assert {c for c, _ in reports} == set(comms)
    ent_ids = {r[0] for r in con.execute("select human_readable_id from entities").fetchall()}
    for _, content in reports:
        for block in re.findall(r"Entities \(([^)]*)\)", content):
            ids = [int(x) for x in re.findall(r"\d+", block)]
            assert set(ids) <= ent_ids


def test_rerun_is_identical(built, tmp_path, run_cli):
    docs, out, _ = built
    r = run_cli("index", docs, "--out", tmp_path / "again", "--json")
    assert r.returncode == 0, r.stderr[-1000:]
    for name in schema.SCHEMAS:
        a = pq.read_table(out / f"{name}.parquet")
        b = pq.read_table(tmp_path / "again" / f"{name}.parquet")
        if "period" in a.column_names:  # the index date
            a, b = a.drop_columns(["period"]), b.drop_columns(["period"])
        assert a.equals(b), name


SUMMARY_KEYS = ["index", "documents", "documents_ok", "documents_failed", "documents_skipped", "problems", "pages",
                "pages_ocr", "pages_without_text", "text_units", "skeleton_units", "keywords", "entities", "relationships", "communities",
                "community_reports", "engine", "llm", "seconds", "timings",
                "index_version", "run", "mode", "changes", "ids",  # the index over time (issue 17)
                "waiting_for_ocr", "ocr_hint"]  # scanned pages OCR could not read (issue 29)


def test_json_summary_agrees_with_the_tables_and_manifest(built):
    _, out, summary = built
    assert list(summary) == SUMMARY_KEYS
    assert list(summary["timings"]) == ["load", "chunk", "embed", "skeleton", "extract", "communities",
                                        "sections", "reports", "write", "total"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"] == {k: summary[k] for k in manifest["counts"]}
    for key, table in (("documents", schema.DOCUMENTS), ("text_units", schema.TEXT_UNITS), ("keywords", schema.KEYWORDS),
                       ("entities", schema.ENTITIES), ("communities", schema.COMMUNITIES)):
        assert summary[key] == pq.read_metadata(out / f"{table}.parquet").num_rows, key
    assert [p["path"] for p in summary["problems"]] == [d["path"] for d in manifest["documents"] if d["status"] != "ok"]
    docs = pq.read_table(out / "documents.parquet").to_pylist()
    units = pq.read_table(out / "text_units.parquet", columns=["id", "document_id"]).to_pylist()
    for d in docs:  # each document lists its units in unit order; a file not indexed has none
        assert d["text_unit_ids"] == [u["id"] for u in units if u["document_id"] == d["id"]]


def test_library_run_reports_each_stage_and_returns_the_summary(tmp_path, small_corpus, bad_corpus):
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sotu.txt")
    shutil.copyfile(bad_corpus / "empty.md", docs / "empty.md")

    class Recorder:
        def __init__(self):
            self.stages = []

        def stage(self, name, total=None):
            from contextlib import nullcontext

            self.stages.append(name)
            return nullcontext(self)

        def advance(self, n=1):
            pass

    progress = Recorder()
    summary = run_index(docs, tmp_path / "out", load_config(), progress=progress)
    assert progress.stages == ["load", "chunk", "embed", "skeleton", "extract", "summarize", "sections",
                               "reports"]
    assert list(summary.to_json()) == SUMMARY_KEYS
    assert (summary.documents, summary.documents_ok, summary.documents_skipped) == (2, 1, 1)
    assert summary.problems == [{"path": "empty.md", "status": "skipped", "error": "empty file"}]
    assert summary.text_units == pq.read_metadata(tmp_path / "out" / "text_units.parquet").num_rows > 0


def test_bad_arguments_exit_2(tmp_path, run_cli):
    r = run_cli("index", tmp_path / "missing", "--out", tmp_path / "o")
    assert r.returncode == 2 and "no such folder" in r.stderr and "Traceback" not in r.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "a.txt").write_text("Some text about Halcyon.")
    r = run_cli("index", docs, "--out", blocker / "o")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = run_cli("index", tmp_path / "empty-dir-none", "--out", tmp_path / "o2")
    assert r.returncode == 2
