"""Query traces (provrag/store/traces.py): stored per query, read back, listed, exported as W3C PROV."""
from __future__ import annotations

import json
import os
import stat
import time

import pytest

from provrag.query.trace import Trace, to_prov
from provrag.store.traces import TraceNotFound, list_traces, load_trace, save_trace, trace_dirs, user_dir


@pytest.fixture(autouse=True)
def _traces_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def _trace(question="Where is Dulce base?", answer="In New Mexico. [Data: Sources (3)]", kind="ask") -> dict:
    t = Trace(kind, question, index="/x", engine="offline", model="offline")
    with t.stage("question") as d:
        d["method"], d["why"] = "basic", "test"
    with t.stage("exploration") as d:
        time.sleep(0.01)
        d["candidates"] = [{"kind": "text_unit", "id": 3, "score": 0.9}]
    with t.stage("focus") as d:
        d["selected"] = [{"kind": "text_unit", "text_unit_id": "abc", "document": "dulce.md", "page_start": 2,
                          "page_end": 2, "score": 0.9, "label": "Sources (3)"}]
    with t.stage("synthesis") as d:
        d["answer"] = answer
    with t.stage("citations") as d:
        d["citations"] = 1
    t["method"], t["answer"] = "basic", answer
    t["sources"] = [{"document": "dulce.md", "page_start": 2, "page_end": 2, "quote": "In New Mexico.",
                     "via": "Source 3 → text unit 3", "text_unit_id": "abc"}]
    return t.finish()


def _provrag_index(folder):
    """An index folder as provrag writes it (its manifest says provrag made it)."""
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"provrag_version": "0.1.0"}))
    return folder


def test_stages_have_times_in_order():
    t = _trace()
    names = [s["name"] for s in t["stages"]]
    assert names == ["question", "exploration", "focus", "synthesis", "citations"]
    assert t["stages"][1]["ms"] >= 10
    assert all(s["started"] <= s["ended"] for s in t["stages"])
    assert t["total_ms"] >= sum(s["ms"] for s in t["stages"]) - 1


def test_save_load_roundtrip_and_prefix(tmp_path):
    idx = _provrag_index(tmp_path / "idx")
    t = _trace()
    path = save_trace(t, idx)
    assert path.parent == idx / "queries" and path.suffix == ".parquet"
    assert not list((idx / "queries").glob(".*"))  # no temp file left behind
    back = load_trace(t["trace_id"], idx)
    assert back["question"] == t["question"] and back["stages"] == t["stages"]
    assert load_trace(t["trace_id"][:6], idx)["trace_id"] == t["trace_id"]
    # without --index: found through the remembered folders
    assert load_trace(t["trace_id"])["trace_id"] == t["trace_id"]
    assert idx.absolute() / "queries" in trace_dirs()


def test_unknown_ambiguous_and_malformed_ids(tmp_path):
    idx = tmp_path / "idx"
    idx.mkdir()
    with pytest.raises(TraceNotFound, match="no trace"):
        load_trace("deadbeef", idx)
    with pytest.raises(TraceNotFound, match="not a trace id"):
        load_trace("../../etc", idx)
    ids = set()
    while True:  # two traces sharing a first hex digit make that digit ambiguous
        t = _trace()
        save_trace(t, idx)
        ids.add(t["trace_id"])
        firsts = [i[0] for i in ids]
        dup = [c for c in set(firsts) if firsts.count(c) > 1]
        if dup:
            break
    with pytest.raises(TraceNotFound):  # one hex digit: too short, and ambiguous
        load_trace(dup[0], idx)


def test_list_filters_and_orders_newest_first(tmp_path):
    idx = tmp_path / "idx"
    idx.mkdir()
    a = _trace("Who leads the squad?")
    save_trace(a, idx)
    time.sleep(0.01)
    b = _trace("Where is Dulce base?")
    save_trace(b, idx)
    v = _trace("Is the claim supported?", kind="verify")
    save_trace(v, idx)
    rows = list_traces(idx, n=10)
    assert [r["trace_id"] for r in rows][:1] == [v["trace_id"]]
    assert {r["trace_id"] for r in rows} == {a["trace_id"], b["trace_id"], v["trace_id"]}
    assert [r["trace_id"] for r in list_traces(idx, text="dulce")] == [b["trace_id"]]
    assert [r["trace_id"] for r in list_traces(idx, kind="verify")] == [v["trace_id"]]
    assert len(list_traces(idx, n=1)) == 1
    assert "trace_json" not in rows[0]


def test_a_folder_provrag_did_not_build_is_never_written(tmp_path):
    """A GraphRAG output folder (or any folder without provrag's manifest) is evidence under
    audit: its trace goes to the user folder even though the folder is writable."""
    idx = tmp_path / "graphrag-output"
    idx.mkdir()
    (idx / "text_units.parquet").write_bytes(b"PAR1 not really")
    (idx / "manifest.json").write_text('{"written_by": "someone else"}')
    before = sorted((p.name, p.read_bytes()) for p in idx.iterdir())
    t = _trace()
    path = save_trace(t, idx)
    assert path.parent == user_dir(idx)
    assert sorted((p.name, p.read_bytes()) for p in idx.iterdir()) == before
    assert load_trace(t["trace_id"], idx)["trace_id"] == t["trace_id"]
    assert [r["trace_id"] for r in list_traces(idx)] == [t["trace_id"]]


def test_read_only_index_falls_back_to_user_folder(tmp_path):
    idx = _provrag_index(tmp_path / "ro")
    os.chmod(idx, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        t = _trace()
        path = save_trace(t, idx)
        assert path.parent == user_dir(idx)
        assert str(tmp_path / "xdg") in str(path)
        assert not (idx / "queries").exists()
        assert load_trace(t["trace_id"], idx)["trace_id"] == t["trace_id"]
    finally:
        os.chmod(idx, stat.S_IRWXU)


def test_prov_jsonld_names_question_units_and_answer():
    t = _trace()
    doc = json.loads(json.dumps(to_prov(t)))  # plain JSON
    assert "https://openprovenance.org/prov-jsonld/context.jsonld" in doc["@context"]
    g = doc["@graph"]
    by_id = {x.get("@id"): x for x in g if "@id" in x}
    q = by_id[f"provrag:trace/{t['trace_id']}/question"]
    assert q["@type"] == "prov:Entity" and q["prov:value"] == t["question"]
    ans = by_id[f"provrag:trace/{t['trace_id']}/answer"]
    assert ans["prov:value"] == t["answer"]
    unit = by_id["provrag:text_unit/abc"]
    assert unit["provrag:document"] == "dulce.md" and unit["provrag:page_start"] == 2
    acts = [x for x in g if x["@type"] == "prov:Activity"]
    assert [a["prov:label"] for a in acts] == ["Question", "Exploration", "Focus", "Synthesis", "Citations"]
    assert all(a["startTime"] and a["endTime"] for a in acts)
    derivs = {(x["generatedEntity"], x["usedEntity"]) for x in g if x["@type"] == "prov:Derivation"}
    assert (ans["@id"], "provrag:text_unit/abc") in derivs
    assert any(x["@type"] == "prov:SoftwareAgent" for x in g)
