"""The terminal views: sources of a real GraphRAG answer laid out for wide and narrow terminals."""
from __future__ import annotations

import pytest
from rich.console import Console

from provrag.store.reader import open_index
from provrag.views.resolve import resolve_view

pytestmark = pytest.mark.usefixtures("shared")

ANSWER = ("The operation is specifically tasked with investigating and managing unconventional threats, "
          "particularly those associated with the Dulce Base [Data: Reports (4, 0, 1, 3, 8)].")


@pytest.fixture(scope="module")
def result(dulce_v3):
    from provrag.query.resolve import resolve_answer

    with open_index(dulce_v3) as r:
        return resolve_answer(r, ANSWER, top_k=2)


def _render(obj, width: int) -> str:
    con = Console(width=width, record=True, color_system=None)
    con.print(obj)
    return con.export_text()


@pytest.mark.parametrize("width", [60, 80, 100])
def test_narrow_terminal_keeps_quotes_readable(result, width):
    """Below 110 columns each source is a block: the quote wraps at the full width instead of
    a column a word wide (a pipe counts as 80 columns)."""
    text = _render(resolve_view(result), width)
    quote_lines = [ln for ln in text.splitlines() if ln.startswith("    “")]
    assert len(quote_lines) == 2                                # one quote per source, top 2
    assert all(len(ln.rstrip()) > width * 0.7 for ln in quote_lines)
    assert "│" not in "".join(quote_lines)                     # no table columns around them
    assert "Report 4 → community 4 → text unit" in text.replace("\n", " ")


def test_wide_terminal_gets_the_table(result):
    text = _render(resolve_view(result), 160)
    header = next(ln for ln in text.splitlines() if "document" in ln and "quote" in ln)
    assert "via" in header and "score" in header


@pytest.mark.parametrize("width", [80, 100])
def test_verify_evidence_header_fits_one_line(width):
    """The evidence header (document, page, route, score) never wraps: a long document name
    is shortened with an ellipsis instead."""
    from provrag.results import ClaimCheck, Evidence, VerifyResult
    from provrag.views.verify import verify_view

    ev = Evidence(document="Halcyon Water Treatment Plant - Commissioning Handbook, revision C, controlled copy",
                  path="halcyon-commissioning-handbook.pdf", page_start=1, page_end=1, page_label="i",
                  text_unit_id="u1", quote="Approved by Dr. Imogen Vale (commissioning manager).", via="", score=0.22,
                  label="contradicted", reason="contradicted: covers 51% of the claim", route="retrieved")
    claim = ClaimCheck(text="The commissioning team is led by Dr. Imogen Vale.", verdict="supported", score=0.9,
                       method="offline", cited=[], evidence=[ev], cited_supports=False, citations=[], unresolved=[],
                       focus=None, span=(0, 49))
    res = VerifyResult(method="offline", claims=[claim], summary={"claims": 1})
    lines = _render(verify_view(res, width=width), width).splitlines()
    head = next(i for i, ln in enumerate(lines) if "[retrieved]" in ln)
    assert lines[head].rstrip().endswith("score 0.22") and "…" in lines[head]
    assert lines[head + 1].lstrip().startswith("“Approved by")


def test_ask_view_shows_the_unit_of_a_pageless_source(result):
    """`provrag ask` renders the typed AskResult: answer, sources best first (a GraphRAG index has
    no pages, so the text unit is named), unresolved ids and the trace id."""
    from provrag.results import AskResult, Unresolved
    from provrag.views.ask import ask_view

    asked = AskResult(trace_id="0123456789ab", question="What is the operation for?", method="global",
                      answer=result.answer, citations=result.citations, sources=result.sources,
                      unresolved=[Unresolved("Reports", 99)], has_pages=False,
                      trace_error="trace not saved: disk full")
    text = _render(ask_view(asked), 160)
    assert "answer · global search" in text and "sources (best first)" in text
    assert f"— (unit {result.sources[0].text_unit})" in text
    assert "unresolved citation: Reports (99)" in text
    assert "provrag trace 0123456789ab" in text and "trace not saved: disk full" in text


def test_ask_view_shows_an_abstention_and_its_closest_passages_as_not_an_answer(result):
    from dataclasses import replace

    from provrag.pipelines.ask import CLOSEST_VIA
    from provrag.query.context import ABSTENTION
    from provrag.results import AskResult
    from provrag.views.ask import ask_view

    closest = [replace(s, via=CLOSEST_VIA) for s in result.sources[:2]]
    asked = AskResult(trace_id="0123456789ab", question="Who won the 2018 FIFA World Cup?", method="basic",
                      answer=ABSTENTION, citations=[], sources=closest, unresolved=[], has_pages=False,
                      abstained=True, confidence=0.02)
    text = _render(ask_view(asked), 160)
    assert "confidence 0.02" in text and ABSTENTION in text
    assert "closest passages — not an answer" in text and "sources (best first)" not in text


def test_trace_tree_says_why_each_candidate_and_source_was_retrieved(squad_subset_index):
    """A real ask's trace: under each candidate, its score as the sum of its parts and the words
    that drove it; under each source, why that page was retrieved (its rank among the candidates)."""
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask
    from provrag.query.why import why_line
    from provrag.views.ask import trace_tree

    res = run_ask("When did the oil embargo end?", squad_subset_index, load_config(), method="basic", save=False)
    text = " ".join(_render(trace_tree(res.trace), 240).split())
    cands = next(s for s in res.trace["stages"] if s["name"] == "exploration")["data"]["candidates"]
    first = why_line(cands[0]["why"], head=False)
    assert first.startswith("score = lexical ") and "bm25: " in first and "embedding: " in first
    assert f"why: {first}" in text
    by_unit = {c["text_unit_id"]: c["why"] for c in cands}
    src = next(s for s in res.sources if s.text_unit_id in by_unit)
    assert f"why this page: retrieved {why_line(by_unit[src.text_unit_id])}" in text


def test_only_an_answer_given_unchecked_says_so(sample_index):
    """`ask --raw` skips the answer check, and the view says so under the answer. An abstention
    has no sentence to check: the check never runs for it, and saying "unchecked answer (--raw)"
    there told a user who never passed --raw that something went unjudged."""
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask
    from provrag.views.ask import ask_view

    cfg = load_config()
    raw = run_ask("Who leads the Halcyon commissioning team?", sample_index, cfg, save=False, check=False)
    nothing = run_ask("What is the maximum heap size of the Java virtual machine?", sample_index, cfg, save=False)
    assert not raw.abstained and not raw.checked and nothing.abstained
    assert "unchecked answer (--raw)" in _render(ask_view(raw), 100)
    shown = _render(ask_view(nothing), 100)
    assert "Nothing in the index answers this question." in shown and "unchecked" not in shown
