"""The `openai` engine against the scripted OpenAI-compatible server (tests/llm_server.py).

The real `openai` client talks HTTP to a server started in-process on a free port; the
server derives its answers from the prompts (names in the passage, entities of a report…),
counts what it saw, and injects faults on demand. Inputs are real text from ../shared.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

from provrag.config import load_config
from provrag.engines import get_engine
from provrag.engines.base import EngineAnswer
from provrag.engines.openai import index_prompts, prompts, query_prompts, records, replies
from provrag.engines.openai.endpoint import retry_after_seconds
from provrag.engines.openai.cost import full_extraction_estimate
from provrag.engines.openai.endpoint import LLMConfigError
from provrag.engines.openai.engine import CANNOT_ANSWER, OpenAIEngine
from provrag.errors import UsageError
from provrag.results import Verdict
from provrag.store.cache import Cache

KEY = "sk-provrag-test-Zq81-do-not-leak-7731"
KEY_ENV = "PROVRAG_TEST_LLM_KEY"


@pytest.fixture
def srv(scripted_llm_server, monkeypatch):
    """The module's scripted server, reset (no faults, no delay, counts at zero), with the key set."""
    server = scripted_llm_server
    server.reset()
    server.state.delay = 0.0
    monkeypatch.setenv(KEY_ENV, KEY)
    return server


def make_cfg(srv, llm: dict | None = None, **sections) -> dict:
    base = {"engine": "openai", "base_url": srv.url if srv else "", "model": "scripted", "api_key_env": KEY_ENV,
            "backoff_seconds": 0.01, "timeout": 5, "max_retries": 2, "concurrency": 4}
    return load_config(None, {"llm": {**base, **(llm or {})}, **sections})


@pytest.fixture(scope="module")
def paragraphs(small_corpus) -> list[str]:
    """Real passages: Lincoln's 1863 message (one long line) cut at sentence ends into ~1,200 characters."""
    import re

    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    paras, cur = [], ""
    for sent in re.split(r"(?<=[.!?])\s+", text):
        cur = f"{cur} {sent}".strip()
        if len(cur) > 1200:
            paras.append(cur)
            cur = ""
    return paras[:12]


def totals(srv) -> dict:
    return srv.stats()


# ------------------------------------------------------------------ shapes and counts

def test_extraction_shapes_and_counts_match_the_server(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    assert isinstance(eng, OpenAIEngine)
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:4])]
    out = eng.extract_graph(units)
    assert len(out) == 4
    assert any(r["entities"] for r in out)
    for (_, text), r in zip(units, out):
        titles = {e["title"] for e in r["entities"]}
        for e in r["entities"]:
            assert set(e) == {"title", "type", "description"}
            assert e["title"] == e["title"].upper() and e["title"] in text.upper()  # a name of THIS passage
        for rel in r["relationships"]:
            assert {"source", "target", "description", "weight"} <= set(rel)
            assert rel["source"] in titles and rel["target"] in titles
            assert isinstance(rel["weight"], float)
    st, u = totals(srv), eng.usage.to_dict()
    assert u["calls"] == st["requests"] == 4, (u, st)
    assert u["by_stage"]["extract"]["calls"] == 4
    assert u["input_tokens"] == st["prompt_tokens"] > 0
    assert u["output_tokens"] == st["completion_tokens"] > 0
    assert u["failed"] == 0 and u["cached"] == 0


def test_gleaning_finds_what_the_first_round_missed(srv, paragraphs):
    # the scripted model reports six names per passage, the rest only when asked again
    rich = max(paragraphs, key=lambda p: sum(1 for w in p.split() if w[:1].isupper()))
    once = get_engine(make_cfg(srv, extract={"gleanings": 0})).extract_graph([("u", rich)])[0]
    srv.reset()
    eng = get_engine(make_cfg(srv, extract={"gleanings": 2}))
    glean = eng.extract_graph([("u", rich)])[0]
    assert len(once["entities"]) == 6
    assert len(glean["entities"]) > len(once["entities"])
    assert {e["title"] for e in once["entities"]} <= {e["title"] for e in glean["entities"]}
    kinds = totals(srv)["by_kind"]
    assert kinds["extract"] == 1 and kinds["glean"] >= 1
    assert eng.usage.stage("extract").calls == totals(srv)["requests"]


def _context(eng, paragraphs) -> dict:
    res = eng.extract_graph([("u0", paragraphs[0]), ("u1", paragraphs[1])])
    ents, rels = {}, []
    for r in res:
        for e in r["entities"]:
            ents.setdefault(e["title"], e)
        rels += r["relationships"]
    return {"community": 7, "level": 0,
            "entities": [{**e, "human_readable_id": i, "degree": sum(e["title"] in (r["source"], r["target"]) for r in rels)}
                         for i, e in enumerate(ents.values())],
            "relationships": [{**r, "human_readable_id": i} for i, r in enumerate(rels)],
            "text_units": [{"id": "u0", "text": paragraphs[0]}, {"id": "u1", "text": paragraphs[1]}]}


def test_report_has_graphrag_shape_and_cites_entities(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    ctx = _context(eng, paragraphs)
    rep = eng.community_report(ctx)
    assert set(rep) == {"title", "summary", "rating", "rating_explanation", "findings"}
    top = max(ctx["entities"], key=lambda e: e["degree"])["title"]
    assert top in rep["title"]  # derived from the entities it was given
    assert 0 <= rep["rating"] <= 10 and rep["summary"]
    assert 1 <= len(rep["findings"]) <= eng.cfg.reports.max_findings
    assert all("[Data: Entities (" in f["explanation"] for f in rep["findings"])
    assert eng.usage.stage("report").calls == 1


def test_map_reduce_answer_judge(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    reports = [{"community": 11, "title": "Foreign affairs", "summary": "", "rank": 6.0,
                "full_content": paragraphs[0]},
               {"community": 12, "title": "Unrelated", "summary": "", "rank": 1.0,
                "full_content": "Zebras graze quietly on savannah grasses."}]
    q = "What did the message say about " + " ".join(sorted(prompts_words(paragraphs[0]))[:3]) + "?"
    points = eng.map_points(q, reports)
    assert points and all(set(p) == {"description", "score"} for p in points)
    assert any("[Data: Reports (11)]" in p["description"] and p["score"] > 0 for p in points)
    assert not any("Reports (12)" in p["description"] for p in points)
    ans = eng.reduce_answer(q, points)
    assert "[Data: Reports (11)]" in ans
    calls = eng.usage.total().calls
    assert eng.reduce_answer(q, [{"description": "nothing", "score": 0}]) == CANNOT_ANSWER
    assert eng.usage.total().calls == calls  # GraphRAG's rule: all points 0 → no request
    ctx = [{"citation": "[Data: Sources (3)]", "text": paragraphs[0]},
           {"citation": "[Data: Sources (9)]", "text": "Zebras graze quietly on savannah grasses."}]
    a = eng.answer(q, ctx)
    assert isinstance(a, EngineAnswer)
    assert "[Data: Sources (3)]" in a.text and "Sources (9)" not in a.text
    assert a.records_used == [] and a.details == {}  # a model quotes no record whole: the citations say
    sent = paragraphs[0].split(". ")[0].rstrip(".") + "."
    neg = sent.replace(" is ", " is not ").replace(" has ", " has not ").replace(" have ", " have not ")
    verdicts = eng.judge(sent, [paragraphs[0], "Zebras graze quietly on savannah grasses.", neg])
    assert len(verdicts) == 3 and all(isinstance(v, Verdict) for v in verdicts)
    assert [v.label for v in verdicts][:2] == ["supported", "unsupported"]
    if neg != sent:
        assert verdicts[2].label == "contradicted"
    assert all(0 <= v.score <= 1 and isinstance(v.score, float) and v.reason for v in verdicts)
    assert all(v.span is None for v in verdicts)  # a model names no span: verify finds the best one
    assert verdicts[0].to_json()["span"] is None
    assert eng.summarize_descriptions("X", ["One fact.", "One fact.", "Another fact."]).count("fact") >= 2
    assert eng.summarize_descriptions("X", ["Only one."]) == "Only one."  # no request for one description
    st, u = totals(srv), eng.usage.to_dict()
    assert u["calls"] == st["requests"] and u["input_tokens"] == st["prompt_tokens"]
    assert set(u["by_stage"]) == {"map", "reduce", "answer", "judge", "summarize"}


def prompts_words(text: str) -> set[str]:
    from tests.llm_server import content_words

    return {w for w in content_words(text) if len(w) > 5}


def test_judge_batches_keep_one_verdict_per_span(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    spans = paragraphs[:10]
    v = eng.judge(paragraphs[3].split(". ")[0], spans)
    assert len(v) == 10 and v[3].label == "supported"
    assert sum(x.label == "supported" for x in v) < 10  # each span judged on its own
    assert eng.usage.stage("judge").calls == 2  # 8 spans per request


def test_a_failed_judge_request_falls_back_to_the_offline_judge_per_span(srv, paragraphs):
    claim = paragraphs[3].split(". ")[0]
    eng = get_engine(make_cfg(srv, {"max_retries": 0}))
    srv.fail_next({"fault": "500", "kind": "judge"})
    v = eng.judge(claim, paragraphs[:4])
    offline = get_engine(load_config()).judge(claim, paragraphs[:4])
    assert [(x.label, x.score, x.span) for x in v] == [(x.label, x.score, x.span) for x in offline]
    assert v[3].label == "supported"  # the span that states the claim, found by the offline judge
    assert all(x.reason.startswith("offline judge (the model's failed): ") for x in v)
    assert eng.usage.stages()["judge"] == {"by_model": 0, "fallback": 4, "failed": 0}  # items are spans
    strict = get_engine(make_cfg(srv, {"max_retries": 0, "strict": True}))
    srv.fail_next({"fault": "500", "kind": "judge"})
    assert strict.judge(claim, paragraphs[:3]) == [Verdict("unsupported", 0.0, "judge request failed", None)] * 3
    assert strict.usage.stages()["judge"] == {"by_model": 0, "fallback": 0, "failed": 3}


def test_a_failed_answer_request_gives_the_offline_answer_and_says_so(srv, paragraphs):
    q, ctx = "What did the message say about harvests?", [{"citation": "[Data: Sources (1)]", "text": paragraphs[0]}]
    eng = get_engine(make_cfg(srv, {"max_retries": 0}))
    srv.fail_next({"fault": "500", "kind": "answer"})
    a = eng.answer(q, ctx)
    assert a.text == get_engine(load_config()).answer(q, ctx).text and "[Data: Sources (1)]" in a.text
    assert "HTTP 500" in a.details["fallback"]
    assert eng.usage.stages()["answer"] == {"by_model": 0, "fallback": 1, "failed": 0}
    assert "HTTP 500" in eng.usage.errors[0] and "the offline engine made it" in eng.usage.errors[0]
    note = eng.usage.failure_note(("answer",))
    assert "HTTP 500" in note and "offline engine" in note
    strict = get_engine(make_cfg(srv, {"max_retries": 0, "strict": True}))
    srv.fail_next({"fault": "500", "kind": "answer"})
    assert strict.answer(q, ctx) == EngineAnswer("")
    assert strict.usage.stages()["answer"]["failed"] == 1 and "strict" in strict.usage.failure_note(("answer",))


def test_empty_entity_types_is_a_one_line_error_before_any_request(srv, paragraphs):
    from provrag.config import ConfigError

    # caught when the settings are read (every value is checked there), before any engine exists
    with pytest.raises(ConfigError, match="extract.entity_types"):
        make_cfg(srv, extract={"entity_types": []})
    assert totals(srv)["requests"] == 0


def test_extraction_asks_for_the_configured_entity_types(srv, paragraphs, tmp_path):
    from provrag.store.cache import key_of

    eng = get_engine(make_cfg(srv, extract={"entity_types": ["person", "treaty"]}))
    cache = Cache(tmp_path / "c")
    eng.attach_cache(cache)
    assert eng.extract_graph([("u", paragraphs[0])])[0]["entities"]
    asked = index_prompts.extract_messages(paragraphs[0], ["person", "treaty"])
    assert "Entity types to look for: PERSON, TREATY\n" in asked[1]["content"]
    # the reply is cached under the key of exactly this request: these messages, these parameters
    assert cache.get(key_of(eng.client.model, asked, eng.client.params("extract"))) is not None
    default = index_prompts.extract_messages(paragraphs[0], load_config().extract.entity_types)
    assert cache.get(key_of(eng.client.model, default, eng.client.params("extract"))) is None
    assert totals(srv)["by_kind"] == {"extract": 1}


# ------------------------------------------------------------------ cache

def test_second_run_with_the_same_cache_makes_zero_calls(srv, paragraphs, tmp_path):
    def run():
        eng = get_engine(make_cfg(srv, extract={"gleanings": 1}))
        eng.attach_cache(Cache(tmp_path / "cache", namespace="llm"))
        ex = eng.extract_graph([(f"u{i}", p) for i, p in enumerate(paragraphs[:3])])
        rep = eng.community_report(_context(eng, paragraphs))
        pts = eng.map_points("What about the treaty?", [{"community": 1, "title": "t", "full_content": paragraphs[2]}])
        return eng, (ex, rep, pts)

    srv.fail_next("malformed")  # a repaired reply must be reused too
    first, r1 = run()
    seen = totals(srv)["requests"]
    assert first.usage.total().calls == seen > 0
    second, r2 = run()
    assert totals(srv)["requests"] == seen  # nothing sent
    assert second.usage.total().calls == 0 and second.usage.total().cached > 0
    assert r1 == r2
    # a changed input is asked again: only the new request goes out
    third = get_engine(make_cfg(srv))
    third.attach_cache(Cache(tmp_path / "cache", namespace="llm"))
    third.extract_graph([("new", paragraphs[5])])
    assert totals(srv)["requests"] == seen + 1


def test_failed_items_are_not_cached_and_are_asked_again(srv, paragraphs, tmp_path):
    cache = Cache(tmp_path / "c")
    eng = get_engine(make_cfg(srv, {"max_retries": 0}))
    eng.attach_cache(cache)
    srv.fail_next("500")
    offline = get_engine(load_config()).extract_graph([("u", paragraphs[0])])[0]
    assert eng.extract_graph([("u", paragraphs[0])])[0] == offline and offline["entities"]
    assert eng.usage.stages()["extract"] == {"by_model": 0, "fallback": 1, "failed": 0}
    again = get_engine(make_cfg(srv))
    again.attach_cache(cache)
    assert again.extract_graph([("u", paragraphs[0])])[0]["entities"]
    assert again.usage.stage("extract").calls == 1


# ------------------------------------------------------------------ faults

@pytest.mark.parametrize("fault", ["429", "500", "503", "timeout", "truncated", "badbody", "malformed"])
def test_each_fault_is_survived_and_recorded(srv, paragraphs, fault):
    eng = get_engine(make_cfg(srv, {"timeout": 0.5}))
    ctx = _context(eng, paragraphs)
    clean = eng.community_report(ctx)
    srv.reset()
    eng = get_engine(make_cfg(srv, {"timeout": 0.5}))
    srv.fail_next(fault, retry_after=0.4, timeout_sleep=1.0)
    t0 = time.monotonic()
    rep = eng.community_report(ctx)
    took = time.monotonic() - t0
    assert rep == clean  # the retry (or the repair request) got the real report
    u = eng.usage.to_dict()
    assert u["calls"] == totals(srv)["requests"] == 2  # the failed attempt is counted: the server saw it
    assert u["failed"] == 0
    assert any("recovered" in e for e in u["errors"]), u["errors"]
    if fault == "429":
        assert took >= 0.4  # Retry-After honoured
        assert "429" in u["errors"][0]
    if fault == "malformed":
        assert totals(srv)["by_kind"].get("repair") == 1


def test_a_server_rejecting_json_mode_is_asked_without_it(srv, paragraphs):
    eng = get_engine(make_cfg(srv))
    ctx = _context(eng, paragraphs)
    srv.reset()
    srv.fail_next({"fault": "400json", "kind": "report"})
    rep = eng.community_report(ctx)
    assert rep["findings"] and eng.usage.stages()["report"] == {"by_model": 1, "fallback": 0, "failed": 0}
    assert eng.client.json_mode is False and "json_mode turned off" in eng.usage.errors[-1]
    assert eng.usage.stage("report").calls == totals(srv)["requests"] == 2


@pytest.mark.parametrize("fault", ["400", "overlong"])
def test_any_other_400_fails_that_request_only_and_keeps_json_mode(srv, paragraphs, fault):
    eng = get_engine(make_cfg(srv))
    ctx = _context(eng, paragraphs)
    srv.reset()
    srv.fail_next({"fault": fault, "kind": "report"})
    rep = eng.community_report(ctx)
    assert rep == get_engine(load_config()).community_report(ctx)  # the offline report stands in
    assert eng.client.json_mode is True and totals(srv)["requests"] == 1  # a 400 is not retried
    assert eng.usage.stages()["report"] == {"by_model": 0, "fallback": 1, "failed": 0}
    assert eng.community_report(ctx)["findings"] and eng.usage.stage("report").by_model == 1
    assert "HTTP 400" in eng.usage.errors[0]


def test_persistent_failure_is_recorded_and_the_run_goes_on(srv, paragraphs):
    eng = get_engine(make_cfg(srv, {"max_retries": 2}))
    ctx = _context(eng, paragraphs)
    srv.reset()
    eng = get_engine(make_cfg(srv, {"max_retries": 2}))
    srv.fail_next("500", "500", "500")
    rep = eng.community_report(ctx)
    assert rep == get_engine(load_config()).community_report(ctx) and rep["findings"]  # the offline report
    u = eng.usage.to_dict()
    assert u["failed"] == 0 and u["fallback"] == 1 and u["calls"] == 3 == totals(srv)["requests"]
    assert "HTTP 500" in u["errors"][0] and "after 3 attempts" in u["errors"][0]
    assert eng.community_report(ctx)["findings"]  # next item: the server is back
    assert eng.usage.stages()["report"] == {"by_model": 1, "fallback": 1, "failed": 0}
    srv.fail_next("malformed", "malformed")
    batch = [{"community": 1, "title": "t", "full_content": paragraphs[0]}]
    points = eng.map_points("What did the treaty say?", batch)
    assert points == get_engine(load_config()).map_points("What did the treaty say?", batch)
    assert eng.usage.stage("map").fallback == 1
    assert "after one repair" in eng.usage.errors[-1]
    strict = get_engine(make_cfg(srv, {"max_retries": 2, "strict": True}))
    srv.fail_next("500", "500", "500")
    rep = strict.community_report(ctx)
    assert rep["findings"] == [] and rep["summary"] == "" and rep["rating"] == 0.0  # strict: the safe empty report
    assert strict.usage.to_dict()["failed"] == 1


def test_connection_refused_fails_fast_and_is_recorded(monkeypatch, paragraphs):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    monkeypatch.setenv(KEY_ENV, KEY)
    cfg = load_config(None, {"llm": {"engine": "openai", "base_url": f"http://127.0.0.1:{port}/v1",
                                     "api_key_env": KEY_ENV, "backoff_seconds": 0.05, "max_retries": 3,
                                     "concurrency": 1}})
    eng = get_engine(cfg)
    units = [(f"u{i}", p) for i, p in enumerate(paragraphs[:6])]
    out = eng.extract_graph(units)  # how fast it gives up is bench/client_timing.py's (wall clock, not here)
    assert out == get_engine(load_config()).extract_graph(units)  # every unit by the offline extractor
    u = eng.usage.to_dict()
    assert u["fallback"] == 6 and u["failed"] == 0 and u["calls"] == 0  # nothing reached a server
    assert "connection failed" in u["errors"][0] and "after 4 attempts" in u["errors"][0]
    assert "after 1 attempt" in u["errors"][-1]  # later items stop backing off against a dead server
    # five failures in a row ([llm] give_up_after = 5): the sixth unit is not asked at all
    assert u["by_stage"]["extract"]["not_asked"] == 1
    assert u["warnings"] == ["extract: 6 of 6 items fell back to the offline engine (1 not asked: the model "
                             "failed the ones before in a row, [llm] give_up_after); likely cause: the server "
                             "could not be reached ([llm] base_url)"]
    strict = get_engine(cfg.replace("llm", strict=True))
    assert strict.community_report({"community": 1, "entities": [], "relationships": []})["title"] == "Community 1"


def test_rate_limit_and_concurrency(srv, paragraphs):
    """[llm] concurrency: requests overlap, never more than that many at once (the server counts
    them in flight; the speed-up itself is measured in bench/client_timing.py)."""
    srv.reset()
    srv.state.delay = 0.25  # each request held long enough for the next ones to arrive meanwhile
    eng = get_engine(make_cfg(srv, {"concurrency": 4}))
    eng.extract_graph([(f"u{i}", p) for i, p in enumerate(paragraphs[:8])])
    assert 1 < totals(srv)["max_in_flight"] <= 4, totals(srv)  # overlapped, within the bound
    srv.reset()
    eng = get_engine(make_cfg(srv, {"concurrency": 1}))
    eng.extract_graph([(f"u{i}", p) for i, p in enumerate(paragraphs[8:12])])
    assert totals(srv)["max_in_flight"] == 1 and totals(srv)["requests"] >= 4  # one at a time
    srv.state.delay = 0.0
    eng = get_engine(make_cfg(srv, {"requests_per_minute": 600, "concurrency": 4}))
    t0 = time.monotonic()
    eng.extract_graph([(f"u{i}", p) for i, p in enumerate(paragraphs[:5])])
    assert time.monotonic() - t0 >= 0.38  # 5 requests at ≤ 10/s: 4 intervals of 0.1 s


def test_retry_after_forms():
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    d = retry_after_seconds({"retry-after": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))})
    assert 25 < d <= 31
    assert retry_after_seconds(None) is None


# ------------------------------------------------------------------ the key

def test_key_never_appears_in_usage_errors_cache_or_repr(srv, paragraphs, tmp_path):
    eng = get_engine(make_cfg(srv, {"max_retries": 1}))
    eng.attach_cache(Cache(tmp_path / "cache"))
    eng.extract_graph([("u", paragraphs[0])])
    srv.fail_next("401echo")  # a provider that quotes the Authorization header back in its error
    eng.community_report(_context(eng, paragraphs))
    u = eng.usage.to_dict()
    assert any("401" in e for e in u["errors"])
    blob = json.dumps(u) + repr(eng) + repr(eng.client) + str(eng.__dict__)
    assert KEY not in blob and KEY[:20] not in blob
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for p in files:
        import gzip

        raw = p.read_bytes()
        assert KEY.encode() not in raw and KEY.encode() not in gzip.decompress(raw)


def test_missing_key_for_a_remote_server_is_a_one_line_error(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    cfg = load_config(None, {"llm": {"engine": "openai", "base_url": "", "api_key_env": KEY_ENV}})
    with pytest.raises(LLMConfigError) as e:
        get_engine(cfg)
    msg = str(e.value)
    assert KEY_ENV in msg and "\n" not in msg and isinstance(e.value, UsageError)
    cfg = load_config(None, {"llm": {"engine": "openai", "base_url": "https://example.invalid/v1", "api_key_env": KEY_ENV}})
    with pytest.raises(LLMConfigError):
        get_engine(cfg)
    # a local server needs no key; api_key_env = "" says a remote one needs none either
    get_engine(load_config(None, {"llm": {"engine": "openai", "base_url": "http://localhost:11434/v1",
                                          "api_key_env": KEY_ENV}}))
    get_engine(load_config(None, {"llm": {"engine": "openai", "base_url": "http://gpu-box:8000/v1", "api_key_env": ""}}))


# ------------------------------------------------------------------ embeddings

def test_openai_embedder_batches_caches_and_round_trips(srv, paragraphs, tmp_path):
    from provrag.embeddings import load_embedder, make_embedder

    cfg = make_cfg(srv, embeddings={"engine": "openai", "model": "scripted-embed", "api_key_env": KEY_ENV,
                                    "batch_size": 4})
    emb = make_embedder(cfg)
    emb.attach_cache(Cache(tmp_path / "c"))
    texts = paragraphs[:10]
    v = emb.fit(texts).embed(texts)
    assert v.shape == (10, 64) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    q = emb.embed([paragraphs[2][:300]])[0]
    assert int(np.argmax(v @ q)) == 2  # a passage's own opening finds it
    st = totals(srv)
    assert st["embeddings"] == 3 + 1 and emb.usage.stage("embed").calls == 4
    assert emb.usage.stage("embed").input_tokens == st["prompt_tokens"]
    assert np.allclose(emb.embed(texts), v)  # cached: nothing sent
    assert totals(srv)["embeddings"] == 4 and emb.usage.stage("embed").cached >= 10
    emb.save(tmp_path / "idx" / "embedder")
    meta = (tmp_path / "idx" / "embedder" / "embedder.json").read_text()
    assert KEY not in meta and "scripted-embed" in meta
    back = load_embedder(tmp_path / "idx", cfg)
    assert back.name == "openai" and back.dim == 64
    assert np.allclose(back.embed([paragraphs[0]]), v[:1], atol=1e-6)
    srv.fail_next("500", "500", "500")
    bad = make_embedder(make_cfg(srv, embeddings={"engine": "openai", "api_key_env": KEY_ENV}))
    z = bad.embed(["one text"])
    assert z.shape[0] == 1 and bad.usage.stage("embed").failed == 1  # recorded, not raised


# ------------------------------------------------------------------ cost estimate, prompts, server

def test_full_extraction_estimate_counts_every_unit_and_gleaning(paragraphs):
    import polars as pl

    from provrag.text.tokens import count_tokens

    df = pl.DataFrame({"text": paragraphs})
    cfg = load_config()
    e0 = full_extraction_estimate(df, cfg, gleanings=0)
    e1 = full_extraction_estimate(df, cfg, gleanings=1)
    assert e0["units"] == len(paragraphs) and e0["calls"] == len(paragraphs) and e1["calls"] == 2 * len(paragraphs)
    frame = sum(count_tokens(m["content"]) for m in index_prompts.extract_messages("x", cfg.extract.entity_types))
    assert e0["input_tokens"] >= sum(count_tokens(p) for p in paragraphs) + len(paragraphs) * (frame - 1)
    assert e1["input_tokens"] > 2 * e0["input_tokens"]  # gleaning re-sends the conversation
    assert full_extraction_estimate(df.to_arrow(), cfg, gleanings=0) == e0
    assert full_extraction_estimate([], cfg)["calls"] == 0


def test_parsers_accept_graphrag_output_and_reject_junk():
    reply = ('("entity"<|>ABRAHAM LINCOLN<|>PERSON<|>The president)\n##\n'
             '("entity"<|>Congress<|>organization<|>The legislature)##'
             '("relationship"<|>ABRAHAM LINCOLN<|>CONGRESS<|>Sent his message to<|>8)\n'
             '("relationship"<|>CONGRESS<|>TREASURY<|>funds<|>high)<|COMPLETE|>')
    g = records.parse_extraction(reply)
    assert [e["title"] for e in g["entities"]] == ["ABRAHAM LINCOLN", "CONGRESS", "TREASURY"]
    assert g["entities"][1]["type"] == "ORGANIZATION"
    assert g["relationships"][0]["weight"] == 8.0 and g["relationships"][1]["weight"] == 1.0
    assert records.parse_extraction("<|COMPLETE|>") == {"entities": [], "relationships": []}
    with pytest.raises(ValueError):
        records.parse_extraction("I found Lincoln and Congress.")
    rep = replies.parse_report('```json\n{"title": "T", "summary": "S", "rating": "7.5", "findings": []}\n```')
    assert rep["rating"] == 7.5 and rep["rating_explanation"] == ""
    for bad in ('{"title": "", "summary": "S", "rating": 1, "findings": []}',
                '{"title": "T", "summary": "S", "rating": "high", "findings": []}',
                '{"title": "T", "summary": "S", "rating": 1, "findings": ["x"]}', "no json", '{"title": "T", "sum'):
        with pytest.raises(ValueError):
            replies.parse_report(bad)
    with pytest.raises(ValueError, match=r"span\(s\) \[2\]"):
        replies.parse_judge('{"verdicts": [{"span": 1, "label": "supported", "score": 0.9}]}', 2)
    with pytest.raises(ValueError):
        replies.parse_judge('{"verdicts": [{"span": 1, "label": "maybe"}]}', 1)
    assert replies.parse_map('{"points": [{"description": "d [Data: Reports (1)]", "score": 140}]}')[0]["score"] == 100
    for kind, msgs in [("extract", index_prompts.extract_messages("t", ["person"])), ("report", index_prompts.report_messages({}, 5, len, 8000)),
                       ("map", query_prompts.map_messages("q", [])), ("reduce", query_prompts.reduce_messages("q", [])),
                       ("answer", query_prompts.answer_messages("q", [])), ("judge", query_prompts.judge_messages("c", ["s"])),
                       ("summarize", index_prompts.summarize_messages("t", ["a", "b"]))]:
        assert prompts.MARKER_RE.search(msgs[0]["content"]).group(1) == kind


def test_server_runs_on_its_own(shared, repo_root):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([sys.executable, "-m", "tests.llm_server", "--port", str(port)], cwd=repo_root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1) as r:
                    assert json.load(r)["data"][0]["id"] == "scripted"
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("tests.llm_server did not start")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", method="POST",
                                     data=json.dumps({"model": "m", "messages": index_prompts.extract_messages(
                                         "Abraham Lincoln wrote to Congress.", ["person"])}).encode())
        with urllib.request.urlopen(req, timeout=5) as r:
            body = json.load(r)
        assert "ABRAHAM LINCOLN" in body["choices"][0]["message"]["content"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as r:
            assert json.load(r)["requests"] == 1
        assert proc.poll() is None  # still serving until killed
    finally:
        proc.terminate()
        proc.wait(timeout=10)
