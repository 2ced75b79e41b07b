"""A question that asks for a default is answered by the sentence that states it (text/asked.py's
preferred kind, answer/near_miss.preferring_asked_fact), over five pages of PostgreSQL 15's HTML
documentation from its pinned Debian package (tests/conftest.postgres_index).

Each setting's entry there opens with a sentence that names the setting, often twice ("Doing so
will limit …", "If the last flush happened less than wal_writer_delay ago and less than
wal_writer_flush_after worth of WAL …"), and says its default in a sentence that names nothing but
"default". Word overlap led with the opening sentence, at ≥ 0.95, on 25 of 83 questions "What is
the default value of X?" over PostgreSQL's settings pages (bench/results/default-asked-2026-12-01.md).
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


@pytest.mark.parametrize("setting, lead", [
    # led before with "Setting this value to off reduces the likelihood that workers will become blocked …"
    ("parallel_leader_participation", "parallel_leader_participation (boolean): The default is on."),
    # with max_parallel_workers' "The default value is 8.", a sentence that names it
    ("max_parallel_maintenance_workers", "max_parallel_maintenance_workers (integer): The default value is 2."),
])
def test_a_setting_s_default_leads_its_answer(postgres_index, setting, lead):
    res = ask(postgres_index, f"What is the default value of {setting}?")
    assert not res["abstained"], res
    assert res["plain"].startswith(lead), res["answer"]


def test_a_default_under_a_term_the_unit_before_holds_is_kept_by_the_answer_check(postgres_index):
    # wal_writer_flush_after's entry opens in one text unit and says its default in the next, so
    # the sentence shown under its term ("wal_writer_flush_after (integer): The default is 1MB.")
    # stood in no cited unit with its term: the answer check removed it as contradicted and the
    # answer kept only "This parameter can only be set in the postgresql.conf file …"
    res = ask(postgres_index, "What is the default value of wal_writer_flush_after?")
    assert res["plain"].startswith("wal_writer_flush_after (integer): The default is 1MB."), res["answer"]
    assert res["removed_sentences"] == [], res["removed_sentences"]


def test_another_setting_s_default_is_not_preferred(postgres_index):
    # bgwriter_flush_after's default is in no answering candidate; bgwriter_lru_maxpages' "The default
    # value is 100 buffers." says a default but lacks "flush": it is not put first
    res = ask(postgres_index, "What is the default value of bgwriter_flush_after?")
    assert "100 buffers" not in res["plain"].split(". ")[0], res["answer"]


def test_a_default_in_a_sentence_without_its_term_still_answers(postgres_index):
    # "The default is prime256v1." stands in ssl_ecdh_curve's entry with no term line in its unit:
    # the preference finds no sentence naming the setting and keeps the reader's order
    res = ask(postgres_index, "What is the default value of ssl_ecdh_curve?")
    assert not res["abstained"], res
    assert "prime256v1" in res["plain"], res["answer"]


def candidate(record: int, text: str, sentence: str, prob: float) -> dict:
    start = text.index(sentence)
    return {"record": record, "start": start, "end": start + len(sentence), "sentence": sentence, "prob": prob}


def test_a_default_the_lead_s_next_sentence_gives_keeps_the_lead():
    # newfloat's manual (texlive-latex-recommended-doc) as its text layer has it; the reader's
    # probabilities as ask read them for eval/texlive's "What is newfloat's default
    # chapterlistsgap?"; "chapterlistsgaps" (another option) stems as "chapterlistsgap"
    from provrag.engines.offline.answer.near_miss import preferring_asked_fact

    option = ("The option chapterlistsgap=hvaluei sets the amount of the vertical gap inserted into the "
              "“List of Figure”, “List of Tables”, and all lists created with \\DeclareFloatingEnvironment when a "
              "new chapter will be started. The default value is 10pt.")
    gaps = ("The default value of the chapterlistsgaps= option depends on the “within” setting, it is set to on "
            "if chapter or section is selected, otherwise it is set to off.")
    records = [{"text": option}, {"text": gaps}]
    lead = candidate(0, option, option.split(" The default")[0], 0.9658)
    ten = candidate(0, option, "The default value is 10pt.", 0.8930)
    other = candidate(1, gaps, gaps, 0.8910)
    idf = {"newfloat": 0.0, "default": 0.4, "chapterlistsgap": 3.2}   # newfloat named the document searched
    question = "What is newfloat's default chapterlistsgap?"
    # the lead says what its next sentence gives the default of: the two answer together, and the
    # other option's default, which names the asked one's stem, is not put first
    assert preferring_asked_fact(question, [lead, ten, other], 0.6, records, idf) == [lead, ten, other]
    # without that next sentence, the answering sentence that says a default and names the asked
    # option leads
    records[0]["text"] = option.split(" The default")[0] + " It is a length."
    assert preferring_asked_fact(question, [lead, other], 0.6, records, idf) == [other]
    records[0]["text"] = option
    # below the threshold a sentence does not answer, and no preference turns into an abstention
    assert preferring_asked_fact(question, [lead, ten, other], 0.95, records, idf) == [lead, ten, other]
    # a question that does not ask for a default keeps the order, as does one whose terms no idf weighs
    assert preferring_asked_fact("What does chapterlistsgap set?", [lead, ten], 0.6, records, idf) == [lead, ten]
    assert preferring_asked_fact(question, [lead, other], 0.6, records, None) == [lead, other]


def test_a_default_under_its_term_after_the_lead_leads():
    # PostgreSQL's entry: the default follows the opening sentence, and is read under its term
    from provrag.engines.offline.answer.near_miss import preferring_asked_fact

    text = ("- jit_expressions (boolean)\n    - Determines whether expressions are JIT compiled, when JIT "
            "compilation is activated (see Section 32.2). The default is on.")
    opening = candidate(0, text, "- jit_expressions (boolean)\n    - Determines whether expressions are JIT compiled, "
                                 "when JIT compilation is activated (see Section 32.2).", 0.9704)
    default = candidate(0, text, "The default is on.", 0.9631)
    default["sentence"] = "jit_expressions (boolean): The default is on."
    idf = {"default": 0.3, "valu": 0.5, "jit": 2.1, "express": 1.2}
    got = preferring_asked_fact("What is the default value of jit_expressions?", [opening, default], 0.6,
                                [{"text": text}], idf)
    assert got == [default]
