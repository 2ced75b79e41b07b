"""Global search (provrag/query/global_search.py, engines/offline/answer/mapreduce.py) over the ten
Debian manuals: a broad question answered in themes (every manual under the report of its theme,
tests/query/test_global_themes.py has the rest), a specific one in community-report findings —
sentences quoted from the documents, each citing its report and its text unit — and the
relevance it exposes."""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config

pytestmark = pytest.mark.usefixtures("shared")

THEMES = "What are the main themes of these documents?"


def _flat(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _global(index, question: str):
    """(ask result, search result) of a global search, as `provrag ask --method global` makes it."""
    from provrag.engines import get_engine
    from provrag.pipelines.ask import run_ask
    from provrag.query.search import run_method
    from provrag.query.trace import Trace
    from provrag.store.reader import open_index

    cfg = load_config()
    with open_index(index) as reader:
        found = run_method("global", reader, question, cfg, get_engine(cfg), Trace("ask", question), None)
    return run_ask(question, index, cfg, method="global", save=False), found


@pytest.fixture(scope="module")
def themes(manuals_index):
    return _global(manuals_index, THEMES)


def test_main_themes_group_every_manual_under_a_cited_report(themes, manuals_index):
    from provrag.store.reader import open_index

    out, _ = themes
    assert out.method == "global" and "centres on" not in out.answer and len(out.answer.split()) <= 350
    with open_index(manuals_index) as r:
        ok = {p for (p,) in r.con.execute("SELECT path FROM documents WHERE status = 'ok'").fetchall()}
    assert {s.path for s in out.sources} >= ok and len(ok) == 10  # every manual cited
    assert out.unresolved == []
    for c in (c for c in out.citations if c.kind == "Sources"):
        # a manual's clause names it (its title or file) and resolves to a page of it
        pages = [s for s in out.sources if s.sentence_index == c.sentence_index]
        assert pages and all(s.page_start for s in pages)
        assert any(s.path.rsplit(".", 1)[0] in c.sentence or s.document in c.sentence for s in pages), c.sentence


def test_one_line_per_theme(themes):
    _, found = themes
    lines = [x for x in found.answer.splitlines() if x.startswith("- **")]
    firsts = [m.group(1) for x in lines if (m := re.search(r"\[Data: Reports \((\d+)", x))]
    assert len(lines) >= 3 and len(firsts) == len(set(firsts))  # no report gives two themes
    assert found.engine_details["broad"] and found.engine_details["relevance"] == 1.0


def test_a_specific_question_quotes_the_finding_that_answers_it(manuals_index):
    out, found = _global(manuals_index, "Where must the copyright information of a package be installed?")
    first = out.answer.split("[Data:")[0]
    assert "/usr/share/doc" in first and "copyright" in first.lower()
    assert out.sources[0].document == "Debian Policy Manual" and out.sources[0].page_start
    assert found.engine_details["relevance"] >= 0.8


@pytest.mark.parametrize("question", ["Who won the 2018 FIFA World Cup?",
                                      "How do I configure a Kubernetes ingress with TLS?"])
def test_relevance_is_low_when_no_report_speaks_of_the_question(manuals_index, question):
    _, found = _global(manuals_index, question)
    _, on_topic = _global(manuals_index, "Where must the copyright information of a package be installed?")
    details = found.engine_details
    assert details["relevance"] < 0.5 <= on_topic.engine_details["relevance"]
    # the closest material (when any report's point shares a word with the question) comes with its reports
    assert bool(details["passages"]) == bool(details["best_reports"]) and details["n_units"] > 0


# ---- map and reduce on their own ------------------------------------------------------------------

def _report(community: int, rank: float, *findings: tuple[str, int]) -> dict:
    return {"community": community, "title": f"R{community}", "rank": rank, "score": 0.5, "full_content": "",
            "findings": [{"summary": "x", "explanation": f"{s} [Data: Sources ({u})]"} for s, u in findings]}


def test_map_points_quote_findings_with_their_report_and_unit():
    from provrag.engines.offline.answer.mapreduce import map_points

    cfg = load_config(overrides={"search": {"rerank": "none"}})
    reports = [_report(4, 6.0, ("The Panthers defeated the Broncos in the playoffs.", 17),
                       ("Watt improved the steam engine with a separate condenser.", 18)),
               _report(9, 8.0, ("Ships carried cotton across the sea.", 30))]
    points = map_points("Who improved the steam engine?", reports, cfg)
    assert points[0]["description"] == ("Watt improved the steam engine with a separate condenser. "
                                        "[Data: Reports (4); Sources (18)]")
    assert 0 < points[0]["score"] <= 100 and points[0]["sources"] == [18]
    assert not any("Reports (9)" in p["description"] for p in points)  # nothing in common: no point


def test_reduce_keeps_one_sentence_per_theme_and_merges_repeats():
    from provrag.engines.offline.answer.mapreduce import cited_ids, reduce_answer

    cfg = load_config(overrides={"search": {"global_themes": 2}})
    points = [{"description": "Every package ships a copyright file. [Data: Reports (1); Sources (5)]", "score": 90},
              {"description": "Every package ships a copyright file in /usr/share/doc. [Data: Reports (2); Sources (8)]",
               "score": 80},
              {"description": "A second sentence of the same report. [Data: Reports (1); Sources (6)]", "score": 70},
              {"description": "R reads CSV files with read.csv. [Data: Reports (3); Sources (9)]", "score": 60},
              {"description": "The FHS places data in /srv. [Data: Reports (4); Sources (11)]", "score": 50}]
    answer = reduce_answer(THEMES, points, cfg)
    assert answer == ("Every package ships a copyright file. [Data: Reports (1, 2); Sources (5, 8)] "
                      "R reads CSV files with read.csv. [Data: Reports (3); Sources (9)]")
    assert cited_ids(answer) == {"Reports": [1, 2, 3], "Sources": [5, 8, 9]}
