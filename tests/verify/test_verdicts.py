"""Verdicts and the typed verify result on a real GraphRAG index (the Dulce fixture, v1): the
judge's per-run cache, verdict normalisation, RefChecker's rule, ALCE's metrics, the JSON shape
of evidence, and the one place a verify trace keeps its result."""
from __future__ import annotations

import json
import shutil

import pytest

from provrag.config import load_config
from provrag.engines.offline import OfflineEngine
from provrag.results import Verdict
from provrag.store.reader import open_index
from provrag.verify.claims import split_claims
from provrag.verify.verdicts import Judge, normalise_verdict, summarise, verdict_of

pytestmark = pytest.mark.usefixtures("shared")
CFG = load_config(overrides={"verify": {"top_k_cited": 2, "top_k_retrieved": 3}})
# the evidence keys `verify --json` has always written: the contract's Source, the unit and the
# quote's offsets (null on a GraphRAG unit), then the verdict
EVIDENCE_KEYS = {"document", "path", "page_start", "page_end", "page_label", "text_unit_id", "quote", "via", "score",
                 "text_unit", "char_start", "char_end", "ocr", "label", "reason", "route"}


@pytest.fixture(scope="module")
def v1(dulce):
    """The Dulce fixture's oldest GraphRAG output folder (index-2025-v1: create_final_* tables), read-only."""
    return dulce / "index-2025-v1"


def _answer(v1) -> str:
    return json.loads((v1 / "answers" / "local_search_0.json").read_text())["answer"]


def _texts(v1, n: int) -> dict[str, str]:
    with open_index(v1) as r:
        return dict(r.con.execute(f"SELECT id, text FROM text_units ORDER BY human_readable_id LIMIT {n}").fetchall())


class CountingEngine(OfflineEngine):
    """The offline engine, counting the texts it is asked to judge."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.judged: list[str] = []

    def judge(self, claim, evidence, focus=None):
        self.judged.extend(evidence)
        return super().judge(claim, evidence, focus=focus)


def test_judge_asks_the_engine_once_per_claim_and_text(v1):
    engine = CountingEngine(CFG)
    judge = Judge(engine)
    claim = split_claims(_answer(v1))[0]
    texts = _texts(v1, 4)
    first = dict(list(texts.items())[:3])
    got = judge(claim, first)
    assert list(got) == list(first) and len(engine.judged) == 3
    again = judge(claim, texts)                     # three cached, one new
    assert list(again) == list(texts) and len(engine.judged) == 4
    assert all(again[k] == got[k] for k in first)
    # the cached verdict is the engine's own, normalised
    direct = OfflineEngine(CFG).judge(claim.text, list(texts.values()), focus=claim.focus)
    assert [v.label for v in again.values()] == [v.label for v in direct]
    assert [v.score for v in again.values()] == [round(v.score, 4) for v in direct]
    assert judge.method == "offline"


def test_a_verdict_is_normalised_and_given_a_span_when_the_engine_names_none(v1):
    claim = "Agent Alex Mercer is a member of the Paranormal Military Squad."
    text = next(t for t in _texts(v1, 40).values() if "Mercer" in t)
    v = normalise_verdict(Verdict("SUPPORTS", "0.912345", None, None), claim, text)   # a model's loose reply
    assert v.label == "unsupported" and v.score == 0.9123 and v.reason == ""
    a, b = v.span
    assert 0 <= a < b <= len(text) and "Mercer" in text[a:b]
    kept = normalise_verdict(Verdict("supported", 0.5, "x" * 400, (3, 9)), claim, text)
    assert kept == Verdict("supported", 0.5, "x" * 300, (3, 9))


def test_refchecker_rule_across_units():
    assert verdict_of(["unsupported", "contradicted", "supported"]) == "supported"
    assert verdict_of(["unsupported", "contradicted"]) == "contradicted"
    assert verdict_of(["unsupported"]) == verdict_of([]) == "unsupported"


def test_graphrag_answer_evidence_json_and_alce_metrics(v1):
    from provrag.verify.check import verify_answer

    with open_index(v1) as r:
        res = verify_answer(r, _answer(v1), CFG)
    doc = res.to_json()
    assert doc["method"] == "offline" and len(doc["claims"]) == res.summary["claims"] >= 5
    for c in doc["claims"]:
        for e in c["cited"] + c["evidence"]:
            # a GraphRAG unit has no offsets: the keys stay, null; no answer-sentence number appears
            assert set(e) == EVIDENCE_KEYS, sorted(set(e) ^ EVIDENCE_KEYS)
            assert e["char_start"] is None and e["char_end"] is None and e["text_unit"] is not None
            assert e["ocr"] is False  # a GraphRAG index has no ocr_pages column: read as none
    # ALCE, by hand from the claims: recall over every claim, precision over every cited id
    cits = [x for c in res.claims for x in c.citations]
    assert cits, "the v1 answer cites entities and reports"
    assert res.summary["citation_recall"] == round(sum(c.cited_supports for c in res.claims) / len(res.claims), 4)
    assert res.summary["citation_precision"] == round(sum(x["supports"] for x in cits) / len(cits), 4)
    assert summarise(res.claims) == res.summary
    assert sum(res.summary[k] for k in ("supported", "contradicted", "unsupported")) == len(res.claims)


def test_verify_trace_keeps_its_result_in_one_place(tmp_path, monkeypatch, v1):
    """The verify trace stores the claims and summary once, in trace["verify"]; the report reads
    them from there and from nowhere else."""
    from provrag.pipelines.report import stored_verify_result
    from provrag.pipelines.verify import run_verify

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    idx = tmp_path / "v1"
    shutil.copytree(v1, idx)
    res = run_verify(idx, CFG, answer=_answer(v1), question="Who is on the team?")
    assert res.trace_file and res.trace_error is None and res.trace["kind"] == "verify"
    doc = res.to_json()
    stored = stored_verify_result(res.trace)
    assert stored == {"claims": doc["claims"], "summary": doc["summary"]}
    assert [k for k, v in res.trace.items() if isinstance(v, dict) and "claims" in v] == ["verify"]
    assert res.supported_ratio == doc["summary"]["supported_ratio"]
    assert stored_verify_result({"result": stored}) is None and stored_verify_result(dict(stored)) is None
    assert {"trace_id", "question", "method", "source", "claims", "summary", "trace_file", "judged_by"} == set(doc)
    assert doc["judged_by"] == res.trace["judged_by"]   # which judge and weights: in the trace and the JSON alike
    assert doc["source"] == {"from": "argument"} and doc["question"] == "Who is on the team?"


def test_the_cited_units_verdict_comes_first():
    from provrag.verify.verdicts import claim_verdict

    # what the claim's own citation says decides; a look-alike elsewhere does not outvote it
    assert claim_verdict(["contradicted", "unsupported"], ["contradicted", "supported"]) == "contradicted"
    assert claim_verdict(["supported"], ["supported", "contradicted"]) == "supported"
    # a citation that says neither (a wrong one, or none): RefChecker's rule over every unit
    assert claim_verdict(["unsupported"], ["unsupported", "supported"]) == "supported"
    assert claim_verdict([], ["contradicted", "unsupported"]) == "contradicted"


def test_a_failing_pass_over_a_claims_citations_still_names_the_id_that_broke(v1, monkeypatch):
    """cited_units resolves a claim's ids in one pass; when that pass fails, it resolves them one
    at a time, so the ids that resolve keep their units and the one that breaks is named."""
    from provrag.query import resolve as resolve_mod
    from provrag.query.citations import Ref
    from provrag.verify.claims import Claim
    from provrag.verify.evidence import cited_units

    claim = Claim("Alex Mercer and Taylor Cruz led the team.", (0, 10), refs=[Ref("Entities", [0, 1])])
    with open_index(v1) as r:
        together = cited_units(r, claim, 3)
        real = resolve_mod.resolve_refs

        def broken_for_one(reader, refs, sentence, **kw):
            if refs[0].ids == [1]:
                raise RuntimeError("table entities is damaged\nmore")
            return real(reader, refs, sentence, **kw)
        monkeypatch.setattr(resolve_mod, "resolve_each", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("x")))
        monkeypatch.setattr(resolve_mod, "resolve_refs", broken_for_one)
        alone = cited_units(r, claim, 3)
    assert together[0][0] == alone[0][0] and together[0][0][2]   # entity 0: the same units either way
    assert alone[0][1] == ("Entities", 1, [])
    assert alone[1] == [{"kind": "Entities", "id": 1, "sentence_index": None, "reason": "table entities is damaged"}]
