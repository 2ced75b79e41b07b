"""ask and verify through a model that fails: the offline engine answers and judges in its place,
the result says so (`error` in ask --json, by_model / fallback / failed in both results and
their traces), and every request the run cost is in the trace — the question's embedding too.

The index: the issue's two real documents, embedded by the scripted server's /v1/embeddings
(tests/llm_server.py), so that asking embeds the question with a request as well.
"""
from __future__ import annotations

import pytest

from provrag.config import load_config
from tests.llm_faults import issue_docs

KEY_ENV = "PROVRAG_FALLBACK_ASK_KEY"
QUESTION = "What was the supplemental treaty between the United States and Great Britain for?"
ANSWER = ("The supplemental treaty between the United States and Great Britain for the suppression of the "
          "African slave trade was ratified. The Debian developers' reference is mainly a guide to tax law.")


@pytest.fixture(scope="module")
def setup(tmp_path_factory, small_corpus, scripted_llm_server):
    from provrag.pipelines.index import run_index

    w = tmp_path_factory.mktemp("ask-fallbacks")
    docs = issue_docs(small_corpus, w / "docs")
    srv = scripted_llm_server
    embed = {"engine": "openai", "base_url": srv.url, "model": "scripted-embed", "api_key_env": KEY_ENV}
    run_index(docs, w / "index", load_config(None, {"embeddings": embed}))
    model = load_config(None, {"embeddings": embed, "llm": {
        "engine": "openai", "base_url": srv.url, "model": "scripted", "api_key_env": KEY_ENV,
        "backoff_seconds": 0.01, "max_retries": 1}})
    return {"index": w / "index", "srv": srv, "model": model, "offline": load_config(None, {"embeddings": embed})}


def _faults(srv, **always) -> None:
    srv.reset()
    srv.state.always.update(always)


def test_a_failed_answer_is_the_offline_answer_and_the_reason_is_given(setup):
    from provrag.pipelines.ask import run_ask

    srv = setup["srv"]
    _faults(srv, answer="500")
    got = run_ask(QUESTION, setup["index"], setup["model"], method="basic", save=False)
    seen = srv.stats()
    offline = run_ask(QUESTION, setup["index"], setup["offline"], method="basic", save=False)
    assert got.answer == offline.answer and got.sources and not got.abstained
    out = got.to_json()
    assert "HTTP 500" in out["error"] and "offline engine did that part instead" in out["error"]
    assert out["llm"]["stages"]["answer"] == {"by_model": 0, "fallback": 1, "failed": 0}
    assert got.trace["error"] == out["error"]
    # every request the question cost is in the trace: its embeddings and the answer's two
    # attempts. The answer check asks the model nothing: the offline answer that stood in quotes
    # the units it cites word for word, which holds it whatever a judge would read
    usage = got.trace["usage"]
    assert usage["by_stage"]["embed"]["calls"] == seen["embeddings"] >= 1
    assert usage["by_stage"]["answer"]["calls"] == seen["by_kind"]["answer"] == 2
    assert "judge" not in usage["by_stage"] and seen["by_kind"].get("judge", 0) == 0
    assert got.checked and got.removed_sentences == []
    assert [s["name"] for s in got.trace["stages"]].count("check") == 1
    assert seen["chat"] == seen["by_kind"]["answer"]
    assert usage["calls"] == seen["requests"]
    assert offline.to_json()["error"] is None and "llm" not in offline.to_json()


def test_strict_says_the_answer_failed_and_gives_none(setup):
    from rich.console import Console

    from provrag.pipelines.ask import run_ask
    from provrag.views.ask import ask_view

    _faults(setup["srv"], answer="500")
    got = run_ask(QUESTION, setup["index"], setup["model"].replace("llm", strict=True), method="basic", save=False)
    assert got.answer == "" and "HTTP 500" in got.error and "strict" in got.error
    assert got.llm["stages"]["answer"]["failed"] == 1
    console = Console(width=160, record=True, color_system=None)
    console.print(ask_view(got))
    assert "warning: the model failed at the answer step (HTTP 500" in console.export_text()


def test_a_model_answer_is_not_flagged(setup):
    from provrag.pipelines.ask import run_ask

    _faults(setup["srv"])
    got = run_ask(QUESTION, setup["index"], setup["model"], method="basic", save=False)
    assert got.error is None and got.llm["stages"]["answer"] == {"by_model": 1, "fallback": 0, "failed": 0}
    assert "[Data: Sources (" in got.answer and got.sources


def test_failed_judge_spans_get_the_offline_judges_verdicts_counted(setup):
    from rich.console import Console

    from provrag.pipelines.verify import run_verify
    from provrag.views.verify import verify_view

    srv = setup["srv"]
    _faults(srv, judge="badspan")
    got = run_verify(setup["index"], setup["model"], answer=ANSWER, question=QUESTION, save=False)
    seen = srv.stats()
    offline = run_verify(setup["index"], setup["offline"], answer=ANSWER, question=QUESTION, save=False)
    assert [c.verdict for c in got.claims] == [c.verdict for c in offline.claims]
    judged = got.to_json()["llm"]["stages"]["judge"]
    assert judged["by_model"] == judged["failed"] == 0 and judged["fallback"] > 0
    assert all(e.reason.startswith("offline judge") for c in got.claims for e in c.evidence)
    assert got.trace["llm"]["by_stage"]["embed"]["calls"] >= 1  # the claims' retrieval embeds them
    assert got.trace["llm"]["calls"] == seen["requests"]
    console = Console(width=200, record=True, color_system=None)
    console.print(verify_view(got))
    text = console.export_text()
    assert f"(verdicts: 0 by the model, {judged['fallback']} offline fallback)" in text
    assert "warning: judge: " in text and "model too small" in text
