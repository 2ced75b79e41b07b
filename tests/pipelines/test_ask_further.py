"""An answer lists its cited sources, then the next pages retrieval ranked among those it read,
marked as not cited ([search] sources_listed in all): when the cited page is not the one that says it, the
user still sees the page that does, without the answer claiming it.

Over the ten Debian manuals (eval/manuals' dev questions) and ../shared/corpora/small."""
from __future__ import annotations

import json

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.results import CLOSEST_VIA, FURTHER_VIA

pytestmark = pytest.mark.usefixtures("shared")


def _cited_ids(res) -> set[int]:
    return {i for c in res.citations if c.kind == "Sources" for i in c.ids}


def test_the_page_that_says_it_is_listed_after_the_cited_one(manuals_index):
    """man-q18 (eval/manuals): the answer cites policy.pdf p. 166; p. 92, which gives the range of
    dynamically allocated UIDs, comes among the further passages, not as a citation."""
    q = "Which UID range is used for dynamically allocated user accounts?"
    res = run_ask(q, manuals_index, load_config(), save=False)
    assert not res.abstained
    pages = [(s.path, s.page_start) for s in res.sources]
    assert ("policy.pdf", 92) in pages, pages
    gold = res.sources[pages.index(("policy.pdf", 92))]
    if gold.via == FURTHER_VIA:   # listed, not cited: the answer's citations do not name its unit
        assert gold.text_unit not in _cited_ids(res)
    only_cited = run_ask(q, manuals_index, load_config(overrides={"search": {"sources_listed": 0}}), save=False)
    assert only_cited.answer == res.answer
    assert all(s.via != FURTHER_VIA for s in only_cited.sources)
    assert [s.text_unit_id for s in only_cited.sources] == [s.text_unit_id for s in res.sources
                                                             if s.via != FURTHER_VIA]


def test_further_passages_follow_the_cited_sources_one_per_page(small_index):
    res = run_ask("What is R?", small_index, load_config(), save=False)
    assert not res.abstained
    vias = [s.via == FURTHER_VIA for s in res.sources]
    assert vias[0] is False and any(vias), [s.via for s in res.sources]
    k = vias.index(True)
    assert all(vias[k:]), "further passages come after every cited source"
    assert len(res.sources) <= load_config().search.sources_listed
    pages = [(s.document, s.page_start) for s in res.sources]
    assert len(set(pages[k:])) == len(pages[k:]) and not set(pages[k:]) & set(pages[:k])
    cited = _cited_ids(res)
    for s in res.sources[k:]:
        assert s.text_unit not in cited and s.quote and s.score == 0.0
    # every further passage is one the kept attempt read (its focus: the context), none invented
    stages = {st["name"]: st["data"] for st in res.trace["stages"]}
    read = [c["text_unit_id"] for c in stages["focus"]["selected"]]
    assert {s.text_unit_id for s in res.sources[k:]} <= set(read)
    at = [read.index(s.text_unit_id) for s in res.sources[k:]]
    assert at == sorted(at), "in retrieval's order"
    assert stages["citations"]["further"] == len(res.sources) - k


def test_the_limit_counts_the_cited_sources_and_an_abstention_lists_closest_passages_only(small_index):
    cited = [s for s in run_ask("What is R?", small_index, load_config(), save=False).sources if s.via != FURTHER_VIA]
    one_more = run_ask("What is R?", small_index,
                       load_config(overrides={"search": {"sources_listed": len(cited) + 1}}), save=False)
    assert len(one_more.sources) == len(cited) + 1 and one_more.sources[-1].via == FURTHER_VIA
    fewer = run_ask("What is R?", small_index, load_config(overrides={"search": {"sources_listed": 1}}), save=False)
    assert [s.text_unit_id for s in fewer.sources] == [s.text_unit_id for s in cited], "cited sources are never cut"
    none = run_ask("What is the maximum heap size of the Java virtual machine in R?", small_index, load_config(),
                   method="basic", save=False)
    assert none.abstained and none.sources and all(s.via == CLOSEST_VIA for s in none.sources)
    from provrag.query.trace import to_prov

    # the provenance export names an abstention's closest passages as listed, not as citations
    sources = [g for g in to_prov(none.trace)["@graph"] if "/source/" in str(g.get("@id", ""))]
    roles = [g.get("provrag:role") for g in to_prov(none.trace)["@graph"] if g.get("@type") == "prov:Derivation"
             and "/source/" in str(g.get("usedEntity", ""))]
    assert sources and all(g["prov:label"] == "passage listed, not cited" for g in sources)
    assert roles == ["listed"] * len(none.sources)


def test_the_terminal_json_and_prov_views_keep_further_passages_apart(small_index, provrag_cli):
    import os
    import subprocess

    from provrag.query.trace import to_prov
    from provrag.store.traces import list_traces

    out = subprocess.run([*provrag_cli, "ask", "What is R?", "--index", str(small_index), "--json"],
                         capture_output=True, text=True, timeout=300)
    doc = json.loads(out.stdout)
    assert any(s["via"] == FURTHER_VIA for s in doc["sources"]) and doc["sources"][0]["via"] != FURTHER_VIA
    # `provrag log` counts the sources the citations reached, not the passages listed beside them
    row = next(r for r in list_traces(small_index, n=50) if r["trace_id"] == doc["trace_id"])
    assert row["n_sources"] == sum(s["via"] != FURTHER_VIA for s in doc["sources"])
    shown = subprocess.run([*provrag_cli, "ask", "What is R?", "--index", str(small_index)],
                           capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="100"))
    text = shown.stdout
    assert text.index("sources (best first)") < text.index("further passages, not cited")
    res = run_ask("What is R?", small_index, load_config(), save=False)
    prov = to_prov(res.trace)
    roles = [g.get("provrag:role") for g in prov["@graph"] if g.get("@type") == "prov:Derivation"
             and str(g.get("usedEntity", "")).count("/source/")]
    assert roles.count("citation") == sum(s.via != FURTHER_VIA for s in res.sources)
    assert roles.count("listed") == sum(s.via == FURTHER_VIA for s in res.sources) > 0


def test_an_index_without_pages_lists_further_units_not_one_per_document(dulce_v3):
    """Microsoft GraphRAG's Dulce index keeps no pages: "one per page" must not become one per
    document (every unit's page is unknown), and no page is invented."""
    from provrag.pipelines.ask import closest_sources
    from provrag.store.reader import reading

    with reading(dulce_v3, None) as reader:
        ids = [r[0] for r in reader.con.execute("SELECT id FROM text_units ORDER BY human_readable_id").fetchall()]
        listed = closest_sources(reader, "Alex Mercer", ids[:1], FURTHER_VIA)
        more = closest_sources(reader, "Alex Mercer", ids, FURTHER_VIA, listed, 3)
    assert len(ids) >= 4 and len(listed) == 1
    assert len(more) == 3 and len({s.text_unit_id for s in more}) == 3 and ids[0] not in {s.text_unit_id for s in more}
    assert all(s.page_start is None and s.document == listed[0].document for s in more)
