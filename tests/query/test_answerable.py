"""The answerability measure behind ask's abstention (provrag/query/answerable.py), on real text."""
from __future__ import annotations

import math

import pytest

from provrag.query.answerable import assess, lexical_coverage, term_weights



def _units(index, like: str) -> list[str]:
    import duckdb

    return [r[0] for r in duckdb.sql(f"SELECT text FROM '{index}/text_units.parquet' WHERE text LIKE ? "
                                     "ORDER BY human_readable_id", params=[f"%{like}%"]).fetchall()]


def test_a_term_the_index_never_saw_weighs_as_much_as_the_rarest_there_is():
    w = term_weights("Who won the FIFA World Cup?", {"world": 2.0, "cup": 3.0}, n_units=100)
    assert set(w) == {"won", "fifa", "world", "cup"}
    assert w["fifa"] == w["won"] == pytest.approx(math.log(1 + 100.5 / 0.5))
    assert w["world"] == 2.0 and w["cup"] == 3.0


def test_a_misspelt_term_stands_for_the_correction_retrieval_made():
    w = term_weights("What is the gaurentee?", {"guarante": 1.5}, n_units=10, fixes={"gaurente": "guarante"})
    assert w == {"guarante": 1.5}


def test_lexical_coverage_is_the_share_of_question_weight_the_passage_holds():
    w = {"oil": 1.0, "embargo": 3.0}
    cov, missing = lexical_coverage(w, "The 1973 oil crisis began when OAPEC proclaimed an oil embargo.")
    assert cov == 1.0 and missing == []
    cov, missing = lexical_coverage(w, "Oil prices rose.")
    assert cov == pytest.approx(0.25) and missing == ["embargo"]


def test_the_passage_that_answers_is_more_confident_than_a_passage_on_another_subject(squad_subset_index):
    oil = _units(squad_subset_index, "embargo")
    assert oil
    question = "Which organisation proclaimed the oil embargo in 1973?"
    on_topic = assess(question, oil[:3], {}, 1000)
    other = assess("Who won the 2018 FIFA World Cup final in Moscow?", oil[:3], {}, 1000)
    assert on_topic.confidence > 0.5 > other.confidence
    assert on_topic.lexical > other.lexical and on_topic.semantic > other.semantic
    assert "fifa" in other.missing_terms


def test_without_minilm_the_lexical_model_decides_and_says_so(squad_subset_index):
    oil = _units(squad_subset_index, "embargo")
    found = assess("Which organisation proclaimed the oil embargo?", oil[:3], {}, 1000, semantic=False)
    assert found.semantic is None and "lexical coverage only" in found.note
    assert 0.0 <= found.confidence <= 1.0


def test_no_passage_means_no_confidence():
    found = assess("Anything at all?", [], {}, 10)
    assert found.confidence == 0.0 and found.best is None and found.note == "no passage retrieved"
