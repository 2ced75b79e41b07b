"""The asked fact's form (text/asked.py): which questions ask for a limit, a version or a cost
(required) or a default (preferred), and which sentences state one. The questions are the dev sets' wordings (eval/texlive, SQuAD-as-PDF);
the sentences are the manuals' own (TeX Live's lineno, listings, microtype, polyglossia)."""
from __future__ import annotations

import pytest

from provrag.text.asked import asked_facts, gives_default, preferred_facts, states, states_all


@pytest.mark.parametrize("question,kinds", [
    ("What is the largest modulo value lineno's \\modulolinenumbers accepts?", ("limit",)),
    ("How many floating environments can newfloat define at most?", ("limit",)),
    ("What is the maximum line length a listing may have in the listings package?", ("limit",)),
    ("Which XeTeX version does mathspec require at least?", ("limit", "version")),
    ("Which polyglossia version added support for Uyghur?", ("version",)),
    ("Since which version does ghsystem provide its statements in Japanese?", ("version",)),
    ("In which LaTeX release did the float package's [H] specifier become part of the kernel?", ("version",)),
    ("How much faster does siunitx run when I turn number parsing off?", ("cost",)),
    ("How long does pdfpages take to insert a 500-page PDF?", ("cost",)),
    ("By how much does a \\cmidrule get trimmed by default when I write (r) in booktabs?", ("cost",)),
    # a superlative that asks for a thing, not a bound; a setting named "limit"; "releases" the verb
    ("What is the largest city the Rhine runs through?", ()),
    ("What are the biggest game animals of Kenya called?", ()),
    ("What is microtype's default stretch limit for font expansion?", ()),
    ("What was the last version of R that supported 32-bit Windows?", ("version",)),
    ("What sort of system releases the exhaust steam into the atmosphere?", ()),
    ("What do organotin hydrides release?", ()),
    ("How do I set the font of a listing with listings?", ()),
])
def test_what_a_question_asks_for(question, kinds):
    assert asked_facts(question) == kinds


def test_a_bound_is_stated_a_description_is_not():
    q = "What is the largest modulo value lineno's \\modulolinenumbers accepts?"
    assert states("limit", "The maximum modulo value is now 255.", q)
    assert states("limit", "The package requires at least version 0.9995 of XeTeX.", q)
    assert not states("limit", "The lines typeset by the listings package are wider since the default basewidth "
                               "doesn't equal the width of a single typewriter type character.", q)
    # "one or more" options, "the most important command": no bound on what was asked
    assert not states("limit", "where options are one or more of fileext, listname, name, placement", q)
    assert not states("limit", "The most important command in float is the \\newfloat command.", q)


def test_a_version_or_a_cost_needs_a_number_the_question_does_not_say():
    q = "Which Debian release first shipped R 4.0?"
    assert not states("version", "R 4.0 brought a new raster graphics engine.", q)
    assert states("version", "Debian 11 ships R 4.0.4.", q)
    assert states_all(("version",), "Version 1.52 introduces support for Uyghur.",
                      "Which polyglossia version added support for Uyghur?")
    cost = "How long does pdfpages take to insert a 500-page PDF?"
    assert not states("cost", "Inserting a 500-page PDF takes a while, since every page is read.", cost)
    assert states("cost", "Each page takes about two seconds.", cost)
    assert states_all((), "Anything at all.", "What is R?")


@pytest.mark.parametrize("question,kinds", [
    ("What is the default value of work_mem?", ("default",)),
    ("What is microtype's default stretch limit for font expansion?", ("default",)),
    ("What are subcaption's default label format and label separator for sub-captions?", ("default",)),
    ("What does wal_level default to?", ("default",)),
    ("What is the largest modulo value lineno's \\modulolinenumbers accepts?", ()),
    ("What is R?", ()),
])
def test_which_questions_ask_for_a_default(question, kinds):
    assert preferred_facts(question) == kinds
    assert "default" not in asked_facts(question)   # preferred, never required


def test_a_default_is_stated_by_saying_so():
    q = "What is the default value of jit_expressions?"
    # PostgreSQL's own sentences: the entry's default, and its opening sentence, which names the
    # setting more often but states no default
    assert states("default", "jit_expressions (boolean): The default is on.", q)
    assert states("default", "If this parameter is off (the default), then ssl_passphrase_command will be ignored.", q)
    assert states("default", "Initially, the search path holds the public schema.", q)
    assert not states("default", "jit_expressions (boolean): Determines whether expressions are JIT compiled, "
                                 "when JIT compilation is activated (see Section 32.2).", q)


@pytest.mark.parametrize("sentence,gives", [
    # PostgreSQL 15's own sentences (runtime-config pages)
    ("temp_buffers (integer): The default is eight megabytes (8MB).", True),
    ("geqo_effort (integer): The default value is five.", True),
    ("If this parameter is off (the default), then ssl_passphrase_command will be ignored.", True),
    ("This setting defaults to on.", True),
    ("temp_buffers (integer): (If BLCKSZ is not 8kB, the default value scales proportionally to it.)", False),
    ("escape_string_warning (boolean): Applications that wish to use backslash as escape should be modified to "
     "use escape string syntax (E'...'), because the default behavior of ordinary strings is now to treat "
     "backslash as an ordinary character, per SQL standard.", False),
])
def test_a_sentence_that_gives_a_default_s_value_is_told_from_one_that_mentions_a_default(sentence, gives):
    q = "What is the default value of temp_buffers?"
    assert states("default", sentence, q)     # both say "default": both may answer
    assert gives_default(sentence) is gives   # only the first kind leads when any does (answer/near_miss.py)
