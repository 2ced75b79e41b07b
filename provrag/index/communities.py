"""Stage 6 — communities: hierarchical Leiden over the entity graph, GraphRAG's table.

graspologic-native's `hierarchical_leiden` is the implementation GraphRAG itself calls (and
networkx's `leiden_communities` has no backend here). As in GraphRAG: level 0 is the root
partition; a cluster of `max_cluster_size` or more entities is split again one level down, so
deeper levels hold only the split parts; community numbers are unique across levels (we
renumber graspologic's cluster ids 0…n−1 in (level, cluster id) order so `Reports (n)`
citations stay small and dense); `parent` is −1 at level 0; `children` lists the next level.

Entities without relationships: GraphRAG clusters only nodes that have edges, so an entity
its extractor linked to nothing never reaches a report and a `Reports (n)` citation can never
lead to its text. provrag keeps such entities when it can place them: an isolated entity
is joined, for clustering only, to the entities that share a text unit with it (weight 0.1
per shared unit, a tenth of one co-occurring sentence, so real relationships dominate). These
helper edges are not relationships and never appear in `relationship_ids`. An entity that
shares no unit with any other stays out of every community, as in GraphRAG.

Deterministic: nodes and edges are fed in sorted order with a fixed seed.
"""
from __future__ import annotations

import datetime as dt
from collections import defaultdict

from provrag.config import Config
from provrag.index.tables import frame
from provrag.store import schema

_HELPER_WEIGHT = 0.1


def _edges(entities, relationships) -> dict[tuple[str, str], float]:
    """Undirected weighted edges between entity ids (relationships + isolate helpers)."""
    id_of = dict(zip(entities["title"].to_list(), entities["id"].to_list()))
    edges: dict[tuple[str, str], float] = defaultdict(float)
    for s, t, w in zip(relationships["source"].to_list(), relationships["target"].to_list(),
                       relationships["weight"].to_list()):
        a, b = id_of.get(s), id_of.get(t)
        if a is None or b is None or a == b:
            continue
        edges[(a, b) if a < b else (b, a)] += float(w) if w is not None and w > 0 else 1.0
    linked = {x for pair in edges for x in pair}
    by_unit: dict[str, list[str]] = defaultdict(list)
    for eid, units in zip(entities["id"].to_list(), entities["text_unit_ids"].to_list()):
        for u in units or []:
            by_unit[u].append(eid)
    helpers: dict[tuple[str, str], float] = defaultdict(float)
    for members in by_unit.values():
        lonely = [e for e in members if e not in linked]
        for a in lonely:
            for b in members:
                if a != b:
                    helpers[(a, b) if a < b else (b, a)] += _HELPER_WEIGHT
    for pair, w in helpers.items():
        edges.setdefault(pair, w)  # two isolates only get a helper edge once
    return edges


def _largest_component(edges: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    import networkx as nx

    g = nx.Graph()
    g.add_edges_from(edges)
    if g.number_of_nodes() == 0:
        return edges
    best = max(nx.connected_components(g), key=lambda c: (len(c), min(c)))
    return {p: w for p, w in edges.items() if p[0] in best}


def _leiden(edges: dict[tuple[str, str], float], max_cluster_size: int, seed: int):
    """[(level, cluster, parent_cluster | None, node)] from graspologic-native."""
    from graspologic_native import hierarchical_leiden

    ordered = [(a, b, w) for (a, b), w in sorted(edges.items())]
    result = hierarchical_leiden(ordered, max_cluster_size=max_cluster_size, seed=seed)
    return [(c.level, c.cluster, c.parent_cluster, c.node) for c in result]


def communities_stage(entities, relationships, cfg: Config):
    """The communities table (polars) for the entity graph; empty table for an empty graph."""
    ccfg = cfg.communities
    max_size = max(2, int(ccfg.max_cluster_size))
    seed = int(ccfg.seed)
    period = dt.datetime.now(dt.timezone.utc).date().isoformat()
    empty = frame(schema.COMMUNITIES, [])
    if entities is None or entities.height == 0:
        return empty

    edges = _edges(entities, relationships)
    if ccfg.use_lcc:
        edges = _largest_component(edges)
    if not edges:
        return empty
    assignments = _leiden(edges, max_size, seed)

    members: dict[tuple[int, int], set[str]] = defaultdict(set)
    parent_of: dict[int, int | None] = {}
    for level, cluster, parent, node in assignments:
        members[(level, cluster)].add(node)
        parent_of[cluster] = parent
    number = {cl: i for i, (_, cl) in enumerate(sorted(members))}  # dense, unique across levels
    children: dict[int, list[int]] = defaultdict(list)
    for (_, cl) in sorted(members):
        p = parent_of.get(cl)
        if p is not None and p in number:
            children[number[p]].append(number[cl])

    e_hrid = dict(zip(entities["id"].to_list(), entities["human_readable_id"].to_list()))
    e_units = dict(zip(entities["id"].to_list(), entities["text_unit_ids"].to_list()))
    id_of = dict(zip(entities["title"].to_list(), entities["id"].to_list()))
    comm_of: dict[int, dict[str, int]] = defaultdict(dict)  # level -> entity -> community
    for (level, cl), nodes in members.items():
        for e in nodes:
            comm_of[level][e] = number[cl]
    rels_in: dict[int, list[str]] = defaultdict(list)  # relationships with both ends inside
    for _, rid, s, t in sorted(zip(relationships["human_readable_id"].to_list(), relationships["id"].to_list(),
                                   relationships["source"].to_list(), relationships["target"].to_list())):
        a, b = id_of.get(s), id_of.get(t)
        for level_map in comm_of.values():
            c = level_map.get(a)
            if c is not None and c == level_map.get(b):
                rels_in[c].append(rid)
    rows = []
    for (level, cl), nodes in sorted(members.items(), key=lambda kv: number[kv[0][1]]):
        n = number[cl]
        ents = sorted(nodes, key=lambda e: (e_hrid.get(e, 0), e))
        rels = rels_in.get(n, [])
        units = sorted({u for e in ents for u in (e_units.get(e) or [])})
        p = parent_of.get(cl)
        rows.append({
            schema.ID: schema.content_id("community", str(level), *ents), schema.HRID: n,
            schema.COMMUNITY: n, schema.LEVEL: level, schema.PARENT: number[p] if p is not None and p in number else -1,
            schema.CHILDREN: sorted(children.get(n, [])), schema.TITLE: f"Community {n}",
            schema.ENTITY_IDS: ents, schema.RELATIONSHIP_IDS: rels, schema.TEXT_UNIT_IDS: units,
            "period": period, "size": len(ents),
        })
    return frame(schema.COMMUNITIES, rows)
