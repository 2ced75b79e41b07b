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


def test_who_leads_the_team_answers_with_the_sentence_that_names_her_and_nothing_else(sample_index):
    """The README's first example: the sentence naming Dr. Imogen Vale leads, and the handbook's
    revision and purpose sentences (which answer nothing) are not added."""
    res = run_ask("Who leads the Halcyon commissioning team?", sample_index, load_config(), save=False)
    assert not res.abstained
    assert "Dr. Imogen Vale" in _first_sentence(res.answer)
    assert "revision C" not in res.answer and "This handbook tells" not in res.answer
    assert res.checked and res.removed_sentences == []


@pytest.mark.parametrize("question, pointer", [
    ("Who maintains the macOS port of R?", "has more details"),
    ("Where do I send feedback about the R FAQ?", "are described in"),
])
def test_a_pointer_elsewhere_after_the_lead_is_not_added(small_index, question, pointer):
    """R-FAQ.pdf: the sentence after the lead only sends the reader elsewhere ("The "R for macOS
    FAQ" (…) has more details.", "Features specific to the Windows and macOS ports of R are
    described in the "R for Windows FAQ" …"): it completes nothing, so it is not kept after it."""
    res = run_ask(question, small_index, load_config(), save=False)
    assert not res.abstained and res.sources[0].path.endswith("R-FAQ.pdf")
    assert pointer not in res.answer, res.answer


def _always_retrying():
    """The default settings, with a wider route tried whatever the reader's best reading was."""
    from dataclasses import replace

    cfg = load_config()
    return replace(cfg, search=replace(cfg.search, retry_from=0.0))


JAVA_HEAP = "What is the maximum heap size of the Java virtual machine in R?"


def test_a_question_nothing_answers_tries_two_wider_routes_then_abstains(small_index):
    """Each attempt is in the trace with its route, scope, outcome and stages; the abstention
    lists the closest passages, never as citations."""
    res = run_ask(JAVA_HEAP, small_index, _always_retrying(), method="basic", save=False)
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


def test_no_wider_route_is_tried_when_nothing_read_came_near_answering(small_index):
    """[search] retry_from: R-FAQ.pdf says nothing of a Java heap; the basic route's best sentence
    is far below it, so the wide and section routes are not tried — and, tried, they abstain the
    same. The trace and the result say why."""
    cfg = load_config()
    res = run_ask(JAVA_HEAP, small_index, cfg, method="basic", save=False)
    assert res.abstained and res.answer == ABSTENTION and res.attempts == 1
    assert [a["route"] for a in res.trace["attempts"]] == ["basic"]
    assert res.confidence < cfg.search.retry_from
    assert res.stopped and "retry_from" in res.stopped and res.trace["attempts"][0]["final"] == res.stopped
    wider = run_ask(JAVA_HEAP, small_index, _always_retrying(), method="basic", save=False)
    assert wider.abstained and wider.attempts == 3
    assert max(a["confidence"] for a in wider.trace["attempts"]) < cfg.search.retry_from


def test_a_name_the_index_holds_nowhere_is_one_attempt_and_says_so(sample_index):
    """The sample corpus never mentions Siemens: nothing is read, no wider route is tried."""
    res = run_ask("Who approved the Siemens firmware update?", sample_index, load_config(), save=False)
    assert res.abstained and res.attempts == 1
    assert res.stopped == "it names Siemens, which the index holds nowhere"


def test_an_answered_question_is_one_attempt(sample_index):
    res = run_ask("Who leads the Halcyon commissioning team?", sample_index, load_config(), save=False)
    assert [a["route"] for a in res.trace["attempts"]] == [res.route] and res.trace["attempts"][0]["kept"]


def test_the_first_route_that_answers_is_kept_and_every_attempt_recorded(small_index):
    """The escalation itself: local abstains, basic abstains with a higher confidence, wide
    answers — the wide attempt is kept, its stages become the trace's, all three are recorded."""
    from provrag.query.context import SearchResult
    from provrag.query.escalate import search_with_retries
    from provrag.query.trace import Trace
    from provrag.store.reader import reading

    outcomes = {"local": (True, 0.2), "basic": (True, 0.3), "wide": (False, 0.8)}
    seen = []

    def run_route(route, use, sub, restrict, said=()):
        name = "wide" if use.search.context_units > load_config().search.context_units else route
        seen.append((name, use.search.context_units))
        with sub.stage("synthesis") as d:
            d["route"] = name
        abstained, conf = outcomes[name]
        return SearchResult(ABSTENTION if abstained else "An answer. [Data: Sources (1)]", route, abstained=abstained,
                            confidence=conf, closest=["u1"] if abstained else [])

    trace = Trace("ask", "q")
    with reading(small_index, None) as reader:
        found, route = search_with_retries(reader, "q", load_config(), None, trace, "local", [], run_route)
    assert route == "wide" and not found.abstained and found.confidence == 0.8
    assert [a["route"] for a in trace.data["attempts"]] == ["local", "basic", "wide"]
    assert [a["kept"] for a in trace.data["attempts"]] == [False, False, True]
    assert [s["data"]["route"] for s in trace.data["stages"]] == ["wide"]
    assert seen[2][1] == 3 * load_config().search.context_units


def test_the_section_route_reads_the_units_around_the_best_page(small_index):
    from provrag.query.escalate import section_units
    from provrag.store.reader import reading

    with reading(small_index, None) as reader:
        uid, doc = reader.con.execute("SELECT id, document_id FROM text_units ORDER BY human_readable_id LIMIT 1 "
                                      "OFFSET 30").fetchone()
        ids = section_units(reader.con, uid, each_side=2)
        docs = {r[0] for r in reader.con.execute("SELECT document_id FROM text_units WHERE id IN (SELECT unnest(?))",
                                                 [ids]).fetchall()}
        starts = [reader.con.execute("SELECT char_start FROM text_units WHERE id = ?", [i]).fetchone()[0] for i in ids]
    assert uid in ids and 1 < len(ids) <= 5 and docs == {doc} and starts == sorted(starts)


# ---- the answer shown is the answer checked -------------------------------------------------------

def test_a_sentence_its_sources_do_not_support_is_removed_and_listed(sample_index):
    from provrag.engines import get_engine
    from provrag.store.reader import reading
    from provrag.verify.answer_check import check_answer

    true = ("The commissioning team is led by Dr. Imogen Vale, Brightwater's commissioning manager, who holds "
            "the commissioning authority. [Data: Sources (3)]")
    false = "The plant's chlorine contact tank was designed by a team in Reykjavik in 1952. [Data: Sources (3)]"
    cfg = load_config()
    with reading(sample_index, None) as reader:
        out = check_answer(reader, f"{true} {false}", cfg, get_engine(cfg))
    assert out.checked == 2 and out.kept == 1
    assert out.answer == true
    (gone,) = out.removed
    assert gone["sentence"].startswith("The plant's chlorine contact tank")
    assert gone["citations"] == ["[Data: Sources (3)]"] and gone["verdict"] != "supported" and gone["reason"]


def test_a_quote_of_the_unit_it_cites_is_kept_without_asking_the_judge(sample_index, monkeypatch):
    """Issue 30: judging an extractive answer's quotes was most of the answer check's time, and the
    judge could only keep them (a quote of its cited unit stands whatever it reads). A sentence
    that is not a quote still goes to the judge."""
    from provrag.engines import get_engine
    from provrag.store.reader import reading
    from provrag.verify.answer_check import check_answer

    cfg = load_config()
    engine = get_engine(cfg)
    asked: list[str] = []
    judge = engine.judge
    monkeypatch.setattr(engine, "judge", lambda claim, evidence, focus=None: asked.append(claim)
                        or judge(claim, evidence, focus=focus))
    quote = ("The commissioning team is led by Dr. Imogen Vale, Brightwater's commissioning manager, who holds "
             "the commissioning authority. [Data: Sources (3)]")
    paraphrase = "Dr. Imogen Vale, the plant's commissioning manager, signs every permit. [Data: Sources (3)]"
    with reading(sample_index, None) as reader:
        out = check_answer(reader, f"{quote} {paraphrase}", cfg, engine)
    assert out.checked == 2 and out.quoted == 1 and out.kept >= 1
    assert asked and all(a.startswith("Dr. Imogen Vale, the plant's commissioning manager") for a in asked)
    assert out.answer.startswith("The commissioning team is led by Dr. Imogen Vale")


def test_a_quote_across_a_page_break_stands_only_in_the_seam_of_its_two_units(sample_index):
    """The one quote the check cannot see before the judge reads: cut by a page break, it stands in
    neither unit alone, only in their seam (the judge's seam evidence)."""
    from types import SimpleNamespace

    from provrag.query.resolve import seam_text
    from provrag.store.reader import reading
    from provrag.store.units import fetch_units
    from provrag.verify.answer_check import quotes_across_a_seam, stands_in_a_cited_unit

    with reading(sample_index, None) as reader:
        rows = reader.con.execute("SELECT id, document_id, char_start, length(text) FROM text_units "
                                  "ORDER BY document_id, char_start").fetchall()
        a, b = next((x[0], y[0]) for x, y in zip(rows, rows[1:]) if x[1] == y[1] and y[2] >= x[2] + x[3])
        units = fetch_units(reader, [a, b])
        text, cut, *_ = seam_text(units[a], units[b])
        before, after = text[:cut].split()[-6:], text[cut:].split()[:6]
        cited = [("Sources", 1, [(a, ""), (b, "")])]
        assert stands_in_a_cited_unit(reader, " ".join(before), cited)
        assert not stands_in_a_cited_unit(reader, " ".join(before + after), cited)
        seam = SimpleNamespace(cited=[SimpleNamespace(text_unit_ids=[a, b])])
        assert quotes_across_a_seam(reader, " ".join(before + after), seam)
        assert not quotes_across_a_seam(reader, " ".join(before + after), SimpleNamespace(
            cited=[SimpleNamespace(text_unit_ids=None), SimpleNamespace(text_unit_ids=None)]))


def test_an_answer_whose_citations_reach_nothing_becomes_the_abstention(sample_index):
    from provrag.engines import get_engine
    from provrag.store.reader import reading
    from provrag.verify.answer_check import check_answer

    cfg = load_config()
    with reading(sample_index, None) as reader:
        out = check_answer(reader, "Dr. Imogen Vale leads the commissioning team. [Data: Sources (90001)]", cfg,
                           get_engine(cfg))
    assert out.emptied and out.removed[0]["reason"] == "its citations reach no text in the index"


def test_ask_json_lists_removed_sentences_and_raw_shows_the_unchecked_answer(sample_index, provrag_cli):
    """`--json` keeps the contract's keys first and adds the check's after them; `--raw` skips the check."""
    q = "Who leads the Halcyon commissioning team?"
    runs = {}
    for flag in ([], ["--raw"]):
        p = subprocess.run([*provrag_cli, "ask", q, "--index", str(sample_index), "--json", *flag],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-400:]
        runs[bool(flag)] = json.loads(p.stdout)
    checked, raw = runs[False], runs[True]
    assert list(checked)[:12] == ["trace_id", "question", "method", "answer", "abstained", "confidence",
                                  "index_version", "citations", "sources", "unresolved", "error", "abstained_by"]
    assert {"checked", "removed_sentences", "raw_answer"} <= set(checked)
    assert checked["checked"] is True and raw["checked"] is False
    assert raw["answer"] == raw["raw_answer"] and raw["removed_sentences"] == []
    trace = json.loads(subprocess.run([*provrag_cli, "trace", checked["trace_id"], "--index", str(sample_index),
                                       "--format", "json"], capture_output=True, text=True, timeout=120).stdout)
    assert "removed_sentences" in trace and any(s["name"] == "check" for s in trace["stages"])


def test_how_do_i_steps_stop_at_the_faq_s_next_question(small_index):
    """R-FAQ 5.1.x answers "how to install add-on packages" with a pointer; the steps that follow it
    in the unit belong to the next entry ("8.5 How can I debug S4 methods?"), not to this answer."""
    res = run_ask("How do I install add-on packages in R?", small_index, load_config(), save=False)
    # R-FAQ answers it twice, both fine: the pointer to "Add-on packages" in R Installation and
    # Administration (5.1.x), and 5.2's `R CMD INSTALL`; the reader scores them within 0.01
    assert "Add-on packages" in res.answer or "R CMD INSTALL" in res.answer, res.answer
    assert "debug S4" not in res.answer and "trace() function" not in res.answer


# ---- the order of the passages the reader reads (issue 26): the first `reader_passages` retrieved
# passages by reciprocal rank fusion of retrieval's rank and the passage head's
# (engines/offline/answer/reading.rank_passages), the head's most relevant first, not the head alone

def _reading(res) -> dict:
    """The kept attempt's reading (what the offline engine read, in the trace)."""
    for stage in res.trace.get("stages") or []:
        if stage.get("name") == "synthesis" and (stage.get("data") or {}).get("extract"):
            return stage["data"]["extract"]
    return {}


def test_the_page_retrieval_ranks_first_is_read_though_the_head_ranks_it_lower(small_index):
    """R-FAQ.pdf p. 7 (§2.1): "R was initially written by Ross Ihaka and Robert Gentleman at the
    Department of Statistics of the University of Auckland …". The passage head alone put that
    passage below three others about R's manuals and extensions, so its sentence was never read
    and the answer led with "'Writing R Extensions' … describes the process of creating R add-on
    packages" (p. 11)."""
    res = run_ask("Who originally wrote R, and where?", small_index, load_config(), save=False)
    assert not res.abstained, res.trace.get("attempts")
    assert res.sources[0].path.endswith("R-FAQ.pdf") and res.sources[0].page_start == 7, res.sources[0]
    lead = re.split(r"\s*\[Data:", res.answer, maxsplit=1)[0]
    assert "Ross Ihaka and Robert Gentleman" in lead, res.answer


def test_the_fused_order_keeps_every_passage_and_the_heads_own_order_for_the_closest(small_index):
    """The fusion re-orders what is read, it drops nothing: every retrieved passage is in the read
    order once. The head's own order (its probabilities, best first) stays what an abstention
    lists as its closest passages and what the trace shows as `passages`."""
    cfg = load_config()
    res = run_ask("Who originally wrote R, and where?", small_index, cfg, save=False)
    info = _reading(res)
    read_order, by_head = info.get("read_order") or [], info.get("passage_order") or []
    assert sorted(read_order) == sorted(by_head) == list(range(len(read_order)))
    assert len(read_order) >= cfg.search.reader_passages
    probs = [p["prob"] for p in info.get("passages") or []]
    assert len(probs) == cfg.search.reader_passages and probs == sorted(probs, reverse=True)
    assert [p["record"] for p in info["passages"]] == by_head[:len(probs)]
    assert read_order != by_head, "the fused order equals the head's alone on this question"
