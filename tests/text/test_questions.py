"""What a question asks for, read from its wording (provrag/text/questions.py), on the dev
split's real SQuAD questions and the broad questions global search is for."""
from __future__ import annotations

import json

import pytest

from provrag.text.questions import answer_type, is_broad
from tests.shared_material import EVAL_DEV

pytestmark = pytest.mark.usefixtures("shared")


def _questions() -> list[str]:
    lines = (EVAL_DEV / "squad" / "questions.jsonl").read_text().splitlines()
    return [json.loads(x)["question"] for x in lines if x.strip()]


def test_answer_type_of_real_questions():
    qs = _questions()
    when = [q for q in qs if q.lower().startswith("when ")]
    how_many = [q for q in qs if q.lower().startswith("how many ")]
    who = [q for q in qs if q.lower().startswith("who ")]
    assert when and how_many and who
    assert all(answer_type(q) == "date" for q in when)
    assert all(answer_type(q) == "number" for q in how_many)
    assert all(answer_type(q) == "name" for q in who)
    assert answer_type("In which year did the embargo end?") == "date"     # the type word inside the question
    assert answer_type("What percentage of German students attended private schools?") == "number"
    assert answer_type("Why did the embargo end?") is None


def test_broad_questions_are_about_the_collection():
    assert is_broad("What are the main themes across the Halcyon documents?")
    assert is_broad("Summarise the collection") and is_broad("What is this corpus about?")
    assert not is_broad("Who leads the Halcyon commissioning team?")
    # no real SQuAD question (each about one fact of one article) reads as a broad one
    assert not any(is_broad(q) for q in _questions())
