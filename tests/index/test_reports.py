"""Stage 7: community reports (offline engine) over the Operation Dulce skeleton graph."""
from __future__ import annotations

import json
import math

from provrag.config import load_config
from provrag.engines.offline import OfflineEngine
from provrag.engines.offline.report import cite, write_report
from provrag.index.reports import render, reports_stage
from provrag.index.tables import frame
from provrag.query.citations import parse_citations
from provrag.store import schema


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
        assert 0 <= r["rank"] <= 10 and "size term" in r["rating_explanation"]
        assert r["summary"].startswith("This community centres on")


def test_findings_cite_existing_entities_and_relationships(dulce_graph, dulce_communities, dulce_reports):
    ents, rels, _ = dulce_graph
    ent_ids, rel_ids = set(ents["human_readable_id"]), set(rels["human_readable_id"])
    members = {c: set(e) for c, e in zip(dulce_communities["community"], dulce_communities["entity_ids"])}
    ent_by_hrid = dict(zip(ents["human_readable_id"], ents["id"]))
    n_blocks = 0
    for r in dulce_reports.iter_rows(named=True):
        size = r["size"]
        assert min(3, size) <= len(r["findings"]) <= 8
        for f in r["findings"]:
            parsed = parse_citations(f["explanation"])
            assert not parsed.problems and len(parsed.blocks) == 1
            n_blocks += 1
            for ref in parsed.blocks[0].refs:
                assert ref.kind in ("Entities", "Relationships") and len(ref.ids) <= 5
                assert set(ref.ids) <= (ent_ids if ref.kind == "Entities" else rel_ids)
                if ref.kind == "Entities":  # a report talks about its own community's entities
                    assert {ent_by_hrid[i] for i in ref.ids} <= members[r["community"]]
    assert n_blocks >= dulce_reports.height * 2


def test_title_names_the_best_connected_entities(dulce_graph, dulce_communities, dulce_reports):
    ents, _, _ = dulce_graph
    degree = dict(zip(ents["id"], ents["degree"]))
    title_of = dict(zip(ents["id"], ents["title"]))
    for c, r in zip(dulce_communities.iter_rows(named=True), dulce_reports.iter_rows(named=True)):
        top = max(c["entity_ids"], key=lambda e: degree[e])
        words = title_of[top].lower().split()
        assert all(w in r["title"].lower() for w in words), (r["title"], title_of[top])


def test_summary_sentences_come_from_the_communitys_text_units(dulce_graph, dulce_communities, dulce_reports):
    from provrag.engines.offline.extract.text import sentences

    ents, rels, units = dulce_graph
    text = dict(zip(units["id"], units["text"]))
    flat = lambda s: " ".join(s.split())  # noqa: E731
    for c, r in zip(dulce_communities.iter_rows(named=True), dulce_reports.iter_rows(named=True)):
        pool = {flat(text[u][a:b]) for u in c["text_unit_ids"] for a, b in sentences(text[u])}
        rest = r["summary"].split(". ", 1)[1] if ". " in r["summary"] else ""  # after the one-line lead
        n = 0
        while rest:  # the rest is a sequence of whole sentences of the community's units
            head = max((s for s in pool if rest.startswith(s)), key=len, default=None)
            assert head, rest[:80]
            rest, n = rest[len(head):].lstrip(), n + 1
        assert n <= load_config().reports.summary_sentences


def test_rating_grows_with_size_and_degree():
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


def test_cite_cuts_at_five_with_more():
    assert cite([1, 2], []) == "[Data: Entities (1, 2)]"
    assert cite([3], list(range(7))) == "[Data: Entities (3); Relationships (0, 1, 2, 3, 4, +more)]"
    assert cite([], []) == ""


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
