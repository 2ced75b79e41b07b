"""A definition list's sentences are read under their term (text/definitions.py), over five
pages of PostgreSQL 15's HTML documentation from its pinned Debian package. Before, every
sentence of a setting's definition but the first stood without the setting's name:
- "What is the default value of work_mem?" was answered "The default value is 2.0, which makes
  hash-based operations use twice the usual work_mem base amount." at 0.996 — hash_mem_multiplier's
  default, a sentence that names work_mem; work_mem's own "The default value is four megabytes
  (4MB)." names nothing but "default value";
- "What is the default value of max_connections?" with superuser_reserved_connections' default.
"""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask


def ask(index, question: str) -> dict:
    res = run_ask(question, index, load_config(), save=False).to_json()
    res["plain"] = re.sub(r"\s*\[Data: [^\]]*\]", "", res["answer"])
    return res


@pytest.fixture(scope="module")
def resource_page(postgres_pages, parsed_text) -> str:
    return parsed_text(postgres_pages / "runtime-config-resource.html", "html")


def test_each_setting_s_definition_is_an_entry_under_its_term(resource_page):
    from provrag.text.definitions import definition_entries, entries_of, term_at

    entries = {term: (a, b) for _, a, b, term in definition_entries(resource_page)}
    assert {"work_mem (integer)", "shared_buffers (integer)", "hash_mem_multiplier (floating point)"} <= set(entries)
    a, b = entries["work_mem (integer)"]
    assert "The default value is four megabytes (4MB)." in resource_page[a:b]
    assert "hash_mem_multiplier" not in resource_page[a:b].split("The default value is four")[1][:40]
    # a unit that opens inside the definition keeps the term of the unit before it
    at = resource_page.index("The default value is four megabytes (4MB).")
    previous, text = resource_page[:at], resource_page[at:]
    found = term_at(entries_of(text, previous), 0, len("The default value is four megabytes (4MB)."))
    assert found == ("work_mem (integer)", False)


@pytest.mark.parametrize("question, lead, wrong", [
    ("What is the default value of work_mem?", "work_mem (integer): The default value is four megabytes (4MB).",
     "2.0"),
    ("What is the default value of max_connections?", "max_connections (integer): The default is typically 100 connections",
     "three connections"),
    # a list under a line that ends with ":" is no part of that line's sentence (text/sentences._BOUNDARY):
    # "Explanation of the default value: - HIGH - Cipher suites …" led before
    ("What is the default value of ssl_ciphers?", "ssl_ciphers (string): The default value is HIGH:MEDIUM:+3DES:!aNULL.",
     "Explanation of the default value"),
    # the setting the question names word for word (answer/near_miss.preferring_asked_fact), not one whose
    # name begins with it
    ("What is the default value of ssl?", "ssl (boolean): The default is off.", "HIGH:MEDIUM"),
    # of the setting's sentences that say "default", the one that gives its value leads
    ("What is the default value of temp_buffers?", "temp_buffers (integer): The default is eight megabytes (8MB).",
     "Sets the maximum amount"),
])
def test_a_setting_s_default_is_answered_from_its_own_definition(postgres_index, question, lead, wrong):
    res = ask(postgres_index, question)
    assert not res["abstained"], res
    assert res["plain"].startswith(lead), res["answer"]
    assert wrong not in res["plain"], res["answer"]
    assert res["sources"][0]["path"] == "runtime-config-resource.html" or "connection" in res["sources"][0]["path"]


def test_the_answer_check_keeps_a_sentence_shown_under_its_term(postgres_index):
    res = ask(postgres_index, "What is the default value of superuser_reserved_connections?")
    assert res["plain"].startswith("superuser_reserved_connections (integer): The default value is three connections."), res
    assert res["removed_sentences"] == []


def test_a_type_table_row_answers_for_its_type(postgres_index):
    res = ask(postgres_index, "What is the range of a smallint?")
    assert res["plain"].startswith("Name: smallint; Storage Size: 2 bytes; Description: small-range integer; "
                                   "Range: -32768 to +32767."), res["answer"]
    assert "2147483647" not in res["plain"]


def test_a_for_more_information_sentence_is_a_pointer_not_an_answer(resource_page):
    from provrag.engines.offline.answer.focus import points_elsewhere
    from provrag.text.sentences import split_sentences

    said = [" ".join(resource_page[a:b].split()) for a, b in split_sentences(resource_page)]
    pointers = [s for s in said if s.startswith("For more")]
    # "For more information on parallel query, see Chapter 15.", "For more details about using huge pages …"
    assert len(pointers) >= 3 and all(points_elsewhere(s) for s in pointers), pointers
    # a statement that opens alike is none
    assert not points_elsewhere("For more than one connection, the server keeps a separate process per session.")


def test_the_term_is_shown_once_and_not_where_the_sentence_before_names_it():
    from provrag.engines.offline.answer.compose import answer_texts

    term = "max_wal_size (integer)"
    first = f"- {term} - Maximum size to let the WAL grow during automatic checkpoints."
    picked = [{"record": 0, "entry": term, "plain": "This is a soft limit.", "sentence": f"{term}: This is a soft limit.",
               "antecedent": first},
              {"record": 0, "entry": term, "plain": "It is taken as megabytes.",
               "sentence": f"{term}: It is taken as megabytes."}]
    texts = [t for t, _ in answer_texts(picked, [{"citation": "[Data: Sources (1)]"}])]
    assert texts == [f"{first} This is a soft limit.", "It is taken as megabytes."]
    # without the sentence before it, the first sentence shown carries the term, the next does not
    picked[0].pop("antecedent")
    texts = [t for t, _ in answer_texts(picked, [{"citation": "[Data: Sources (1)]"}])]
    assert texts == [f"{term}: This is a soft limit.", "It is taken as megabytes."]


def test_a_question_names_a_term_by_every_word_of_its_name():
    from provrag.text.definitions import names_term
    from provrag.text.words import terms_of

    q = set(terms_of("What is the default value of ssl?"))
    assert names_term("ssl (boolean)", q)
    assert not names_term("ssl_ciphers (string)", q)   # its name holds "cipher" too
    assert names_term("work_mem (integer)", set(terms_of("What is the default value of work_mem?")))
