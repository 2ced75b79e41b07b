"""An index built through a model that fails: the offline engine makes each failed item, and
the manifest, `index --json` and the printed summary say how each stage's items were made.

The scripted server (tests/llm_server.py) plays a model too small for the job — extraction
records copied from the prompt's template, reports citing rows they were not shown — over the
issue's two real documents of ../shared/corpora/small. Before issue 16 such a run gave 0
entities, 0 reports and exit 0 without a word.
"""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from provrag.config import load_config
from provrag.store import schema
from tests.llm_faults import issue_docs

KEY_ENV = "PROVRAG_FALLBACK_TEST_KEY"
FAULTS = {"extract": "placeholder", "report": "invented"}


def _titles(folder) -> set[str]:
    return {e["title"] for e in pq.read_table(folder / "entities.parquet").to_pylist()}


def _skeleton(folder) -> int:
    return sum(1 for u in pq.read_table(folder / "text_units.parquet").to_pylist()
               if u["is_skeleton"] and (u["text"] or "").strip())


@pytest.fixture(scope="module")
def runs(tmp_path_factory, small_corpus, scripted_llm_server):
    from provrag.pipelines.index import run_index

    w = tmp_path_factory.mktemp("fallbacks")
    docs = issue_docs(small_corpus, w / "docs")
    srv = scripted_llm_server
    srv.reset()
    srv.state.always.update(FAULTS)
    cfg = load_config(None, {"llm": {"engine": "openai", "base_url": srv.url, "model": "scripted",
                                     "api_key_env": KEY_ENV, "backoff_seconds": 0.01}})
    out = {"w": w, "offline": run_index(docs, w / "offline", load_config())}
    out["first"] = run_index(docs, w / "model", cfg)
    out["m1"], out["stats1"] = json.loads((w / "model" / "manifest.json").read_text()), srv.stats()
    srv.reset()
    srv.state.always.update(FAULTS)
    out["again"] = run_index(docs, w / "model", cfg.replace("load", workers=1))  # an index setting changed
    out["stats2"] = srv.stats()
    out["strict"] = run_index(docs, w / "strict", cfg.replace("llm", strict=True))
    srv.reset()
    return out


def test_every_failed_item_is_made_by_the_offline_engine(runs):
    w, s = runs["w"], runs["first"]
    assert s.entities > 0 and s.community_reports > 0  # never an empty index
    assert _titles(w / "model") == _titles(w / "offline")  # each unit's graph is the offline extractor's
    stages = runs["m1"]["llm"]["stages"]
    n = _skeleton(w / "model")
    assert stages["extract"] == {"by_model": 0, "fallback": n, "failed": 0}
    assert stages["report"] == {"by_model": 0, "fallback": s.community_reports, "failed": 0}
    assert stages["summarize"]["by_model"] > 0 and stages["summarize"]["fallback"] == 0  # summaries worked
    assert s.llm["stages"] == stages and runs["m1"]["llm"]["calls"] == runs["stats1"]["requests"]
    errors = runs["m1"]["llm"]["errors"]
    assert any(e.startswith("report ") and "Entities (90001)" in e and "offline engine made it" in e for e in errors)


def test_a_stage_that_mostly_fell_back_gets_one_warning_with_its_likely_cause(runs):
    warnings = runs["first"].llm["warnings"]
    assert len(warnings) == 2 and warnings == runs["m1"]["llm"]["warnings"]
    extract, report = warnings
    assert extract.startswith("extract: ") and "fell back to the offline engine" in extract and "model too small" in extract
    assert report.startswith("report: ") and "model too small" in report


def test_the_summary_table_shows_how_each_stage_was_made_and_the_warnings(runs):
    from rich.console import Console

    from provrag.views.index import index_summary

    console = Console(width=200, record=True, color_system=None)
    console.print(index_summary(runs["first"]))
    text = console.export_text()
    n = runs["m1"]["llm"]["stages"]["extract"]["fallback"]
    assert f"0 by the model, {n} offline fallback" in text
    assert "summarize" in text and "warning: extract: " in text and "warning: report: " in text


def test_a_stand_in_is_not_kept_a_model_reply_is(runs):
    """Fallback items are asked again on the next run (the model may have been fixed); the
    summaries the model wrote come from the reply cache."""
    kinds, again = runs["stats2"]["by_kind"], runs["again"]
    assert again.mode == "update" and again.entities == runs["first"].entities
    # every stand-in report is asked again, until [llm] give_up_after (5) of them failed in a row
    give_up = load_config().llm.give_up_after
    assert again.community_reports > give_up and kinds.get("report", 0) == give_up
    assert again.llm["by_stage"]["report"]["not_asked"] == again.community_reports - give_up
    extract = runs["m1"]["llm"]["stages"]["extract"]["fallback"]
    assert kinds.get("extract", 0) == min(extract, give_up)
    assert "summarize" not in kinds and again.llm["by_stage"]["summarize"]["cached"] > 0


def test_strict_leaves_failed_items_failed(runs):
    s = runs["strict"]
    st = s.llm["stages"]["extract"]
    assert st["failed"] == _skeleton(runs["w"] / "strict") and st["by_model"] == st["fallback"] == 0
    assert s.entities == 0 and s.community_reports == 0  # only model output, and the model gave none
    line = s.llm["warnings"][0]
    assert line.startswith("extract: ") and " items failed" in line and "; likely cause: model too small" in line
    assert (runs["w"] / "strict" / f"{schema.ENTITIES}.parquet").exists()  # the run completed all the same
