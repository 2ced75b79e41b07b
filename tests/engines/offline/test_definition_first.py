"""A "What is X?" question leads with the sentence that defines X, and "What does X do?" with one
that says what X does (answer/near_miss.preferring_definition).

Over Graphviz's manual pages as its Debian package prints them (tests/conftest.graphviz_man_index),
"What is gvpr?" led with "$tvtype : tvtype_t indicates how gvpr traverses a graph." and showed the
definition third; "What is neato?" answered "By default, neato uses stress majorization.", where
dot(1)'s NAME section says "neato − filter for drawing undirected graphs". Over SQLite's page on
VACUUM, "What does VACUUM do?" led with "A VACUUM will fail if …". The three tests over those
pages fail on 5903abe.
"""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask


def lead_of(index, question: str) -> str:
    res = run_ask(question, index, load_config(), save=False).to_json()
    assert not res["abstained"], res
    return re.split(r"\s*\[Data:", res["answer"], maxsplit=1)[0]


@pytest.mark.parametrize("subject, sentence, defines", [
    ("gvpr", "DESCRIPTION gvpr (previously known as gpr) is a graph stream editor inspired by awk.", True),
    ("neato", "NAME dot − filter for drawing directed graphs neato − filter for drawing undirected graphs", True),
    ("package salvaging", "Package salvaging is the process by which one attempts to save a package", True),
    ("r foundation", "The R Foundation is a not for profit organization working in the public interest.", True),
    ("rfa", "RFA stands for Request For Adoption.", True),
    ("neato", "By default, neato uses stress majorization.", False),
    ("gvpr", "$tvtype : tvtype_t indicates how gvpr traverses a graph.", False),
    ("dot", "Use dot -Tpng to get a PNG image.", False),           # an option, not a NAME line
    ("x", "the x-y − z plane", False),                             # a word inside a hyphenated one
])
def test_the_forms_that_define_a_subject(subject, sentence, defines):
    from provrag.query.literal import defines_pattern

    flat = " ".join(sentence.lower().split())
    assert bool(re.search(defines_pattern(subject), flat)) is defines


def test_only_an_answering_definition_leads_and_nothing_else_moves():
    from provrag.engines.offline.answer.near_miss import preferring_definition

    a = {"sentence": "By default, neato uses stress majorization.", "prob": 0.98}
    b = {"sentence": "If mode=KK, it uses a version of gradient descent.", "prob": 0.9}
    c = {"sentence": "neato − filter for drawing undirected graphs", "prob": 0.89}
    low = {"sentence": "neato is a program.", "prob": 0.3}
    assert preferring_definition("What is neato?", [a, b, c], 0.5) == [c, a, b]
    assert preferring_definition("What is neato?", [a, b, low], 0.5) == [a, b, low]   # reads below the bar
    assert preferring_definition("How does neato lay out a graph?", [a, b, c], 0.5) == [a, b, c]
    assert preferring_definition("What is neato?", [], 0.5) == []


def test_what_is_a_program_is_answered_by_its_definition(graphviz_man_index):
    lead = lead_of(graphviz_man_index, "What is gvpr?")
    assert re.search(r"gvpr \(previously known as gpr\) is a graph stream editor", lead), lead
    assert "tvtype" not in lead


def test_a_manual_page_s_name_line_defines_its_program(graphviz_man_index):
    lead = lead_of(graphviz_man_index, "What is neato?")
    assert "neato − filter for drawing undirected graphs" in lead, lead


@pytest.mark.parametrize("sentence, points", [
    ("For additional information, rationales and FAQs on package salvaging, please visit the Salvaging "
     "Packages page on the Debian wiki.", True),   # what "What is package salvaging?" led with before
    ("For more information on parallel query, see Chapter 15.", True),
    ("Visitors to the site are counted once a day.", False),
    ("For more than one visit, the counter is kept per session.", False)])
def test_a_sentence_that_sends_the_reader_to_visit_a_page_is_a_pointer(sentence, points):
    from provrag.engines.offline.answer.focus import points_elsewhere

    assert points_elsewhere(sentence) is points


@pytest.mark.parametrize("subject, sentence, acts", [
    ("vacuum", "The VACUUM command rebuilds the database file, repacking it into a minimal amount of disk space.", True),
    ("neato", "neato draws undirected graphs using a 'spring' model.", True),
    ("vacuum", "A VACUUM will fail if there is an open transaction on the database connection.", False),
    ("vacuum", "The VACUUM command is a no-op on an in-memory database.", False),     # an auxiliary, not an act
    ("gvpr", "A gvpr program consists of a list of predicate-action clauses.", False),  # a program written in gvpr
    ("neato", "By default, neato uses stress majorization.", False),                  # not its subject
])
def test_the_sentence_that_says_what_a_thing_does(subject, sentence, acts):
    from provrag.query.literal import acts_pattern

    assert bool(re.search(acts_pattern(subject), " ".join(sentence.lower().split()))) is acts


def test_what_does_a_command_do_is_answered_by_what_it_does(sqlite_vacuum_index):
    from provrag.query.literal import action_subject

    assert action_subject("What does VACUUM do?") == "vacuum"
    assert action_subject("What does the cache of a database connection do?") is None   # more than three words
    lead = lead_of(sqlite_vacuum_index, "What does VACUUM do?")
    assert lead.startswith("The VACUUM command "), lead   # before: "A VACUUM will fail if …"
