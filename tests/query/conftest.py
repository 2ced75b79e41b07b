"""Fixtures of the query tests: the SQuAD questions whose answers lie in the three articles of
squad_subset_index (tests/conftest.py)."""
from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="session")
def subset_questions(squad, squad_subset) -> tuple[dict, ...]:
    """The dev split's SQuAD questions about the articles squad_subset_index holds (read-only)."""
    qs = [json.loads(line) for line in (squad / "questions.jsonl").read_text().splitlines() if line.strip()]
    return tuple(q for q in qs if q["document"] in squad_subset)
