"""A server's graph maps (query/graph_lookups.py) choose the same relationships and community
reports as local search's SQL, in the same order: on provrag's own indexes, on Microsoft
GraphRAG's three generations, and on tables built to trip them (ties, NULLs, NaN, a community
listed twice)."""
from __future__ import annotations

import duckdb
import pytest

from provrag.query.graph_lookups import UNMAPPED, GraphLookups
from provrag.query.local_search import entity_relationships, entity_reports, match_entities
from provrag.store.reader import open_index


def graph_answers(con, question: str, lookups) -> tuple:
    ents = match_entities(con, question)
    rels = entity_relationships(con, [e["title"] for e in ents], lookups=lookups)
    reports = entity_reports(con, [e["id"] for e in ents], lookups) if ents else []
    return ents, rels, reports


def questions_naming(con, n: int = 60) -> list[str]:
    """Questions naming the index's entities: one title, two, a title inside a word, none."""
    titles = [r[0] for r in con.execute(
        "SELECT title FROM entities WHERE title IS NOT NULL ORDER BY degree DESC NULLS LAST, human_readable_id "
        f"LIMIT {n}").fetchall()]
    pairs = [f"How is {a.lower()} related to {b}?" for a, b in zip(titles, titles[1:])]
    return [f"What is {t}?" for t in titles] + pairs + [f"Is x{titles[0].lower()}y here?", "Nothing named at all."]


def assert_same_with_maps(index) -> GraphLookups:
    lookups = GraphLookups()
    with open_index(index) as r:
        qs = questions_naming(r.con)
        for q in qs:
            assert graph_answers(r.con, q, lookups) == graph_answers(r.con, q, None), q
        assert any(graph_answers(r.con, q, lookups)[1] for q in qs)   # relationships were found at all
    return lookups


def test_the_maps_choose_what_the_sql_chooses_on_provrags_index(sample_index):
    lookups = assert_same_with_maps(sample_index)
    assert set(lookups._maps) == {"relationship ends", "entity communities"}
    assert UNMAPPED not in lookups._maps.values()   # provrag's own tables are all mapped


@pytest.mark.parametrize("generation", ["index-2025-v1", "index-2025-v2", "index-2026-v3"])
def test_the_maps_choose_what_the_sql_chooses_on_graphrags_indexes(dulce, generation):
    assert_same_with_maps(dulce / generation)


def tricky_graph() -> duckdb.DuckDBPyConnection:
    """Tables with what the maps must not get wrong: ties of weight (decided by id), NULL
    weights (last), a relationship between two named entities (first), an entity listed twice
    in one community, a community listed twice (its report twice, as the join gives it), a
    community without a number."""
    con = duckdb.connect()
    con.execute("CREATE TABLE entities (id VARCHAR, human_readable_id BIGINT, title VARCHAR, type VARCHAR, "
                "description VARCHAR, text_unit_ids VARCHAR[], degree BIGINT)")
    con.execute("""INSERT INTO entities VALUES ('e1', 1, 'ALPHA', 't', 'a', ['u1'], 3), ('e2', 2, 'BETA', 't', 'b', ['u2'], 2),
        ('e3', 3, 'GAMMA RAY', 't', 'g', [], NULL), ('e4', 4, 'GAMMA', 't', 'g', [], 5),
        ('e5', 5, 'ZETA', 't', 'z', [], 1), ('e6', 6, 'OM', 't', 'o', [], 9), ('e7', 7, 'KAPPA', 't', 'k', [], 1),
        ('e8', 8, 'ALPHA', 't', 'a twin', [], 3)""".replace("KAPPA", "\u212aAPPA"))
    con.execute("CREATE TABLE relationships (human_readable_id BIGINT, source VARCHAR, target VARCHAR, "
                "description VARCHAR, weight DOUBLE, text_unit_ids VARCHAR[])")
    con.execute("""INSERT INTO relationships VALUES (10, 'ALPHA', 'ZETA', 'r', 1.0, []), (11, 'ZETA', 'ALPHA', 'r', 1.0, []),
        (12, 'ALPHA', 'BETA', 'r', 0.5, []), (13, 'BETA', 'ZETA', 'r', NULL, []), (14, 'GAMMA', 'ALPHA', 'r', 7.0, []),
        (15, 'ZETA', 'BETA', 'r', 2.0, []), (9, 'ALPHA', 'OM', 'r', 1.0, [])""")
    con.execute("CREATE TABLE communities (community BIGINT, entity_ids VARCHAR[])")
    con.execute("INSERT INTO communities VALUES (1, ['e1', 'e1']), (2, ['e2', 'e5']), (2, ['e5']), (3, []), (NULL, ['e1'])")
    con.execute("CREATE TABLE community_reports (community BIGINT, level BIGINT, title VARCHAR, summary VARCHAR, rank DOUBLE)")
    con.execute("INSERT INTO community_reports VALUES (1, 0, 'one', 's', 5.0), (2, 1, 'two', 's', NULL), (3, 1, 'three', 's', 9.0)")
    return con


@pytest.mark.parametrize("question", [
    "How do alpha and beta meet?", "Where is zeta, beside beta?", "What of gamma ray and gamma?",
    "Is om there?", "What is kappa?", "alphabet soup", "ALPHA", "Is ßeta or Zeta here?"])
def test_the_maps_choose_what_the_sql_chooses_on_tricky_tables(question):
    con = tricky_graph()
    assert graph_answers(con, question, GraphLookups()) == graph_answers(con, question, None)


def test_tables_the_maps_cannot_order_are_left_to_the_sql():
    con = tricky_graph()
    con.execute("INSERT INTO relationships VALUES (12, 'BETA', 'ALPHA', 'same id', 0.5, [])")   # ids tie
    lookups = GraphLookups()
    q = "How do alpha and beta meet?"
    assert graph_answers(con, q, lookups) == graph_answers(con, q, None)
    assert lookups._maps["relationship ends"] is UNMAPPED
    con.execute("DELETE FROM relationships WHERE description = 'same id'")
    con.execute("INSERT INTO relationships VALUES (16, 'ALPHA', 'BETA', 'nan', 'NaN'::DOUBLE, [])")
    lookups = GraphLookups()
    assert repr(graph_answers(con, q, lookups)) == repr(graph_answers(con, q, None))   # nan != nan
    assert lookups._maps["relationship ends"] is UNMAPPED


def test_a_served_question_reads_the_graph_through_the_versions_maps(sample_index):
    """serve/opened.py lends every cursor the version's one GraphLookups, and a served ask's
    answer is the CLI's."""
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask
    from provrag.serve.opened import OpenIndex

    opened = OpenIndex(sample_index)
    q = "Who leads the Halcyon commissioning team?"
    twin = opened.lend()
    try:
        assert twin.graph_lookups is opened.graph_lookups
        served = run_ask(q, sample_index, load_config(), save=False, reader=twin).to_json()
    finally:
        opened.give_back(twin, True)
    assert "relationship ends" in opened.graph_lookups._maps
    cli = run_ask(q, sample_index, load_config(), save=False).to_json()
    assert (served["answer"], served["citations"]) == (cli["answer"], cli["citations"])
