"""A finished sentence ends where the next line opens a list item (text/sentences._BOUNDARY): a
bullet or dash item that followed a full stop ran on in the same "sentence", so R-FAQ's "The R
distribution also comes with the following manuals." carried the first manual's description,
and PostgreSQL's "The default value is 100 arguments." the next setting's name and definition.
An item's own lines stay together: a definition list's term and its first sentence, as docling
writes them from HTML, are one sentence, as before."""
from __future__ import annotations

import duckdb
import pytest

from provrag.text.sentences import split_sentences


@pytest.fixture(scope="module")
def r_faq_manuals_unit(small_index) -> str:
    (text,) = duckdb.connect().execute(
        f"SELECT text FROM '{small_index}/text_units.parquet' WHERE contains(text, 'comes with the following manuals')"
    ).fetchone()
    return text


def sentences(text: str) -> list[str]:
    return [" ".join(text[a:b].split()) for a, b in split_sentences(text)]


def test_a_sentence_ends_before_the_bullet_item_on_the_next_line(r_faq_manuals_unit):
    said = sentences(r_faq_manuals_unit)
    assert "The R distribution also comes with the following manuals." in said
    intro = next(s for s in said if s.startswith("• “An Introduction to R”"))
    assert intro.endswith("statistical modeling and graphics.")
    # every item that follows a finished one opens a sentence of its own
    items = [s for s in said if s.startswith("• “")]
    assert len(items) >= 4 and not any(s.count("• “") > 1 for s in said), said


def test_a_dash_item_after_a_full_stop_is_its_own_sentence_and_keeps_its_definition():
    # docling's export of PostgreSQL 15's runtime-config-preset.html (a definition list)
    text = ("The default value is 100 arguments.\n- max_identifier_length (integer)\n"
            "    - Reports the maximum identifier length. It is determined as one less than the value of "
            "NAMEDATALEN when building the server.")
    assert sentences(text) == ["The default value is 100 arguments.",
                               "- max_identifier_length (integer) - Reports the maximum identifier length.",
                               "It is determined as one less than the value of NAMEDATALEN when building the server."]


def test_an_item_opens_a_sentence_after_an_initial_but_an_unfinished_line_runs_on():
    # R-FAQ's "… to and from R." ends on a one-letter name that reads as an initial elsewhere
    assert sentences("a guide to importing and exporting data to and\nfrom R.\n• “The R Language Definition” "
                     "(R-lang) explains evaluation.") == [
        "a guide to importing and exporting data to and from R.",
        "• “The R Language Definition” (R-lang) explains evaluation."]
    assert sentences("It was written by J. Smith in 1990.") == ["It was written by J. Smith in 1990."]
    assert sentences("It is set\n- by default - to four.") == ["It is set - by default - to four."]
