"""ask's escalation (query/escalate.py) ends at an abstention no wider route can change.

An engine whose answer reply was cut at max_tokens for good says so in engine_details["cut"]
(engines/openai/engine.py): whether the engine itself abstained or ask's answer check removed
every sentence afterwards, the abstention is final — each wider route would ask the same looping
model again. An answer, or an abstention without it, is unchanged. So is a learned reader's
abstention whose best reading was far below an answer ([search] retry_from): a wider route reads
more of the same index with the same reader. The routes here are scripted
(a global question: basic and wide follow, and no route reads the index).
"""
from __future__ import annotations

import pytest

from provrag.config import load_config
from provrag.query.context import ABSTENTION, SearchResult
from provrag.query.escalate import search_with_retries
from provrag.query.trace import Trace

CUT = "the model's answer was cut at max_tokens twice (finish_reason=length; the second time with max_tokens=600)"


def escalate(outcome, check=None):
    """(result, route, attempts) of a global question whose every route gives outcome(route)."""
    asked = []

    def run_route(route, use, sub, restrict, said):
        asked.append(route)
        return outcome(route)

    trace = Trace("ask", "q")
    found, route = search_with_retries(None, "q", load_config(), None, trace, "global", [], run_route, check)
    assert len(trace.data["attempts"]) == len(asked)   # the wide route runs basic search, reading more
    return found, route, trace.data["attempts"]


def cut_answer(route):
    return SearchResult("A sentence. [Data: Sources (1)]", route, engine_details={"cut": CUT}, confidence=0.9)


def emptied(found, sub):
    """ask's answer check removing every sentence (pipelines/ask.py `checked`): engine_details kept."""
    from dataclasses import replace

    return replace(found, answer=ABSTENTION, abstained=True, abstained_by="check", confidence=0.0)


def test_a_cut_answer_the_check_empties_ends_the_search():
    found, route, attempts = escalate(cut_answer, emptied)
    assert route == "global" and len(attempts) == 1
    assert found.abstained and found.abstained_by == "check" and found.engine_details["final"] == CUT
    assert attempts[0]["final"] == CUT and attempts[0]["kept"]


def test_a_cut_answer_the_engine_abstained_on_ends_the_search():
    found, _, attempts = escalate(lambda r: SearchResult(ABSTENTION, r, engine_details={"cut": CUT}, abstained=True,
                                                         abstained_by="engine", confidence=0.5))
    assert len(attempts) == 1 and found.engine_details["final"] == CUT == attempts[0]["final"]


def test_a_cut_answer_that_stands_is_unchanged():
    found, _, attempts = escalate(cut_answer, lambda f, sub: f)
    assert len(attempts) == 1 and not found.abstained
    assert "final" not in found.engine_details and "final" not in attempts[0]


def test_an_abstention_without_a_cut_reply_still_tries_the_wider_routes():
    found, route, attempts = escalate(lambda r: SearchResult("A sentence. [Data: Sources (1)]", r), emptied)
    assert [a["route"] for a in attempts] == ["global", "basic", "wide"] and found.abstained
    assert not any("final" in a for a in attempts) and "final" not in found.engine_details


def far(confidence, by="reader"):
    """A route whose reading found nothing: an abstention at `confidence`, by `by`."""
    return lambda route: SearchResult(ABSTENTION, route, abstained=True, abstained_by=by, confidence=confidence)


def test_a_reading_nowhere_near_an_answer_ends_the_search():
    found, route, attempts = escalate(far(0.05))
    assert route == "global" and len(attempts) == 1 and found.abstained
    assert "retry_from" in attempts[0]["final"] and "0.05" in attempts[0]["final"]


def test_a_reading_near_the_threshold_still_tries_the_wider_routes():
    found, _, attempts = escalate(far(load_config().search.retry_from))
    assert [a["route"] for a in attempts] == ["global", "basic", "wide"] and found.abstained
    assert not any("final" in a for a in attempts)


def test_only_the_learned_readers_abstention_is_judged_far():
    """An engine's or the coverage gate's abstention (a model, or no reader) tries every route."""
    for by in ("engine", "coverage", "check"):
        _, _, attempts = escalate(far(0.0, by))
        assert len(attempts) == 3, by


@pytest.mark.parametrize("naming,read_next", [
    (None, None),                   # the naming terms stand in much of the index: the whole index
    (["u1", "u7"], ["u1", "u7"]),   # else the passages that name what the question names (named.naming_units)
])
def test_a_far_reading_of_the_named_documents_still_goes_on_to_the_rest(monkeypatch, naming, read_next):
    """The documents a question names are read first; a reading there far from an answer says
    nothing of the rest of the index, so the next route still runs (and its own far reading ends it)."""
    from types import SimpleNamespace

    import provrag.query.named as named

    scope = SimpleNamespace(unit_ids=["u1"], terms=["polyglossia"], documents=["polyglossia.pdf"],
                            to_json=lambda: {"documents": ["polyglossia.pdf"]})
    monkeypatch.setattr(named, "named_scope", lambda con, path, question: scope)
    monkeypatch.setattr(named, "naming_units", lambda con, path, s: naming)
    asked = []

    def run_route(route, use, sub, restrict, said):
        asked.append((route, restrict))
        return far(0.05)(route)

    trace = Trace("ask", "q")
    found, _ = search_with_retries(SimpleNamespace(con=None, path=None), "q", load_config(), None, trace, "basic",
                                   [], run_route)
    attempts = trace.data["attempts"]
    assert [a["route"] for a in attempts] == ["named", "basic"] and found.abstained
    assert "final" not in attempts[0] and "retry_from" in attempts[1]["final"]
    assert asked == [("basic", ["u1"]), ("basic", read_next)]
