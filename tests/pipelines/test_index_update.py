"""An index over time (issue 17, CONTRACT.md §7): stable ids, versions, updates equal to a full
rebuild, and old citations that never silently re-point — on real documents, through the CLI.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import polars as pl
import pytest

from provrag.store import schema

LINCOLN = "sotu-1863-lincoln.txt"
COMPARED = ("documents", "text_units", "entities", "relationships", "communities", "community_reports",
            "keywords", "embeddings", "terms", "ids")


@pytest.fixture(scope="module")
def run_cli(provrag_cli):
    def run(*args, **kw):
        return subprocess.run([*provrag_cli, *map(str, args)], capture_output=True, text=True, timeout=900, **kw)
    return run


def index_json(run_cli, docs, out, *extra) -> dict:
    r = run_cli("index", docs, "--out", out, "--json", *extra)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


def units_by_number(out) -> dict[int, str]:
    tu = pl.read_parquet(out / "text_units.parquet")
    return dict(zip(tu[schema.HRID].to_list(), tu[schema.TEXT].to_list()))


def equal_tables(a, b) -> dict[str, bool]:
    out = {}
    for t in COMPARED:
        x, y = pl.read_parquet(a / f"{t}.parquet"), pl.read_parquet(b / f"{t}.parquet")
        drop = [c for c in ("period",) if c in x.columns]  # the run's date
        out[t] = x.drop(drop).equals(y.drop(drop))
    return out


@pytest.fixture(scope="module")
def small_copy(tmp_path_factory, small_corpus):
    w = tmp_path_factory.mktemp("update")
    docs = w / "docs"
    shutil.copytree(small_corpus, docs, ignore=shutil.ignore_patterns("licenses"))
    return w, docs


def test_update_keeps_numbers_retires_the_removed_and_reports_it(small_copy, run_cli, small_corpus):
    w, docs = small_copy
    out = w / "idx"
    first = index_json(run_cli, docs, out)
    assert first["mode"] == "first" and first["run"] == 1 and first["index_version"]
    before = units_by_number(out)

    ask = run_cli("ask", "What did Lincoln say about emancipation?", "--index", out, "--method", "basic", "--json")
    assert ask.returncode == 0, ask.stderr[-1000:]
    answer = json.loads(ask.stdout)
    assert answer["index_version"] == first["index_version"]
    cited = sorted({i for c in answer["citations"] if c["kind"] == "Sources" for i in c["ids"]})
    assert cited, answer["answer"]

    (docs / LINCOLN).unlink()
    second = index_json(run_cli, docs, out)
    assert second["mode"] == "update" and second["run"] == 2
    assert second["changes"]["removed"] == [LINCOLN]
    assert second["index_version"] != first["index_version"]
    after = units_by_number(out)
    # every number still in the index holds the text it held; none was reused for other text
    assert all(before[n] == text for n, text in after.items())
    gone = set(before) - set(after)
    assert gone and second["ids"]["text_units"]["retired"] == len(gone)

    # the old answer's citations: same text, or said to be retired — never another unit's text
    res = run_cli("resolve", "--trace", answer["trace_id"], "--index", out, "--json")
    assert res.returncode == 0, res.stderr[-1000:]
    resolved = json.loads(res.stdout)
    for s in resolved["sources"]:
        assert before[s["text_unit"]] == after[s["text_unit"]]
    retired = {u["id"] for u in resolved["unresolved"]}
    assert retired == {n for n in cited if n in gone}
    assert all("no longer in the index (removed in version 2" in u["reason"] for u in resolved["unresolved"])
    changes = resolved["index_changes"]
    assert changes["since"] == first["index_version"] and changes["known"]
    assert {r["id"] for r in changes["retired"] if r["kind"] == "Sources"} == retired

    ver = run_cli("verify", "--trace", answer["trace_id"], "--index", out, "--json")
    assert ver.returncode in (0, 1), ver.stderr[-1000:]
    verified = json.loads(ver.stdout)
    assert {r["id"] for r in verified["index_changes"]["retired"] if r["kind"] == "Sources"} == retired
    shown = run_cli("verify", "--trace", answer["trace_id"], "--index", out)
    assert "retired since the answer" in shown.stdout and "Traceback" not in shown.stderr
    html = w / "report.html"
    rep = run_cli("report", "--trace", answer["trace_id"], "--index", out, "--out", html)
    assert rep.returncode == 0, rep.stderr[-1000:]
    assert f"retired since the answer: Sources ({min(retired)})" in html.read_text(encoding="utf-8")
    traced = run_cli("trace", answer["trace_id"], "--index", out, env=dict(os.environ, COLUMNS="200"))
    assert f"version {first['index_version']}" in traced.stdout  # what its citations meant

    history = json.loads((out / "manifest.json").read_text())["history"]
    assert [h["run"] for h in history] == [1, 2]
    assert history[1]["documents"]["removed"] == [LINCOLN]
    assert history[1]["index_version"] == second["index_version"]

    # the removed file comes back: its content gets its old numbers back (same content, same id)
    shutil.copy(small_corpus / LINCOLN, docs / LINCOLN)
    third = index_json(run_cli, docs, out)
    assert units_by_number(out) == before and third["ids"]["text_units"]["retired"] == 0


def test_unchanged_rerun_is_up_to_date_and_leaves_the_index_alone(small_copy, run_cli):
    w, docs = small_copy
    out = w / "idx-unchanged"
    first = index_json(run_cli, docs, out)
    stamp = (out / "manifest.json").stat().st_mtime_ns
    again = index_json(run_cli, docs, out)
    assert again["mode"] == "up to date" and again["index_version"] == first["index_version"]
    assert again["changes"]["counts"]["unchanged"] == first["documents"]
    assert (out / "manifest.json").stat().st_mtime_ns == stamp
    assert again["text_units"] == first["text_units"] and again["entities"] == first["entities"]
    shown = run_cli("index", docs, "--out", out)
    assert shown.returncode == 0 and "up to date" in shown.stdout


def test_update_equals_a_full_rebuild_table_by_table(small_corpus, run_cli, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(small_corpus, docs, ignore=shutil.ignore_patterns("licenses"))
    a, b = tmp_path / "a", tmp_path / "b"
    index_json(run_cli, docs, a)
    # an edit of a real text: the last third of Lincoln's message replaced by its first paragraph
    text = (docs / LINCOLN).read_text(encoding="utf-8")
    (docs / LINCOLN).write_text(text[: 2 * len(text) // 3] + "\n\n" + text[:1500], encoding="utf-8")
    (docs / "debian-developers-reference-scope.html").unlink()
    shutil.copytree(a, b)
    upd = index_json(run_cli, docs, a)
    full = index_json(run_cli, docs, b, "--full")
    assert upd["mode"] == "update" and full["mode"] == "full"
    assert upd["changes"]["changed"] == [LINCOLN]
    assert equal_tables(a, b) == {t: True for t in COMPARED}
    assert upd["index_version"] == full["index_version"]


def test_an_edit_keeps_the_numbers_of_the_text_it_did_not_touch(tmp_path, run_cli, small_corpus):
    docs = tmp_path / "docs"
    docs.mkdir()
    text = (small_corpus / LINCOLN).read_text(encoding="utf-8")
    (docs / LINCOLN).write_text(text, encoding="utf-8")
    out = tmp_path / "idx"
    index_json(run_cli, docs, out)
    before = units_by_number(out)
    # a new paragraph at the end: every earlier unit keeps its id and number
    (docs / LINCOLN).write_text(text + "\n\nA closing paragraph added by the editor of this copy. It says nothing "
                                "Lincoln said.\n", encoding="utf-8")
    upd = index_json(run_cli, docs, out)
    after = units_by_number(out)
    kept = {n for n in before if n in after}
    assert len(kept) >= len(before) - 2  # the last unit or two end differently now
    assert all(before[n] == after[n] for n in kept)
    new = set(after) - set(before)
    assert new and min(new) > max(before)  # new content, new numbers, never a retired one
    assert upd["ids"]["text_units"]["added"] == len(new)


@pytest.mark.slow
def test_deleting_a_manual_never_repoints_an_old_citation(debian_manuals, manuals_index, tmp_path, run_cli):
    """The issue's case: ten Debian manuals, questions asked, CAD.pdf deleted, re-indexed. The
    session's index of the manuals is copied (its stored queries left out), not built again."""
    docs, out = tmp_path / "docs", tmp_path / "idx"
    shutil.copytree(debian_manuals, docs)
    shutil.copytree(manuals_index, out, ignore=shutil.ignore_patterns("queries"))
    assert index_json(run_cli, docs, out)["mode"] == "up to date"  # the copy is the index of these files
    before = units_by_number(out)
    tu, dd = pl.read_parquet(out / "text_units.parquet"), pl.read_parquet(out / "documents.parquet")
    cad_units = set(tu.join(dd.select(pl.col("id").alias("document_id"), "path"), on="document_id")
                    .filter(pl.col("path") == "CAD.pdf")[schema.HRID].to_list())
    assert cad_units
    # the last question is answered from CAD.pdf: the manual that is deleted below
    questions = ["What is the purpose of /var/tmp?", "How do I orphan a package?",
                 "How long may a package synopsis be?", "How do I read a CSV file into R?",
                 "How do I create the sCAD structure with a line group?"]
    traces = []
    for q in questions:
        r = run_cli("ask", q, "--index", out, "--json")
        assert r.returncode == 0, r.stderr[-1000:]
        traces.append(json.loads(r.stdout))
    cited_cad = [t for t in traces if cad_units & {i for c in t["citations"] if c["kind"] == "Sources" for i in c["ids"]}]
    assert cited_cad, "no answer cites the manual this test deletes: it would test nothing"
    (docs / "CAD.pdf").unlink()
    upd = index_json(run_cli, docs, out)
    assert upd["changes"]["removed"] == ["CAD.pdf"]
    after = units_by_number(out)
    assert all(before[n] == t for n, t in after.items())
    for t in traces:
        cited = {i for c in t["citations"] if c["kind"] == "Sources" for i in c["ids"]}
        res = json.loads(run_cli("resolve", "--trace", t["trace_id"], "--index", out, "--json").stdout)
        for s in res["sources"]:
            assert after[s["text_unit"]] == before[s["text_unit"]]
        for u in res["unresolved"]:
            assert u["id"] not in after and "no longer in the index" in u["reason"]
        assert {s["text_unit"] for s in res["sources"]} | {u["id"] for u in res["unresolved"]} >= {
            n for n in cited if n in before}
        if t in cited_cad:  # its CAD.pdf citations now say so, none re-pointed to another manual's text
            gone = {u["id"] for u in res["unresolved"] if "no longer in the index" in u["reason"]}
            assert cited & cad_units <= gone and all(s["path"] != "CAD.pdf" for s in res["sources"])
