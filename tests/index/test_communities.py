"""Stage 6: hierarchical Leiden communities over the Operation Dulce skeleton graph."""
from __future__ import annotations

import datetime as dt

import polars as pl

from provrag.config import load_config
from provrag.index.communities import communities_stage
from provrag.index.tables import frame
from provrag.store import schema


def test_hierarchy_is_consistent(dulce_communities):
    com = dulce_communities
    assert com.height > 3 and com.schema == frame(schema.COMMUNITIES, []).schema
    rows = {r["community"]: r for r in com.iter_rows(named=True)}
    assert len(rows) == com.height                          # numbers unique across levels
    assert sorted(rows) == list(range(com.height))
    assert set(com["level"]) >= {0, 1}                      # the novella's graph needs splitting
    for r in rows.values():
        assert r["human_readable_id"] == r["community"] and r["title"] == f"Community {r['community']}"
        if r["level"] == 0:
            assert r["parent"] == -1
        else:
            parent = rows[r["parent"]]
            assert parent["level"] == r["level"] - 1
            assert r["community"] in parent["children"]
            assert set(r["entity_ids"]) <= set(parent["entity_ids"])
        for c in r["children"]:
            assert rows[c]["parent"] == r["community"]
    # level 0 partitions the clustered entities: no entity in two root communities
    roots = [e for r in rows.values() if r["level"] == 0 for e in r["entity_ids"]]
    assert len(roots) == len(set(roots))


def test_members_relationships_and_units(dulce_graph, dulce_communities):
    ents, rels, _ = dulce_graph
    com = dulce_communities
    units_of = dict(zip(ents["id"], ents["text_unit_ids"]))
    id_of = dict(zip(ents["title"], ents["id"]))
    ends = {rid: (id_of[s], id_of[t]) for rid, s, t in zip(rels["id"], rels["source"], rels["target"])}
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    for r in com.iter_rows(named=True):
        inside = set(r["entity_ids"])
        assert r["size"] == len(inside) == len(r["entity_ids"]) > 0 and inside <= set(units_of)
        assert r["text_unit_ids"] == sorted({u for e in inside for u in units_of[e]})
        expected = [rid for rid, (a, b) in ends.items() if a in inside and b in inside]
        assert sorted(r["relationship_ids"]) == sorted(expected)
        assert r["period"] == today
    # the offline graph of a novella is connected enough that nearly every entity is placed
    placed = {e for es in com["entity_ids"] for e in es}
    assert len(placed) >= 0.9 * ents.height


def test_entities_without_relationships_are_kept_through_their_units(dulce_graph):
    ents, rels, _ = dulce_graph
    # take away every relationship of the best-connected entity: it must still be clustered
    hub = ents.sort("degree", descending=True)["title"][0]
    cut = rels.filter((pl.col("source") != hub) & (pl.col("target") != hub))
    com = communities_stage(ents, cut, load_config())
    hub_id = ents.filter(pl.col("title") == hub)["id"][0]
    homes = com.filter(pl.col("entity_ids").list.contains(hub_id))
    assert homes.height >= 1 and homes["level"].min() == 0
    for rel_ids in homes["relationship_ids"]:
        assert not set(rel_ids) & set(rels.filter((pl.col("source") == hub) | (pl.col("target") == hub))["id"])


def test_largest_connected_component_option(dulce_graph, dulce_communities):
    ents, rels, _ = dulce_graph
    roots = dulce_communities.filter(pl.col("level") == 0).sort("size", descending=True)
    big, small = set(roots["entity_ids"][0]), set(roots["entity_ids"][1])
    title_id = dict(zip(ents["title"], ents["id"]))
    inside = lambda group: pl.struct("source", "target").map_elements(  # noqa: E731
        lambda r: title_id[r["source"]] in group and title_id[r["target"]] in group, return_dtype=pl.Boolean)
    two = rels.filter(inside(big) | inside(small))           # two components, nothing between
    bare = ents.with_columns(pl.lit([], dtype=pl.List(pl.String)).alias("text_unit_ids"))  # no helper edges
    both = communities_stage(bare, two, load_config())
    lcc = communities_stage(bare, two, load_config(overrides={"communities": {"use_lcc": True}}))
    placed = lambda c: {e for es in c["entity_ids"] for e in es}  # noqa: E731
    assert placed(both) & small and placed(both) & big
    assert placed(lcc) <= big and not placed(lcc) & small


def test_deterministic_and_seeded(dulce_graph, dulce_communities):
    ents, rels, _ = dulce_graph
    assert communities_stage(ents, rels, load_config()).equals(dulce_communities)


def test_empty_graph_gives_an_empty_table(dulce_graph):
    ents, rels, _ = dulce_graph
    for e, r in ((ents.head(0), rels.head(0)), (ents.head(1), rels.head(0))):
        com = communities_stage(e, r, load_config())
        assert com.height == 0 and com.schema == frame(schema.COMMUNITIES, []).schema
