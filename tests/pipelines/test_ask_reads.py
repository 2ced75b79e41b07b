"""ask reads before it answers (issue 26): a question is answered only by a sentence the learned
reader finds states the answer, the answer leads with it, nothing that does not answer is added;
when the chosen route finds none, wider routes are tried (each attempt in the trace) before
the honest abstention; and the answer shown is the answer checked against its cited sources.

Over the real documents a new user tried: ../shared/corpora/small (R-FAQ.pdf, Lincoln's 1863
message) and the repository's data/ (the Halcyon commissioning handbook)."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import CLOSEST_VIA, run_ask
from provrag.query.context import ABSTENTION

pytestmark = pytest.mark.usefixtures("shared")


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, small_corpus):
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("small-index") / "idx"
    run_index(small_corpus, out, load_config())
    return out


@pytest.fixture(scope="module")
def halcyon_index(tmp_path_factory, sample_data):
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("halcyon-index") / "idx"
    run_index(sample_data, out, load_config())
    return out


def _first_sentence(answer: str) -> str:
    return re.split(r"\s*\[Data:", answer, maxsplit=1)[0]


def test_what_is_r_is_answered_from_the_faq_section_that_asks_it(small_index):
    """R-FAQ §2.1 "What is R?" (physical page 7): "R is a system for statistical computation and graphics." """
    res = run_ask("What is R?", small_index, load_config(), save=False)
    assert not res.abstained, res.trace.get("attempts")
    assert _first_sentence(res.answer).startswith("R is a system for statistical computation and graphics")
    first = res.sources[0]
    assert first.path.endswith("R-FAQ.pdf") and first.page_start == 7
    assert 0.5 <= res.confidence <= 1.0


def test_what_the_president_said_of_foreign_relations_comes_from_the_opening_paragraph(small_index, small_corpus):
    """The 1863 message opens on foreign relations ("We remain in peace and friendship with
    foreign powers. …"): the answer leads with a sentence of that opening."""
    res = run_ask("What did the President say about the foreign relations of the country?", small_index,
                  load_config(), save=False)
    assert not res.abstained, res.trace.get("attempts")
    opening = " ".join((small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8").split())[:1500]
    lead = " ".join(_first_sentence(res.answer).split()).rstrip(".")
    assert lead and lead in opening, lead
    assert res.sources[0].path.endswith("sotu-1863-lincoln.txt")


def test_who_leads_the_team_answers_with_the_sentence_that_names_her_and_nothing_else(halcyon_index):
    """The README's first example: the sentence naming Dr. Imogen Vale leads, and the handbook's
    revision and purpose sentences (which answer nothing) are not added."""
    res = run_ask("Who leads the Halcyon commissioning team?", halcyon_index, load_config(), save=False)
    assert not res.abstained
    assert "Dr. Imogen Vale" in _first_sentence(res.answer)
    assert "revision C" not in res.answer and "This handbook tells" not in res.answer
    assert res.checked and res.removed_sentences == []


def test_a_question_nothing_answers_tries_two_wider_routes_then_abstains(small_index):
    """Each attempt is in the trace with its route, scope, outcome and stages; the abstention
    lists the closest passages, never as citations."""
    res = run_ask("What is the maximum heap size of the Java virtual machine in R?", small_index, load_config(),
                  method="basic", save=False)
    assert res.abstained and res.answer == ABSTENTION and res.citations == []
    attempts = res.trace["attempts"]
    assert [a["route"] for a in attempts] == ["basic", "wide", "section"]
    assert res.attempts == 3
    for a in attempts:
        assert a["abstained"] and a["stages"] and {"exploration", "synthesis"} <= {s["name"] for s in a["stages"]}
    assert attempts[1]["scope"]["context_units"] > load_config().search.context_units
    assert attempts[2]["scope"]["units"] >= 1
    assert sum(a["kept"] for a in attempts) == 1
    assert res.sources and all(s.via == CLOSEST_VIA for s in res.sources)


def test_an_answered_question_is_one_attempt(halcyon_index):
    res = run_ask("Who leads the Halcyon commissioning team?", halcyon_index, load_config(), save=False)
    assert [a["route"] for a in res.trace["attempts"]] == [res.route] and res.trace["attempts"][0]["kept"]


def test_a_route_that_reads_too_little_is_retried_wider(halcyon_index):
    """With one passage read, the first route misses the sentence that answers; the wider route
    reads three times as many passages and finds it. Both attempts are in the trace."""
    cfg = load_config(None, {"search": {"top_k_units": 1, "context_units": 1, "reader_passages": 1}})
    res = run_ask("When is the acceptance test run at Kestrel Point?", halcyon_index, cfg, method="basic",
                  save=False)
    routes = [a["route"] for a in res.trace["attempts"]]
    assert routes[0] == "basic" and len(routes) >= 2, res.trace["attempts"]
    if not res.abstained:
        assert res.route != "basic" and res.trace["attempts"][-1]["kept"]


# ---- the answer shown is the answer checked -------------------------------------------------------

def test_a_sentence_its_sources_do_not_support_is_removed_and_listed(halcyon_index):
    from provrag.engines import get_engine
    from provrag.store.reader import reading
    from provrag.verify.answer_check import check_answer

    true = ("The commissioning team is led by Dr. Imogen Vale, Brightwater's commissioning manager, who holds "
            "the commissioning authority. [Data: Sources (3)]")
    false = "The plant's chlorine contact tank was designed by a team in Reykjavik in 1952. [Data: Sources (3)]"
    cfg = load_config()
    with reading(halcyon_index, None) as reader:
        out = check_answer(reader, f"{true} {false}", cfg, get_engine(cfg))
    assert out.checked == 2 and out.kept == 1
    assert out.answer == true
    (gone,) = out.removed
    assert gone["sentence"].startswith("The plant's chlorine contact tank")
    assert gone["citations"] == ["[Data: Sources (3)]"] and gone["verdict"] != "supported" and gone["reason"]


def test_an_answer_whose_citations_reach_nothing_becomes_the_abstention(halcyon_index):
    from provrag.engines import get_engine
    from provrag.store.reader import reading
    from provrag.verify.answer_check import check_answer

    cfg = load_config()
    with reading(halcyon_index, None) as reader:
        out = check_answer(reader, "Dr. Imogen Vale leads the commissioning team. [Data: Sources (90001)]", cfg,
                           get_engine(cfg))
    assert out.emptied and out.removed[0]["reason"] == "its citations reach no text in the index"


def test_ask_json_lists_removed_sentences_and_raw_shows_the_unchecked_answer(halcyon_index, provrag_cli):
    """`--json` keeps the contract's keys first and adds the check's after them; `--raw` skips the check."""
    q = "Who leads the Halcyon commissioning team?"
    runs = {}
    for flag in ([], ["--raw"]):
        p = subprocess.run([*provrag_cli, "ask", q, "--index", str(halcyon_index), "--json", *flag],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-400:]
        runs[bool(flag)] = json.loads(p.stdout)
    checked, raw = runs[False], runs[True]
    assert list(checked)[:12] == ["trace_id", "question", "method", "answer", "abstained", "confidence",
                                  "index_version", "citations", "sources", "unresolved", "error", "abstained_by"]
    assert {"checked", "removed_sentences", "raw_answer"} <= set(checked)
    assert checked["checked"] is True and raw["checked"] is False
    assert raw["answer"] == raw["raw_answer"] and raw["removed_sentences"] == []
    trace = json.loads(subprocess.run([*provrag_cli, "trace", checked["trace_id"], "--index", str(halcyon_index),
                                       "--format", "json"], capture_output=True, text=True, timeout=120).stdout)
    assert "removed_sentences" in trace and any(s["name"] == "check" for s in trace["stages"])
