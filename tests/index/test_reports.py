"""Stage 7: community reports (offline engine) over the Operation Dulce skeleton graph."""
from __future__ import annotations

import json
import math
import re

from provrag.config import load_config
from provrag.engines.offline import OfflineEngine
from provrag.engines.offline.report import cite_sources, is_statement, write_report
from provrag.index.reports import render, reports_stage
from provrag.index.tables import frame
from provrag.query.citations import parse_citations
from provrag.store import schema
from provrag.text.sentences import split_sentences


def test_one_report_per_community_in_graphrags_columns(dulce_communities, dulce_reports):
    com, rep = dulce_communities, dulce_reports
    assert rep.schema == frame(schema.COMMUNITY_REPORTS, []).schema
    assert rep["community"].to_list() == com["community"].to_list()
    assert rep["human_readable_id"].to_list() == rep["community"].to_list()
    assert rep["id"].n_unique() == rep.height
    for r, c in zip(rep.iter_rows(named=True), com.iter_rows(named=True)):
        for k in ("level", "parent", "children", "period", "size"):
            assert r[k] == c[k]


def test_full_content_is_graphrags_markdown_and_json_agrees(dulce_reports):
    for r in dulce_reports.iter_rows(named=True):
        data = json.loads(r["full_content_json"])
        assert data["title"] == r["title"] and data["summary"] == r["summary"]
        assert data["rating"] == r["rank"] and data["rating_explanation"] == r["rating_explanation"]
        assert [{"explanation": f["explanation"], "summary": f["summary"]} for f in data["findings"]] == r["findings"]
        assert r["full_content"] == render(data)
        assert r["full_content"].startswith(f"# {r['title']}\n\n{r['summary']}\n\n## ")
        assert 0 <= r["rank"] <= 10 and "text units" in r["rating_explanation"]
        assert r["summary"].startswith("This community is about")


def _finding_parts(explanation: str) -> tuple[str, list[int]]:
    """A finding's sentence and the text units its one `[Data: Sources (…)]` block cites."""
    parsed = parse_citations(explanation)
    assert not parsed.problems and len(parsed.blocks) == 1, explanation
    refs = parsed.blocks[0].refs
    assert [r.kind for r in refs] == ["Sources"] and len(refs[0].ids) == 1
    return explanation[:explanation.index("[Data:")].strip(), refs[0].ids


def test_findings_are_statements_quoted_from_the_communitys_units(dulce_graph, dulce_communities, dulce_reports):
    _, _, units = dulce_graph
    by_hrid = dict(zip(units["human_readable_id"], zip(units["id"], units["text"])))
    flat = lambda s: " ".join(s.split())  # noqa: E731
    n = 0
    for c, r in zip(dulce_communities.iter_rows(named=True), dulce_reports.iter_rows(named=True)):
        assert 1 <= len(r["findings"]) <= load_config().reports.max_findings  # as many as its units hold statements
        for f in r["findings"]:
            sentence, (hrid,) = _finding_parts(f["explanation"])
            uid, text = by_hrid[hrid]
            assert uid in c["text_unit_ids"]  # the unit is the community's own
            a, b = split_sentences(sentence)[0]  # a statement, and the one after it when there is one
            assert sentence in flat(text) and is_statement(sentence[a:b]), (sentence, hrid)
            assert len(split_sentences(sentence)) <= 2
            assert f["summary"] and len(f["summary"].split()) <= 12 and "[Data:" not in f["summary"]
            n += 1
    assert n >= dulce_reports.height * 2


def test_findings_are_distinct_and_at_most_two_per_unit(dulce_reports):
    from rapidfuzz import fuzz

    for r in dulce_reports.iter_rows(named=True):
        parts = [_finding_parts(f["explanation"]) for f in r["findings"]]
        units = [ids[0] for _, ids in parts]
        assert all(units.count(u) <= 2 for u in units)  # no unit quoted more than twice
        for i, (a, _) in enumerate(parts):
            for b, _ in parts[i + 1:]:
                assert fuzz.token_set_ratio(a, b) < 90, (a, b)


def test_findings_favour_central_sentences_over_the_first_ones():
    """Of a community whose units tell one story with a digression first, the findings quote the
    story (the sentences most like the rest), not the units' opening lines."""
    cfg = load_config()
    story = ["The Dulce base lies under the mesa near the town of Dulce.",
             "Alex Mercer leads the squad into the Dulce base at night.",
             "Inside the Dulce base the squad finds the alien signal room.",
             "Alex Mercer decodes the alien signal inside the Dulce base.",
             "The alien signal from the Dulce base reaches the squad again."]
    aside = "Taylor Cruz once collected stamps from seven different countries as a child."
    context = {"community": 0, "level": 0,
               "entities": [{"human_readable_id": 0, "title": "DULCE BASE", "type": "LOCATION", "description": "", "degree": 5},
                            {"human_readable_id": 1, "title": "ALEX MERCER", "type": "PERSON", "description": "", "degree": 3},
                            {"human_readable_id": 2, "title": "TAYLOR CRUZ", "type": "PERSON", "description": "", "degree": 1}],
               "relationships": [],
               "text_units": [{"id": "u0", "human_readable_id": 10, "text": aside + " " + story[0]},
                              {"id": "u1", "human_readable_id": 11, "text": " ".join(story[1:3])},
                              {"id": "u2", "human_readable_id": 12, "text": " ".join(story[3:])}]}
    findings = write_report(context, cfg)["findings"]
    first = _finding_parts(findings[0]["explanation"])[0]
    assert first in story and aside not in [_finding_parts(f["explanation"])[0] for f in findings[:3]]
    assert "Dulce base" in findings[0]["summary"]


def test_title_is_the_communitys_distinctive_key_phrases(dulce_graph, dulce_communities, dulce_reports):
    """c-TF-IDF phrases of the community's units, as its text writes them: words of its own text,
    and different communities get different titles (not the words every community shares)."""
    _, _, units = dulce_graph
    text_of = dict(zip(units["id"], units["text"]))
    titles = []
    for c, r in zip(dulce_communities.iter_rows(named=True), dulce_reports.iter_rows(named=True)):
        own = " ".join(text_of[u] for u in c["text_unit_ids"]).lower()
        for phrase in re.split(r", | and ", r["title"]):
            assert phrase.lower() in own, (r["title"], phrase)
        titles.append(r["title"])
    assert len(set(titles)) >= 0.8 * len(titles)


def test_summary_is_the_lead_then_the_most_central_statements(dulce_graph, dulce_reports):
    _, _, units = dulce_graph
    text_of = dict(zip(units["human_readable_id"], units["text"]))
    n = load_config().reports.summary_sentences
    for r in dulce_reports.iter_rows(named=True):
        lead, _, rest = r["summary"].partition(". ")
        assert lead.startswith("This community is about ") and "of the index's" in lead
        parts = re.findall(r"(.+?) \[Data: Sources \((\d+)\)\]", rest)
        assert 1 <= len(parts) <= n
        for sentence, unit in parts:  # quoted from the unit it cites
            assert " ".join(sentence.split()[:6]) in " ".join(text_of[int(unit)].split())


def test_rating_is_the_share_of_the_corpus_covered():
    cfg = load_config()
    base = {"community": 0, "level": 0, "text_units": [], "relationships": [],
            "entities": [{"human_readable_id": 0, "title": "E0", "type": "CONCEPT", "description": "", "degree": 1}]}
    quarter = write_report(dict(base, coverage={"text_units": 25, "of": 100}), cfg)
    tenth = write_report(dict(base, coverage={"text_units": 10, "of": 100}), cfg)
    assert quarter["rating"] == 5.0 and tenth["rating"] == round(10 * math.sqrt(0.1), 1)
    assert "25.0%" in quarter["rating_explanation"]


def test_without_coverage_the_rating_grows_with_size_and_degree():
    cfg = load_config()
    small = {"community": 0, "level": 0, "text_units": [],
             "entities": [{"human_readable_id": i, "title": f"E{i}", "type": "CONCEPT", "description": "", "degree": 1}
                          for i in range(2)],
             "relationships": [{"human_readable_id": 0, "source": "E0", "target": "E1", "description": "", "weight": 1}]}
    big = dict(small, entities=[dict(e, degree=12) for e in small["entities"] * 10])
    r_small, r_big = write_report(small, cfg)["rating"], write_report(big, cfg)["rating"]
    assert 0 <= r_small < r_big <= 10
    s, d = 1 - math.exp(-2 / 10), 1 - math.exp(-1 / 5)
    assert r_small == round(10 * (0.5 * s + 0.5 * d), 1)


def test_cite_sources_cuts_at_five_with_more():
    assert cite_sources([3, 1, 3]) == "[Data: Sources (3, 1)]"
    assert cite_sources(range(7)) == "[Data: Sources (0, 1, 2, 3, 4, +more)]"
    assert cite_sources([]) == ""


def test_statements_are_whole_sentences_of_prose():
    assert is_statement("Every package must be accompanied by a verbatim copy of its distribution license.")
    assert not is_statement("12.5 Copyright information")                          # a heading
    assert not is_statement("the distribution license for those files requires that copyright be kept.")  # cut
    assert not is_statement("Every package must be accompanied by a verbatim copy of its")  # no end
    assert not is_statement("rmdir 12 sed 13 sh 14 stty 15 su 16 sync 17 true 18.")  # a table row


def test_reports_deterministic_and_empty_safe(dulce_graph, dulce_communities, dulce_reports):
    ents, rels, units = dulce_graph
    cfg = load_config()
    again = reports_stage(dulce_communities, ents, rels, units, OfflineEngine(cfg), cfg)
    assert again.equals(dulce_reports)
    empty = reports_stage(dulce_communities.head(0), ents, rels, units, OfflineEngine(cfg), cfg)
    assert empty.height == 0 and empty.schema == frame(schema.COMMUNITY_REPORTS, []).schema


def test_malformed_engine_answers_do_not_crash(dulce_graph, dulce_communities):
    class Sloppy(OfflineEngine):
        def community_report(self, context):
            return {"title": None, "rating": "high", "findings": ["just text", {"summary": 3}, None]}

    ents, rels, units = dulce_graph
    cfg = load_config()
    rep = reports_stage(dulce_communities.head(2), ents, rels, units, Sloppy(cfg), cfg)
    assert rep.height == 2 and rep["rank"].to_list() == [0.0, 0.0] and rep["title"].to_list() == ["Report", "Report"]


def test_a_statement_that_points_elsewhere_is_chosen_last():
    """gnuplot's Commands chapter was summed up by "See also set view (p. 212), and set zeroaxis
    (p. 225).": the sentence most like the rest, since it names both subjects, yet it says nothing
    itself (focus.points_elsewhere). It comes after every statement that stands alone."""
    from provrag.engines.offline.report import central_statements

    pointer = "See also set view (p. 212), and set zeroaxis (p. 225) for the view and axis commands."
    units = [{"human_readable_id": 1, "text": "The set view command sets the viewing angle of a surface plot. "
                                              "The set view command also scales the surface plot."},
             {"human_readable_id": 2, "text": "The set zeroaxis command draws an axis line at zero. " + pointer}]
    chosen = [s for s, _, _ in central_statements({"text_units": units}, 4, [])]
    assert pointer in chosen and chosen[-1] == pointer, chosen
