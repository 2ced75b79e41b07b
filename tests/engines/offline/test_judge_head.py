"""The fitted judge reads each evidence text with the reader's claim head too (judge/head.py):
its reading is two features of the fitted scores, computed on the span that shares most of the
claim's words, one model pass per text, and the judge says so when it has no reader."""
from __future__ import annotations

import json
import re

import pytest

from provrag.config import load_config
from provrag.engines.offline.judge.decide import judge
from provrag.engines.offline.judge.head import HEAD_FEATURES, head_readings, reads_head
from provrag.learned import reader as learned
from provrag.verify.claims import split_claims

CFG = load_config().verify

pytestmark = pytest.mark.skipif(not learned.available(), reason="the learned reader's weights are not installed")


@pytest.fixture(scope="module")
def case(eval_dev):
    """HaluEval dev case he-dev-0005 (the Highlanders, renamed the Yankees in 1913): its knowledge
    text, and the claims of its right and its hallucinated answer."""
    c = json.loads((eval_dev / "halueval" / "cases.jsonl").read_text().splitlines()[4])
    text = (eval_dev / "halueval" / "corpus" / c["document"]).read_text()
    return text, split_claims(c["right_answer"], c["question"])[0], split_claims(c["hallucinated_answer"], c["question"])[0]


def test_the_shipped_weights_use_the_head():
    assert reads_head(CFG)
    assert all(CFG.support_weights[n] for n in HEAD_FEATURES)


def test_the_head_reads_the_right_answer_as_better_supported_than_the_hallucinated(case):
    text, right, wrong = case
    calls = []
    model = learned.get()

    class Counting:
        def claim_probs(self, claim, evidences):
            calls.append(len(evidences))
            return model.claim_probs(claim, evidences)

    got_right = head_readings(right.text, [text, ""], CFG.max_window, Counting())
    got_wrong = head_readings(wrong.text, [text], CFG.max_window, Counting())
    assert calls == [1, 1]                  # one pass per claim, one span per non-empty text
    assert got_right[1] == {n: 0.0 for n in HEAD_FEATURES}   # an empty text is not read
    assert got_right[0]["head_supported"] > got_wrong[0]["head_supported"]
    assert got_right[0]["head_supported"] > got_right[0]["head_contradicted"]


def test_verdicts_read_with_the_head_and_say_when_they_could_not(case):
    text, right, _ = case
    read = judge(right.text, [text], CFG, focus=right.focus)[0]
    unread = judge(right.text, [text], CFG, focus=right.focus, reader=None)[0]
    assert read["label"] == "supported"
    assert re.search(r"; claim head: supported 0\.\d\d, contradicted 0\.\d\d$", read["reason"]), read["reason"]
    assert read["score"] != unread["score"]
    assert unread["reason"].endswith("the claim head did not read (no reader)")


def test_the_engine_gives_the_judge_its_reader(case):
    from provrag.engines.offline import OfflineEngine

    text, right, wrong = case
    engine = OfflineEngine(load_config())
    for claim in (right, wrong):
        v = engine.judge(claim.text, [text], focus=claim.focus)[0]
        direct = judge(claim.text, [text], CFG, focus=claim.focus)[0]
        assert (v.label, v.score, v.reason) == (direct["label"], direct["score"], direct["reason"])


def test_the_verify_trace_names_the_judge_and_the_claim_heads_weights(sample_index, tmp_path):
    """An auditor asks which model gave a verdict: the stored trace says, with the weights' digest,
    and `provrag trace` shows it. (On a copy of the sample index: its tests never write it.)"""
    import io
    import shutil

    from rich.console import Console

    from provrag.pipelines.verify import run_verify
    from provrag.store.traces import load_trace
    from provrag.views.ask import trace_tree

    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    res = run_verify(index, load_config(), answer="The commissioning team is led by Dr. Imogen Vale.")
    stored = load_trace(res.trace_id, index)
    judged = stored["judged_by"]
    assert res.to_json()["judged_by"] == judged       # verify --json and /v1/verify say it too
    assert judged["engine"] == "offline" and judged["judge"] == "features"
    assert judged["claim_head"]["sha256"] == learned.get().info["sha256"]
    out = io.StringIO()
    Console(file=out, width=200).print(trace_tree(stored))
    assert f"judge features · claim head {judged['claim_head']['name']}" in out.getvalue()


def test_judged_by_names_the_judge_that_judge_uses(monkeypatch):
    """[verify] judge = "learned" with the reader loaded is the learned judge; without a reader
    judge() falls back to the features, and judged_by says so rather than what was asked for."""
    import dataclasses

    from provrag.engines.offline import OfflineEngine
    from provrag.engines.offline import learned as door

    cfg = load_config()
    asks_learned = dataclasses.replace(cfg, verify=dataclasses.replace(cfg.verify, judge="learned"))
    assert OfflineEngine(asks_learned).judged_by()["judge"] == "learned"
    monkeypatch.setattr(door, "reader", lambda cfg, purpose="answer": None)
    got = OfflineEngine(asks_learned).judged_by()
    assert got["judge"] == "features" and "claim_head" not in got
