"""A question about a command-line option is answered by a sentence that names the option, the
option's entry first, or not at all (answer/option_answers.py, text/options.py, the option channel
of query/literal.py).

Over gvpr(1) and dot(1) as Graphviz's Debian package prints them (tests/conftest.graphviz_man_index),
every question below was answered on 1780c8a, from a sentence that says nothing about the option:
"What does the -y option of dot do?" and "What does the -j option of dot do?" (dot has no -j) with
dot(1)'s SYNOPSIS at 0.88, "What does the -z option of gvpr do?" (no -z either) with "Colon-separated
list of directories to be searched …" at 0.88, as was "What does the -y option of gvpr do?" (only dot has
-y; 0.87), and "What does the -q option of gvpr do?" led with "If −f is not given, gvpr will use the first
non-option argument as the program." All fail there; the two -V questions were answered with the
same SYNOPSIS and "Colon-separated list …" sentences.
"""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask


def ask(index, question: str) -> dict:
    return run_ask(question, index, load_config(), save=False).to_json()


def lead(res: dict) -> str:
    assert not res["abstained"], res
    return re.split(r"\s*\[Data:", res["answer"], maxsplit=1)[0]


@pytest.mark.parametrize("question, entry", [
    ("What does the -y option of dot do?", "\u2212y invert y coordinate in output."),
    ("What does the -q option of gvpr do?", "\u2212q Turns offwarning messages."),
    ("Which option of gvpr turns off warning messages?", "\u2212q Turns offwarning messages."),
    # both pages have -V: each question is answered from its own program's page
    ("What does the -V option of gvpr do?", "\u2212V Causes the program to print version information and exit."),
    ("What does the -V option of dot do?", "\u2212V (version) prints version information and exits."),
])
def test_an_option_question_leads_with_the_option_s_entry(graphviz_man_index, question, entry):
    assert lead(ask(graphviz_man_index, question)) == entry


@pytest.mark.parametrize("question", [
    "What does the -j option of dot do?", "What does the -z option of gvpr do?",
    "What does the -y option of gvpr do?",   # dot's -y is no answer for gvpr
])
def test_an_option_the_pages_do_not_have_is_not_answered(graphviz_man_index, question):
    res = ask(graphviz_man_index, question)
    assert res["abstained"], res["answer"]


@pytest.mark.parametrize("question, entry", [
    # the reader reads these entries at 0.06 and 0.03, and the passage head their pages below 0.5:
    # both were declined on d7fb5e9, though the page of the program the question names defines the option
    ("What does the -K option of dot do?", "\u2212Klayout override the default layout engine implied by the command name."),
    ("What is dot's -O flag for?",
     "\u2212O automatically generate output filenames based on the input filename and the \u2212T format."),
])
def test_what_an_option_does_is_its_entry_in_the_named_program_s_page(graphviz_man_index, question, entry):
    assert lead(ask(graphviz_man_index, question)) == entry


def test_an_option_of_a_program_no_page_names_is_not_answered_by_another_s(graphviz_man_index):
    """git has no page here, and neither page names git: gvpr's "-q" entry is no answer for it."""
    res = ask(graphviz_man_index, "What does the -q option of git do?")
    assert res["abstained"], res["answer"]


@pytest.mark.parametrize("question", [
    # on 20bb7c8 each was answered with the option's entry, which states no version and no speed:
    # "−y invert y coordinate in output." at 0.92 and 0.60, "−q Turns offwarning messages." at 0.89
    "Which version of dot added the -y option?",
    "Which version of gvpr added the -q option?",
    "How much faster is dot with the -y option?",
])
def test_an_entry_that_states_no_asked_fact_does_not_answer_for_it(graphviz_man_index, question):
    res = ask(graphviz_man_index, question)
    assert res["abstained"], res["answer"]


def test_an_entry_that_states_the_asked_fact_still_answers(graphviz_man_index):
    assert lead(ask(graphviz_man_index, "What is the default scale of dot's -s option?")) == \
        "\u2212sfscale scale input by fscale,the default is 72."


def test_only_entries_stating_an_asked_fact_may_answer_for_it():
    from provrag.engines.offline.answer.option_answers import stating_entries

    entry, other = {"sentence": "\u2212y invert y coordinate in output."}, {"sentence": "Added in 2.30."}
    assert stating_entries([entry], [entry, other], ()) == [entry]              # no fact asked: all entries
    assert stating_entries([entry], [other], ("version",)) == []                 # asked, and the entry states none
    assert stating_entries([entry], [entry], ("version",)) == [entry]
