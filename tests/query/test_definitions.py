""""What is X?" over manuals that say X on every page: retrieval reads the sentence that defines
X ("Debconf is a configuration management system …"), which the one word X cannot find
(query/literal.definition_pattern, in the literal channel)."""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.query.literal import definition_pattern


@pytest.mark.parametrize("question, defines", [
    ("What is zsh?", "Zsh is a UNIX command interpreter (shell)"),
    ("what are  the GNU coding standards ?", "The GNU coding standards are a set of rules"),
    ("What is an S-PLUS?", "S-Plus is a value-added version of S"),
])
def test_a_definition_question_finds_the_sentence_that_defines_its_subject(question, defines):
    flat = " ".join(defines.lower().split())
    assert re.search(definition_pattern(question), flat)
    assert not re.search(definition_pattern(question), flat.replace(" is ", " was ").replace(" are ", " were "))


@pytest.mark.parametrize("question", [
    "What is the default thickness of booktabs' heavyrulewidth?",   # a fact about a subject, not its definition
    "Who is Paul Falstad?", "How do I use zsh?", "Which shell is zsh?"])
def test_other_questions_have_no_definition_pattern(question):
    assert definition_pattern(question) is None


def test_what_is_debconf_is_answered_by_its_definition(manuals_index):
    """Over the ten Debian manuals, "debconf" stands in policy's changelog, the developer's
    reference and the FAQ; the one word found a changelog line ("A new Apps/Science menu section
    is available debconf policy …", Policy p. 180). The Developer's Reference defines it."""
    res = run_ask("What is debconf?", manuals_index, load_config(), save=False).to_json()
    assert not res["abstained"]
    assert res["answer"].startswith("Debconf is a configuration management system")
    assert res["sources"][0]["document"] == "Debian Developer's Reference"


@pytest.mark.parametrize("question", ["What is R?", "What is S-PLUS?", "what is  CRAN ?", "What is X.?",
                                      "What are the GNU coding standards?", "Halcyon", "What is an example?"])
def test_the_literal_channels_key_word_leaves_its_answer_as_it_was(small_index, monkeypatch, question):
    """literal_key spares the whitespace-collapsed copy of every unit that lacks the word: the
    units it finds and their scores are those of the scan without it, whole index or restricted."""
    from provrag.query import literal
    from provrag.store.reader import open_index

    with open_index(small_index) as r:
        some = [i for (i,) in r.con.execute("SELECT id FROM text_units ORDER BY human_readable_id LIMIT 40").fetchall()]
        keyed = [literal.literal_channel(r.con, question, 1, 100, ids) for ids in (None, some)]
        monkeypatch.setattr(literal, "literal_key", lambda phrase, subject: None)
        scanned = [literal.literal_channel(r.con, question, 1, 100, ids) for ids in (None, some)]
    assert keyed == scanned


def test_the_key_is_a_word_of_the_phrase_and_of_the_subject():
    from provrag.query.literal import literal_key

    assert literal_key("what is the gnu coding standards", "gnu coding standards") == "standards"
    assert literal_key("what is x", "x.") is None   # no word in common: no key, the whole scan
    assert literal_key("halcyon", None) == "halcyon"
