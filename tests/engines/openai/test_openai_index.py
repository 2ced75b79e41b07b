"""End to end: an index built through the `openai` engine against the scripted server.

Two real documents of ../shared/corpora/small are indexed offline and through the server
(in-process, real `openai` client over HTTP); the index must have the same tables and
columns, manifest.json must count exactly what the server saw, a second run into the same
folder must make zero calls, and the key must be nowhere in the index folder.
"""
from __future__ import annotations

import gzip
import json
import shutil

import pyarrow.parquet as pq
import pytest

from provrag.config import load_config
from provrag.store import schema

KEY = "sk-provrag-e2e-Qm47-do-not-leak-0912"
KEY_ENV = "PROVRAG_E2E_LLM_KEY"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def indexes(tmp_path_factory, small_corpus, scripted_llm_server):
    from provrag.pipelines.index import run_index

    w = tmp_path_factory.mktemp("oai")
    docs = w / "docs"
    docs.mkdir()
    for name in ("sotu-1863-lincoln.txt", "debian-developers-reference-scope.html"):
        shutil.copy(small_corpus / name, docs / name)
    mp = pytest.MonkeyPatch()
    mp.setenv(KEY_ENV, KEY)
    try:
        offline = run_index(docs, w / "offline", load_config())
        srv = scripted_llm_server
        cfg = load_config(None, {"llm": {"engine": "openai", "base_url": srv.url, "model": "scripted",
                                         "api_key_env": KEY_ENV, "backoff_seconds": 0.01},
                                 "extract": {"gleanings": 1}})
        srv.fail_next("429", "500", {"fault": "malformed", "kind": "report"}, retry_after=0.2)
        first = run_index(docs, w / "openai", cfg)
        m1 = json.loads((w / "openai" / "manifest.json").read_text())
        stats1 = srv.stats()
        second = run_index(docs, w / "openai", cfg)  # nothing changed: up to date, nothing sent
        stats2 = srv.stats()
        # an index setting changed ([load] workers): every stage runs again, from the reply cache
        third = run_index(docs, w / "openai", cfg.replace("load", workers=1))
        m3 = json.loads((w / "openai" / "manifest.json").read_text())
        stats3 = srv.stats()
    finally:
        mp.undo()
    return {"w": w, "offline": offline, "first": first, "second": second, "third": third, "m1": m1, "m3": m3,
            "stats1": stats1, "stats2": stats2, "stats3": stats3}


def test_same_tables_and_columns_as_offline(indexes, small_corpus):
    w = indexes["w"]
    for name in schema.SCHEMAS:
        off, on = w / "offline" / f"{name}.parquet", w / "openai" / f"{name}.parquet"
        assert off.exists() == on.exists(), name
        if on.exists():
            assert pq.read_schema(on).names == pq.read_schema(off).names == schema.SCHEMAS[name].names, name
    ents = pq.read_table(w / "openai" / "entities.parquet").to_pylist()
    assert ents, "the scripted model's extraction produced no entities"
    text = ((small_corpus / "sotu-1863-lincoln.txt").read_text().upper()
            + (small_corpus / "debian-developers-reference-scope.html").read_text().upper())
    assert sum(e["title"].upper() in text for e in ents) >= 0.9 * len(ents)  # names of these documents
    reps = pq.read_table(w / "openai" / "community_reports.parquet").to_pylist()
    if reps:
        assert any("[Data: Entities (" in (f["explanation"] or "") for r in reps for f in r["findings"])


def test_manifest_counts_match_what_the_server_saw(indexes):
    llm, st = indexes["m1"]["llm"], indexes["stats1"]
    assert llm["calls"] == st["requests"] > 0
    assert llm["input_tokens"] == st["prompt_tokens"]
    assert llm["output_tokens"] == st["completion_tokens"]
    kinds, stages = st["by_kind"], llm["by_stage"]
    assert stages["extract"]["calls"] == kinds.get("extract", 0) + kinds.get("glean", 0) > 0
    assert stages["report"]["calls"] == kinds.get("report", 0) + kinds.get("repair", 0) > 0  # the repair was a report's
    assert sum(s["calls"] for s in llm["by_stage"].values()) == llm["calls"]
    assert llm["failed"] == llm["fallback"] == 0  # every injected fault was survived …
    notes = [e for e in llm["errors"] if "recovered" in e]  # … and recorded (one item may survive two faults)
    assert any("429" in e for e in notes) and any("500" in e for e in notes) and any("repair" in e for e in notes)
    assert llm["stages"]["extract"]["by_model"] == indexes["first"].skeleton_units  # every item by the model
    assert indexes["first"].llm["calls"] == llm["calls"]  # what `index --json` reports


def test_second_run_makes_zero_calls(indexes):
    assert indexes["second"].mode == "up to date" and indexes["second"].llm["calls"] == 0
    assert indexes["stats2"]["requests"] == indexes["stats1"]["requests"]
    llm = indexes["m3"]["llm"]  # a re-run through every stage: all from the cache
    assert indexes["third"].mode == "update"
    assert llm["calls"] == 0 and llm["cached"] > 0
    assert indexes["stats3"]["requests"] == indexes["stats1"]["requests"]
    assert indexes["m3"]["counts"] == indexes["m1"]["counts"]


def test_key_is_nowhere_in_the_index_folder(indexes):
    files = [p for p in (indexes["w"] / "openai").rglob("*") if p.is_file()]
    assert any(p.suffix == ".gz" for p in files)  # the reply cache is inside the index
    for p in files:
        raw = p.read_bytes()
        if p.suffix == ".gz":
            raw = gzip.decompress(raw)
        assert KEY.encode() not in raw, p


def test_full_extraction_estimate_matches_what_extraction_really_cost(indexes):
    """The estimator, run over the skeleton units provrag did extract, predicts the real bill;
    over all units it is the GraphRAG-style figure the manifest sets beside it."""
    from provrag.engines.base import StageUsage, Usage
    from provrag.engines.openai.cost import full_extraction_estimate

    m = indexes["m1"]
    real = m["llm"]["by_stage"]["extract"]
    usage = Usage()
    usage.by_stage["extract"] = StageUsage(**{k: real[k] for k in ("calls", "cached", "failed", "input_tokens", "output_tokens")})
    units = pq.read_table(indexes["w"] / "openai" / "text_units.parquet").to_pylist()
    cfg = load_config(overrides=m["config"])  # the settings the index was built with
    skel = full_extraction_estimate([u for u in units if u["is_skeleton"]], cfg, usage=usage)
    # one request + one gleaning round per skeleton unit; the injected 429 and 500 hit the first
    # two requests of the run (extraction) and are counted as calls: the server received them
    assert skel["calls"] == real["calls"] - 2
    assert abs(skel["input_tokens"] - real["input_tokens"]) <= 0.05 * real["input_tokens"]
    full = full_extraction_estimate(units, cfg, usage=usage)
    assert full["calls"] == 2 * len(units) > real["calls"]
    assert m["extraction_cost"]["calls"] == full["calls"]
