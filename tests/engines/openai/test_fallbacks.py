"""The `openai` engine against the replies real small models and local servers send (issue 16):
read generously, validated strictly, and an item the model still fails on made by the offline
engine and counted — by_model / fallback / failed per stage, and one warning line naming the
likely cause when most of a stage fell back.

The scripted server (tests/llm_server.py) is told to misbehave as SmolLM2-135M behind
llama-cpp-python's server did (tests/llm_faults.py); the inputs are real passages of ../shared.
"""
from __future__ import annotations

import pytest

from provrag.config import load_config
from provrag.engines import get_engine
from provrag.engines.openai import records, replies
from provrag.engines.openai.endpoint import RequestTimer, concurrency_for
from tests.engines.openai.test_openai_engine import _context, make_cfg, paragraphs, srv  # noqa: F401 (fixtures)

OFFLINE = load_config()


def always(server, **faults) -> None:
    server.state.always.update(faults)


def counts(eng, stage: str) -> dict:
    return eng.usage.stages()[stage]


# ------------------------------------------------------------------ extraction

@pytest.mark.parametrize("fault", ["json", "table"])
def test_extraction_as_json_or_a_markdown_table_is_read(srv, paragraphs, fault):
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:3])]
    plain = get_engine(make_cfg(srv)).extract_graph(units)
    srv.reset()
    always(srv, extract=fault)
    eng = get_engine(make_cfg(srv))
    got = eng.extract_graph(units)
    assert [{e["title"] for e in g["entities"]} for g in got] == [{e["title"] for e in g["entities"]} for g in plain]
    assert all(g["entities"] for g in got)
    if fault == "json":  # a JSON reply carries the relationships too
        assert [len(g["relationships"]) for g in got] == [len(g["relationships"]) for g in plain]
    assert counts(eng, "extract") == {"by_model": 3, "fallback": 0, "failed": 0}
    assert "repair" not in srv.stats()["by_kind"]  # read as sent: no repair request


def test_records_copied_from_the_template_are_repaired_then_fall_back(srv, paragraphs):
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:3])]
    eng = get_engine(make_cfg(srv))
    srv.fail_next({"fault": "placeholder", "kind": "extract"})  # once: the repair request gets real records
    assert eng.extract_graph(units[:1])[0]["entities"]
    assert counts(eng, "extract")["by_model"] == 1 and srv.stats()["by_kind"]["repair"] == 1
    srv.reset()
    always(srv, extract="placeholder")  # a model that only ever copies the template
    eng = get_engine(make_cfg(srv))
    got = eng.extract_graph(units)
    assert got == get_engine(OFFLINE).extract_graph(units) and all(g["entities"] for g in got)
    assert all("NAME" not in {e["title"] for e in g["entities"]} for g in got)
    assert counts(eng, "extract") == {"by_model": 0, "fallback": 3, "failed": 0}
    assert eng.usage.warnings() == ["extract: 3 of 3 items fell back to the offline engine; likely cause: model too "
                                    "small: its replies were not in the required format even after a repair request"]


def test_a_step_failed_give_up_after_times_in_a_row_stops_asking(srv, paragraphs):
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:6])]
    always(srv, extract="placeholder", repair="placeholder")  # every reply and every repair unusable
    eng = get_engine(make_cfg(srv, {"concurrency": 1, "give_up_after": 3}))
    got = eng.extract_graph(units)
    assert got == get_engine(OFFLINE).extract_graph(units)  # every unit still made, by the offline engine
    assert srv.stats()["requests"] == 3 * 2  # three units asked (each with its repair), three not asked
    usage = eng.usage.to_dict()
    assert usage["by_stage"]["extract"]["not_asked"] == 3 and counts(eng, "extract")["fallback"] == 6
    (line,) = eng.usage.warnings()
    assert line.startswith("extract: 6 of 6 items fell back to the offline engine (3 not asked") and "too small" in line
    assert sum("give_up_after = 3" in e for e in usage["errors"]) == 1  # said once, not per skipped unit
    srv.reset()
    always(srv, extract="placeholder", repair="placeholder")
    eng = get_engine(make_cfg(srv, {"concurrency": 1, "give_up_after": 0}))  # 0: always ask
    eng.extract_graph(units)
    assert srv.stats()["requests"] == 6 * 2 and eng.usage.to_dict()["by_stage"]["extract"]["not_asked"] == 0


def test_an_item_the_model_makes_restarts_the_count(srv, paragraphs):
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:5])]
    srv.fail_next(*[{"fault": "placeholder", "kind": k} for k in ("extract", "repair") * 2])  # u0 and u1 fail
    eng = get_engine(make_cfg(srv, {"concurrency": 1, "give_up_after": 3}))
    eng.extract_graph(units)  # u2 is the model's: the two failures before it no longer count
    assert counts(eng, "extract") == {"by_model": 3, "fallback": 2, "failed": 0}
    assert eng.usage.to_dict()["by_stage"]["extract"]["not_asked"] == 0


def test_a_stage_where_few_items_fell_back_has_no_warning(srv, paragraphs):
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:4])]
    srv.fail_next({"fault": "placeholder", "kind": "extract"}, {"fault": "placeholder", "kind": "repair"})
    eng = get_engine(make_cfg(srv, {"concurrency": 1}))
    got = eng.extract_graph(units)
    assert got[0] == get_engine(OFFLINE).extract_graph(units)[0]  # the one failed unit, from the offline batch
    assert counts(eng, "extract") == {"by_model": 3, "fallback": 1, "failed": 0}
    assert eng.usage.warnings() == [] and eng.usage.to_dict()["fallback"] == 1


def test_a_looping_reply_is_cut_at_max_tokens_and_its_records_read(srv, paragraphs):
    always(srv, extract="loop")
    eng = get_engine(make_cfg(srv, {"max_tokens_by_step": {"extract": 400}}))
    got = eng.extract_graph([("u0", paragraphs[0])])[0]
    assert len(got["entities"]) == 1 and got["entities"][0]["title"] in paragraphs[0].upper()
    st = srv.stats()
    assert st["requests"] == 1 and st["max_tokens"]["extract"] == 400  # a loop is not asked again
    assert counts(eng, "extract") == {"by_model": 1, "fallback": 0, "failed": 0}
    assert any("repeats itself" in e and "complete part is read" in e for e in eng.usage.errors)


def test_a_cut_reply_is_asked_once_more_with_twice_the_budget(srv, paragraphs):
    eng = get_engine(make_cfg(srv, {"max_tokens_by_step": {"extract": 40}}))
    got = eng.extract_graph([("u0", paragraphs[0])])[0]  # records longer than 40 and 80 tokens: cut twice
    assert got["entities"] and all(e["title"] in paragraphs[0].upper() for e in got["entities"])
    assert srv.stats()["requests"] == 2 and srv.stats()["max_tokens"]["extract"] == 80
    assert counts(eng, "extract")["by_model"] == 1
    assert any("and again with max_tokens=80" in e for e in eng.usage.errors)
    srv.reset()
    always(srv, report="loop")  # a looping JSON reply: its complete part is no report
    ctx = _context(get_engine(make_cfg(srv)), paragraphs)
    srv.reset()
    always(srv, report="loop")
    eng = get_engine(make_cfg(srv, {"max_tokens_by_step": {"report": 300}}))
    assert eng.community_report(ctx) == get_engine(OFFLINE).community_report(ctx)
    # cut inside its first copy (no visible loop yet): asked once more with twice the budget, never repaired
    assert srv.stats()["by_kind"] == {"report": 2} and srv.stats()["max_tokens"]["report"] == 600
    (line,) = eng.usage.warnings()
    assert "replies cut at max_tokens (finish_reason=length): raise [llm.max_tokens_by_step] report" in line
    eng.community_report(ctx)
    eng.community_report(ctx)  # twice the budget never helped this step: the third report is not asked twice
    assert srv.stats()["by_kind"] == {"report": 2 + 2 + 1}
    assert counts(eng, "report") == {"by_model": 0, "fallback": 3, "failed": 0}
    assert "has not helped this step" in eng.usage.errors[-2]


def test_parse_extraction_keeps_only_names_of_the_passage():
    passage = "Abraham Lincoln sent his annual message to Congress in December."
    reply = ('("entity"<|>ABRAHAM LINCOLN<|>PERSON<|>the president)\n'
             '("entity"<|>NAPOLEON<|>PERSON<|>not in the passage)\n'
             '("relationship"<|>ABRAHAM LINCOLN<|>NAPOLEON<|>made up<|>3)\n'
             '("relationship"<|>ABRAHAM LINCOLN<|>CONGRESS<|>wrote to<|>7)\n<|COMPLETE|>')
    g = records.parse_extraction(reply, passage)
    assert [e["title"] for e in g["entities"]] == ["ABRAHAM LINCOLN", "CONGRESS"]
    assert [(r["source"], r["target"]) for r in g["relationships"]] == [("ABRAHAM LINCOLN", "CONGRESS")]
    with pytest.raises(ValueError, match="occurs in the passage"):
        records.parse_extraction('("entity"<|>NAPOLEON<|>PERSON<|>x)', passage)
    table = "| Name | Type | Description |\n|---|---|---|\n| Abraham Lincoln | person | the president |\n"
    assert records.parse_extraction(table, passage)["entities"][0] == {
        "title": "ABRAHAM LINCOLN", "type": "PERSON", "description": "the president"}


def test_a_summary_must_be_made_of_its_descriptions():
    descs = ["Lincoln sent the annual message to Congress in December 1863.",
             "Lincoln reported that the treaty with Great Britain against the slave trade was ratified."]
    merged = "Lincoln sent Congress his December 1863 message, reporting the ratified slave trade treaty with Britain."
    assert replies.parse_summary(merged, ["LINCOLN"] + descs) == merged
    with pytest.raises(ValueError, match="uses words the descriptions do not"):
        replies.parse_summary("The United States has a unique and complex relationship with the European Union, "
                              "which is often referred to as the EU.", ["LINCOLN"] + descs)


# ------------------------------------------------------------------ judge

@pytest.mark.parametrize("fault", ["synonyms", "keyed"])
def test_judge_label_synonyms_and_verdicts_keyed_by_span_are_read(srv, paragraphs, fault):
    claim = paragraphs[3].split(". ")[0]
    plain = get_engine(make_cfg(srv)).judge(claim, paragraphs[:4])
    srv.reset()
    always(srv, judge=fault)
    eng = get_engine(make_cfg(srv))
    got = eng.judge(claim, paragraphs[:4])
    assert [v.label for v in got] == [v.label for v in plain] and got[3].label == "supported"
    assert counts(eng, "judge") == {"by_model": 4, "fallback": 0, "failed": 0}
    assert srv.stats()["requests"] == 1


def test_a_verdict_for_a_span_the_prompt_did_not_show_is_never_accepted(srv, paragraphs):
    claim = paragraphs[3].split(". ")[0]
    always(srv, judge="badspan")
    eng = get_engine(make_cfg(srv))
    got = eng.judge(claim, paragraphs[:3])
    assert all(v.reason.startswith("offline judge") for v in got) and len(got) == 3
    assert counts(eng, "judge") == {"by_model": 0, "fallback": 3, "failed": 0}
    assert "there is no span 4" in eng.usage.errors[0]


def test_parse_judge_reads_generously_and_validates_strictly():
    assert replies.judge_label("Supports") == "supported" and replies.judge_label("NOT_SUPPORTED") == "unsupported"
    assert replies.judge_label("Refutes.") == "contradicted" and replies.judge_label("Not enough info") == "unsupported"
    assert replies.judge_label("maybe") is None
    got = replies.parse_judge('{"verdicts": {"span 2": "entailed", "1": {"verdict": "false", "confidence": 0.7}}}', 2)
    assert [(v["label"], v["score"]) for v in got] == [("contradicted", 0.7), ("supported", 1.0)]
    got = replies.parse_judge('{"verdicts": [{"label": "true"}, {"label": "neutral"}]}', 2)  # unnumbered, in order
    assert [v["label"] for v in got] == ["supported", "unsupported"]
    for bad, why in [('{"verdicts": [{"span": 0, "label": "true"}]}', "no span 0"),
                     ('{"verdicts": [{"span": 1, "label": "true"}]}', r"span\(s\) \[2\]"),
                     ('{"verdicts": [{"label": "true"}]}', "needs an integer"),
                     ('{"verdicts": {"x": "true"}}', "keyed by span number")]:
        with pytest.raises(ValueError, match=why):
            replies.parse_judge(bad, 2)


# ------------------------------------------------------------------ answers, map, reduce, reports

def _records_ctx(paragraphs):
    return [{"citation": "[Data: Sources (3)]", "text": paragraphs[0]},
            {"citation": "[Data: Sources (9)]", "text": paragraphs[1]}]


def test_an_answer_citing_a_record_it_was_not_shown_is_repaired_or_falls_back(srv, paragraphs):
    q = "What did the message say about harvests?"
    eng = get_engine(make_cfg(srv))
    srv.fail_next({"fault": "invented", "kind": "answer"})
    ans = eng.answer(q, _records_ctx(paragraphs))
    assert "[Data: Sources (3)]" in ans.text and "90001" not in ans.text  # the repair request's answer
    assert srv.stats()["by_kind"]["repair"] == 1 and counts(eng, "answer")["by_model"] == 1
    always(srv, answer="invented")
    eng = get_engine(make_cfg(srv))
    ans = eng.answer(q, _records_ctx(paragraphs))
    assert ans.text == get_engine(OFFLINE).answer(q, _records_ctx(paragraphs)).text and "90001" not in ans.text
    assert "Sources (90001)" in ans.details["fallback"]
    assert counts(eng, "answer") == {"by_model": 0, "fallback": 1, "failed": 0}


def test_an_uncited_answer_is_an_abstention_not_an_answer_without_sources(srv, paragraphs):
    always(srv, answer="uncited")
    eng = get_engine(make_cfg(srv))
    ans = eng.answer("What did the message say about harvests?", _records_ctx(paragraphs))
    assert ans.abstained and "[Data:" not in ans.text and "cites none" in ans.details["why"]
    assert counts(eng, "answer") == {"by_model": 1, "fallback": 0, "failed": 0}


def test_map_and_reduce_cite_only_the_reports_they_were_given(srv, paragraphs):
    q = "What did the message say about harvests?"
    batch = [{"community": 11, "title": "Message", "summary": "", "rank": 5.0, "full_content": paragraphs[0]}]
    always(srv, map="invented")
    eng = get_engine(make_cfg(srv))
    points = eng.map_points(q, batch)
    assert points == get_engine(OFFLINE).map_points(q, batch) and points
    assert counts(eng, "map") == {"by_model": 0, "fallback": 1, "failed": 0}
    srv.reset()
    always(srv, reduce="invented")
    answer = eng.reduce_answer(q, points)
    assert answer == get_engine(OFFLINE).reduce_answer(q, points) and "90001" not in answer
    assert counts(eng, "reduce")["fallback"] == 1
    with pytest.raises(ValueError, match="must end with"):
        replies.parse_map('{"points": [{"description": "uncited", "score": 50}]}', {11})


def test_a_report_citing_rows_it_was_not_shown_falls_back_and_is_counted(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    ctx = _context(eng, paragraphs)
    srv.reset()
    always(srv, report="invented")
    eng = get_engine(make_cfg(srv))
    rep = eng.community_report(ctx)
    assert rep == get_engine(OFFLINE).community_report(ctx)
    assert "Entities (90001)" in eng.usage.errors[0]
    assert counts(eng, "report") == {"by_model": 0, "fallback": 1, "failed": 0}


def test_a_context_too_short_fails_the_request_and_the_warning_says_so(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    ctx = _context(eng, paragraphs)
    srv.reset()
    srv.state.context = 300  # a server started with a small context: every report prompt is longer
    eng = get_engine(make_cfg(srv))
    eng.community_report(ctx)
    eng.community_report(ctx)
    assert counts(eng, "report") == {"by_model": 0, "fallback": 2, "failed": 0}
    assert eng.client.json_mode is True and srv.stats()["requests"] == 2  # not retried, JSON mode kept
    (line,) = eng.usage.warnings()
    assert line.startswith("report: 2 of 2 items fell back") and "context too short" in line
    assert "max_context_tokens" in line


def test_every_request_has_its_steps_reply_budget(srv, paragraphs):
    eng = get_engine(make_cfg(srv, {"max_tokens_by_step": {"summarize": 111, "judge": 222}}))
    eng.extract_graph([("u0", paragraphs[0])])
    eng.summarize_descriptions("X", ["One fact.", "Another fact."])
    eng.judge(paragraphs[0].split(". ")[0], paragraphs[:2])
    assert srv.stats()["max_tokens"] == {"extract": 1500, "summarize": 111, "judge": 222}
    srv.reset()
    eng = get_engine(make_cfg(srv, {"max_tokens": 99}))  # one budget for every step
    eng.summarize_descriptions("X", ["One fact.", "Another fact."])
    assert srv.stats()["max_tokens"] == {"summarize": 99}


# ------------------------------------------------------------------ local-server defaults

def test_concurrency_and_timeouts_default_to_what_a_local_server_takes():
    assert concurrency_for(0, "") == concurrency_for(0, "https://api.openai.com/v1") == 4
    assert concurrency_for(0, "https://me.openai.azure.com/openai/v1/") == 4
    assert concurrency_for(0, "http://localhost:11434/v1") == concurrency_for(0, "http://gpu-box:8000/v1") == 1
    assert concurrency_for(3, "http://localhost:11434/v1") == 3
    assert RequestTimer(45, "http://localhost:8080/v1").seconds(1000) == 45  # set by the user: kept
    assert RequestTimer(0, "").seconds(1000) == 120
    local = RequestTimer(0, "http://localhost:8080/v1")
    assert local.seconds(1000) == 600  # nothing timed yet
    local.record(400, 20.0)  # 20 tokens/s measured
    assert local.tokens_per_second() == 20
    assert local.seconds(1000) == 3 * 1000 / 20 + 30
    assert local.seconds(10) == 60 and local.seconds(100_000) == 1800
    cfg = load_config(None, {"llm": {"engine": "openai", "base_url": "http://localhost:8080/v1"}})
    assert get_engine(cfg).client.concurrency == 1


def test_a_model_that_finds_no_answer_says_so_and_not_with_the_retrieval_confidence(srv, squad_subset_index):
    """Retrieval covers the question (confidence above the threshold), the model's answer cites
    nothing: the ask is an abstention by the engine, and the view does not print the retrieval's
    high confidence beside "nothing answers" as if it were the answer's."""
    from provrag.pipelines.ask import run_ask
    from provrag.query.context import ABSTENTION
    from provrag.views.ask import ask_view
    from tests.views.test_render import _render

    always(srv, answer="uncited")
    res = run_ask("When did the oil embargo end?", squad_subset_index, make_cfg(srv), method="basic", save=False)
    assert res.answer == ABSTENTION and res.abstained and res.abstained_by == "engine"
    assert res.confidence >= float(make_cfg(srv).search.abstain_below)  # the evidence covered the question
    assert res.to_json()["abstained_by"] == "engine" and res.trace["abstained_by"] == "engine"
    title = _render(ask_view(res), 200).splitlines()[0]
    assert "no answer in passages covering it" in title and f"confidence {res.confidence:.2f}" not in title
    offline = run_ask("Who won the 2018 FIFA World Cup?", squad_subset_index, load_config(), method="basic", save=False)
    # too little evidence: no engine asked (the hand-set gate), or the learned reader found no answering sentence
    assert offline.abstained and offline.abstained_by in ("coverage", "reader")
