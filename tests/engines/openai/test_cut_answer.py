"""A model whose answer is cut at max_tokens for good ends ask's search at its first route.

A small local model that loops writes to the end of its budget; the client asks once more with
twice the budget, is cut again, and the answer is read from its complete part (client.py,
validate.py). When that attempt abstains, every wider route would ask the same looping model
again — about a minute a route on SmolLM2-135M (README walk-through) — so the abstention is
final and says why (engine_details["final"], and the attempt's record in the ask trace).

The scripted server (tests/llm_server.py) answers with no citation ("uncited": the model found
nothing, so ask abstains) and the answer step's budget is smaller than that reply, so every
request is cut, the retry with twice the budget too. The index: the issue's two real documents
(tests/llm_faults.py), built offline.
"""
from __future__ import annotations

import shutil

import pytest

from provrag.config import load_config
from provrag.engines import get_engine
from tests.llm_faults import issue_docs

KEY_ENV = "PROVRAG_CUT_ANSWER_KEY"
QUESTION = "What was the supplemental treaty between the United States and Great Britain for?"
BUDGET = 50   # tokens: the uncited answer to QUESTION is longer than twice this


@pytest.fixture(scope="module")
def built(tmp_path_factory, small_corpus):
    from provrag.pipelines.index import run_index

    w = tmp_path_factory.mktemp("cut-answer")
    run_index(issue_docs(small_corpus, w / "docs"), w / "index", load_config())
    return w / "index"


@pytest.fixture
def index(built, tmp_path):
    """The module's index, copied: each test starts with no cached reply."""
    return shutil.copytree(built, tmp_path / "index")


@pytest.fixture(scope="module")
def passage(small_corpus) -> str:
    """The first ~1,200 characters of Lincoln's 1863 message, to a sentence end."""
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    return text[:text.index(". ", 1200) + 1]


@pytest.fixture
def srv(scripted_llm_server, monkeypatch):
    scripted_llm_server.reset()
    monkeypatch.setenv(KEY_ENV, "sk-cut-answer-test")
    return scripted_llm_server


def model_cfg(srv, budget: int | None = None):
    llm = {"engine": "openai", "base_url": srv.url, "model": "scripted", "api_key_env": KEY_ENV,
           "backoff_seconds": 0.01, "max_retries": 1}
    if budget:
        llm["max_tokens_by_step"] = {"answer": budget}
    return load_config(None, {"llm": llm})


def ask(index, cfg):
    from provrag.pipelines.ask import run_ask

    return run_ask(QUESTION, index, cfg, method="basic", save=False)


def test_an_answer_cut_twice_that_abstains_stops_at_the_first_route_and_says_why(srv, index):
    srv.state.always.update({"answer": "uncited"})
    got = ask(index, model_cfg(srv, BUDGET))
    seen = srv.stats()
    out = got.to_json()   # what `ask --json` prints
    assert out["abstained"] and out["abstained_by"] == "engine"
    assert out["attempts"] == 1 and out["route"] == "basic"   # not basic, wide, section
    assert seen["by_kind"]["answer"] == 2 and seen["max_tokens"]["answer"] == 2 * BUDGET   # asked, asked with twice
    (attempt,) = got.trace["attempts"]
    assert attempt["final"] == ("the model's answer was cut at max_tokens twice (finish_reason=length; the second "
                                f"time with max_tokens={2 * BUDGET}): a wider route would ask the same looping model "
                                "again")
    assert out["stopped"] == attempt["final"]   # `ask --json` says why no wider route was tried
    synthesis = next(s for s in got.trace["stages"] if s["name"] == "synthesis")
    assert synthesis["data"]["extract"]["cut"] == attempt["final"]
    from rich.console import Console

    from provrag.views.ask import ask_view, trace_tree

    console = Console(width=400, record=True)
    console.print(ask_view(got))          # `provrag ask`
    console.print(trace_tree(got.trace))  # `provrag trace ID`, from the stored trace
    assert console.export_text().count(f"no wider route tried: {attempt['final']}") == 2
    assert any("and again with max_tokens=100" in e for e in out["llm"]["errors"])

    srv.reset()   # the same question again: the cached reply remembers the model looped
    again = ask(index, model_cfg(srv, BUDGET))
    assert again.to_json()["attempts"] == 1 and again.trace["attempts"][0]["final"] == attempt["final"]
    assert srv.stats()["chat"] == 0 and again.llm["by_stage"]["answer"]["cached"] == 1


def test_a_cut_answer_recovered_with_twice_the_budget_still_escalates(srv, index):
    srv.state.always.update({"answer": "uncited"})
    srv.fail_next({"fault": "truncated", "kind": "answer"})   # only the first request is cut
    got = ask(index, model_cfg(srv))
    attempts = got.trace["attempts"]
    assert got.abstained and [a["route"] for a in attempts] == ["basic", "wide", "section"]
    assert got.to_json()["attempts"] == 3 and not any("final" in a for a in attempts)
    assert "stopped" not in got.to_json()
    assert any("recovered a reply cut at max_tokens" in e for e in got.llm["errors"])
    first = next(s for s in attempts[0]["stages"] if s["name"] == "synthesis")
    assert "cut" not in first["data"]["extract"]


def test_an_answer_read_from_a_cut_reply_is_still_the_answer(srv, index):
    """Cut for good but citing its records: the answer stands, as it did; only its details say so."""
    srv.state.always.update({"answer": "truncated"})   # every reply halved: cited sentences survive
    got = ask(index, model_cfg(srv))
    assert not got.abstained and got.to_json()["attempts"] == 1 and "[Data: Sources (" in got.raw_answer
    assert "final" not in got.trace["attempts"][0]
    synthesis = next(s for s in got.trace["stages"] if s["name"] == "synthesis")
    assert synthesis["data"]["extract"]["cut"].startswith("the model's answer was cut at max_tokens twice")


def test_a_reply_that_repeats_itself_is_cut_for_good_after_one_request(srv, passage):
    """The client does not ask a looping reply again (client.py): one request, and it is said."""
    srv.state.always.update({"answer": "loop"})
    eng = get_engine(model_cfg(srv))
    ans = eng.answer("What did the message say about harvests?",
                     [{"citation": "[Data: Sources (1)]", "text": passage}])
    assert srv.stats()["by_kind"]["answer"] == 1
    assert ans.details["cut"] == ("the model's answer was cut at max_tokens (finish_reason=length) and repeats "
                                  "itself: a wider route would ask the same looping model again")


def test_a_cut_reply_with_no_complete_sentence_is_the_offline_answer_and_still_said(srv, passage):
    """Nothing readable in the cut reply: the offline engine stands in, and the cut is kept with it
    (should that answer abstain, each wider route would still ask the looping model first)."""
    eng = get_engine(model_cfg(srv, 5))
    ans = eng.answer("What did the message say about harvests?",
                     [{"citation": "[Data: Sources (1)]", "text": passage}])
    assert srv.stats()["by_kind"]["answer"] == 2 and eng.usage.stages()["answer"]["fallback"] == 1
    assert "its complete part is unusable" in ans.details["fallback"]
    assert ans.details["cut"].startswith("the model's answer was cut at max_tokens twice")


def test_a_whole_answer_has_no_cut_detail(srv, passage):
    eng = get_engine(model_cfg(srv))
    ans = eng.answer("What did the message say about harvests?",
                     [{"citation": "[Data: Sources (1)]", "text": passage}])
    assert not ans.abstained and ans.details == {} and "[Data: Sources (1)]" in ans.text
