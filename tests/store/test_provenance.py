"""The provenance tables (provrag/store/provenance.py): each stored trace's retrievals and
citations as rows, written beside it by real asks and a real verify over real PDFs."""
from __future__ import annotations

import shutil
import stat

import duckdb
import pytest

from provrag.results import FURTHER_VIA
from provrag.store.provenance import routes_of
from provrag.store.traces import list_traces, load_trace, stored_files, user_dir

pytestmark = pytest.mark.usefixtures("shared")


def _rows(files, order: str) -> list[dict]:
    con = duckdb.connect()
    try:
        cur = con.execute(f"SELECT * FROM read_parquet(?, union_by_name = true) ORDER BY {order}", [[str(f) for f in files]])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def _stage(trace: dict, name: str) -> dict:
    return next(s["data"] for s in trace["stages"] if s["name"] == name)


def test_each_trace_has_its_table_files_beside_it_and_listing_still_works(asked_index):
    idx, basic, glob, verified = asked_index
    traces = sorted(p.name for p in (idx / "queries").glob("*.parquet"))
    assert len(traces) == 3
    for table in ("retrievals", "citations"):
        assert sorted(p.name for p in (idx / "queries" / table).iterdir()) == traces   # one file per trace, same name
    assert not list((idx / "queries").rglob("*.tmp"))
    # the subfolders are not traces: listing and loading read only queries/*.parquet
    assert {t["trace_id"] for t in list_traces(idx)} == {basic.trace_id, glob.trace_id, verified.trace_id}
    assert load_trace(basic.trace_id, idx)["answer"] == basic.answer
    assert len(stored_files(idx)) == 3 and len(stored_files(idx, "retrievals")) == 3


def test_retrieval_rows_are_the_asks_candidates_with_their_why(asked_index):
    idx, basic, glob, _ = asked_index
    rows = _rows(stored_files(idx, "retrievals"), "created, claim_index NULLS FIRST, rank")
    mine = [r for r in rows if r["trace_id"] == basic.trace_id]
    cands = _stage(basic.trace, "exploration")["candidates"]
    assert [r["text_unit_id"] for r in mine] == [c["text_unit_id"] for c in cands]
    assert [r["rank"] for r in mine] == list(range(1, len(cands) + 1))
    for r, c in zip(mine, cands):
        assert r["kind"] == "ask" and r["method"] == "basic" and r["question"] == basic.question
        assert r["candidate"] == "text_unit" and r["candidate_id"] == c["id"] and r["page"] == c["page_start"]
        assert r["score"] == c["score"] and r["components"]["lexical"] == c["why"]["components"]["lexical"]
        assert r["components"]["rating"] is None   # a text unit has no report rating
        assert r["influence"] == c["why"]["influence"]
    reports = [r for r in rows if r["trace_id"] == glob.trace_id]
    assert reports and all(r["candidate"] == "report" and r["text_unit_id"] is None for r in reports)
    assert [r["candidate_id"] for r in reports] == [c["id"] for c in _stage(glob.trace, "exploration")["candidates"]]


def test_verify_rows_are_each_claims_retrieved_evidence(asked_index):
    idx, _, _, verified = asked_index
    rows = _rows(stored_files(idx, "retrievals"), "claim_index, rank")
    mine = [r for r in rows if r["trace_id"] == verified.trace_id]
    found = _stage(verified.trace, "evidence")["retrievals"]
    assert len(found) == len(verified.claims)
    assert [(r["claim_index"], r["text_unit_id"]) for r in mine] == \
        [(i, c["text_unit_id"]) for i, f in enumerate(found) for c in f["candidates"]]
    assert all(r["kind"] == "verify" and r["query"] for r in mine)


def test_citation_rows_link_each_cited_id_to_the_units_it_resolved_to(asked_index):
    idx, basic, glob, verified = asked_index
    rows = _rows(stored_files(idx, "citations"), "created, sentence_index, kind, id")
    for res in (basic, glob):
        mine = [r for r in rows if r["trace_id"] == res.trace_id]
        cited = {(c.kind, i) for c in res.citations for i in c.ids}
        assert cited and {(r["kind"], r["id"]) for r in mine} == cited
        assert all(r["verdict"] is None and r["trace_kind"] == "ask" for r in mine)
        # every source the answer cites is a row's unit, on its page, reached by that row's id; the
        # further passages listed after them (not cited) are no citation's
        units = {(r["text_unit_id"], r["page"]) for r in mine}
        assert {(s.text_unit_id, s.page_start) for s in res.sources if s.via != FURTHER_VIA} <= units
        assert not {s.text_unit_id for s in res.sources if s.via == FURTHER_VIA} & {r["text_unit_id"] for r in mine}
        assert all((r["kind"], r["id"]) in routes_of(r["via"]) for r in mine if r["text_unit_id"])
    checked = [r for r in rows if r["trace_id"] == verified.trace_id]
    verdicts = {i: c.verdict for i, c in enumerate(verified.claims)}
    assert checked and all(r["verdict"] == verdicts[r["sentence_index"]] for r in checked)
    assert all(isinstance(r["supports"], bool) for r in checked)


def test_routes_of_reads_the_resolvers_vias():
    assert routes_of("Report 43 → community 43 → text unit 1476; Report 1 → community 1 → text unit 1476") == \
        {("Reports", 43), ("Reports", 1)}
    assert routes_of("Entity 7 (DEBIAN; POLICY) → text unit 3; retrieved #2 (hybrid search)") == {("Entities", 7)}
    assert routes_of(None) == routes_of("retrieved #1 (hybrid search)") == set()


def test_a_read_only_index_gets_the_same_layout_in_the_user_folder(asked_index, tmp_path, monkeypatch):
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    ro = tmp_path / "ro"
    shutil.copytree(asked_index[0], ro, ignore=shutil.ignore_patterns("queries"))
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        res = run_ask("When did the oil embargo end?", ro, load_config(), method="basic")
    finally:
        ro.chmod(0o755)
    home = user_dir(ro)
    assert not (ro / "queries").exists()
    name = f"{res.trace_file.rsplit('/', 1)[-1]}"
    assert (home / name).is_file() and (home / "retrievals" / name).is_file() and (home / "citations" / name).is_file()
    assert [t["trace_id"] for t in list_traces(ro)] == [res.trace_id]
