"""The report's "why this page" lines (audit/cards.py): each evidence unit says why retrieval
ranked it — for the claim (the verify run) or for the question (the ask) — from the stored
traces of a real ask + verify over ../shared/corpora/small."""
from __future__ import annotations

import html as htmllib
import re

import pytest

from provrag.audit.report import build_report, claim_whys
from provrag.query.why import retrieved_why, why_line
from tests.audit.runs import QUESTION

pytestmark = pytest.mark.usefixtures("shared")


def _why_lines(page: str) -> list[str]:
    return [htmllib.unescape(x) for x in re.findall(r'<div class="via why">([^<]*)</div>', page)]


def test_each_retrieved_evidence_unit_says_why_this_page(small):
    idx, asked, traces, verified = small
    page = build_report(verified, question=QUESTION, answer=asked["answer"], trace=traces, index_dir=idx, max_pages=0)
    lines = _why_lines(page)
    assert lines and all(x.startswith("why this page: ") for x in lines)
    ask_trace, verify_trace = traces
    shown = 0
    for i, claim in enumerate(verified["claims"]):
        whys, mine = claim_whys(traces, i), retrieved_why(verify_trace, i)
        for e in claim["evidence"]:
            if e["route"] in ("retrieved", "both"):
                # the claim's own retrieval of that unit: its rank, score and the words that drove it
                assert whys[e["text_unit_id"]] == ("retrieved for this claim", mine[e["text_unit_id"]])
            elif e["text_unit_id"] in whys:   # cited only: why the question's retrieval found it, if it did
                assert whys[e["text_unit_id"]] == ("the question retrieved it", retrieved_why(ask_trace)[e["text_unit_id"]])
            if e["text_unit_id"] in whys:
                who, why = whys[e["text_unit_id"]]
                assert f"why this page: {who} {why_line(why)}" in lines
                shown += 1
    assert shown == len(lines)


def test_without_traces_no_why_line_is_invented(small):
    idx, asked, _, verified = small
    page = build_report(verified, question=QUESTION, answer=asked["answer"], index_dir=idx, max_pages=0)
    assert _why_lines(page) == []
