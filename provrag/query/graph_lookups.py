"""A served index's graph, looked up rather than scanned: which relationships touch the entities
a question names, and which communities hold them, answered from maps read once per index
version: the same rows in the same order as the SQL in query/local_search.py.

Why: the SQL scans a whole table per question, and its cost grows with the graph. Over the 606
TeX Live manuals (29,207 entities, 201,739 relationships, 7,941 communities) local search's
relationships and reports took ~50 and ~45 ms of every served question: every relationship's
description and unit list decoded before the filter, every community's entity list read to
find the few that hold an entity. With the maps, ~25 and ~11 ms (the rows chosen are still read
from the parquet file). A CLI ask asks once per process, where reading the maps (~0.1-0.5 s)
would cost more than the scans they save: only a server's readers carry a GraphLookups
(serve/opened.py, beside its KeptUnits).

Each map is an index into its table, not a copy: the maps choose the keys, SQL reads the rows.
A table whose keys cannot decide the SQL's order (duplicate or null ids, NaN weights, null ends
of a relationship) is not mapped, and its questions go to the SQL as before. (Entity matching
stays a scan: given the few titles a question holds, DuckDB still decodes the descriptions and
unit lists of every row group, so choosing the rows by a map of titles gained nothing.)
"""
from __future__ import annotations

import threading

UNMAPPED = object()   # a table the lookups leave to the SQL


class GraphLookups:
    """The graph maps of one index version, each read on its first use and shared by every
    cursor of the version (thread-safe; read-only once read)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._maps: dict[str, object] = {}

    def _map(self, con, name: str, read):
        with self._lock:
            if name not in self._maps:
                try:
                    self._maps[name] = read(con)
                except Exception:   # a table it cannot read its way: the SQL reads it, as without lookups
                    self._maps[name] = UNMAPPED
            return self._maps[name]

    def relationship_ids(self, con, titles: list[str], limit: int) -> list[int] | None:
        """The human_readable_ids of the `limit` relationships local search shows for `titles`,
        in its order: those between two of them first, then by weight (nulls last), then by id.
        None: no map; the caller scans."""
        import numpy as np

        m = self._map(con, "relationship ends", _relationship_ends)
        if m is UNMAPPED:
            return None
        codes = np.array([m["code"][t] for t in dict.fromkeys(titles) if t in m["code"]], dtype=np.int64)
        if not codes.size:
            return []
        src, tgt = np.isin(m["source"], codes), np.isin(m["target"], codes)
        hit = np.flatnonzero(src | tgt)
        both = (src[hit] & tgt[hit]).astype(np.int8)
        weight = m["weight"][hit]
        null = np.isnan(weight)   # NaN stands for NULL here: a table with a real NaN is not mapped
        order = np.lexsort((m["hrid"][hit], -np.where(null, 0.0, weight), null, -both))[:limit]
        return [int(x) for x in m["hrid"][hit[order]]]

    def communities_of(self, con, entity_ids: list[str]) -> list[int] | None:
        """The community of every communities row whose entity_ids hold one of `entity_ids`, once
        per such row (as the SQL's join yields it). None: no map; the caller scans."""
        m = self._map(con, "entity communities", _entity_communities)
        if m is UNMAPPED:
            return None
        rows = sorted({r for e in entity_ids for r in m["rows"].get(e, ())})
        return [m["community"][r] for r in rows]


def _relationship_ends(con) -> object:
    """Each relationship's ends as codes of their titles, its weight and id, as numpy arrays."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = con.sql("SELECT source, target, weight, human_readable_id FROM relationships").to_arrow_table()
    src, tgt = (t.column(c).combine_chunks().cast(pa.string()) for c in ("source", "target"))
    hrid, weight = (t.column(c).combine_chunks() for c in ("human_readable_id", "weight"))
    if src.null_count or tgt.null_count or hrid.null_count or len(pc.unique(hrid)) != len(hrid) \
            or bool(pc.any(pc.is_nan(pc.drop_null(weight))).as_py() or False):
        return UNMAPPED   # the SQL's order would rest on NULL or NaN rules, or on ties of ids
    names = pc.unique(pa.concat_arrays([src, tgt]))
    return {"code": {n: i for i, n in enumerate(names.to_pylist())},
            "source": pc.index_in(src, value_set=names).to_numpy(zero_copy_only=False).astype(np.int64),
            "target": pc.index_in(tgt, value_set=names).to_numpy(zero_copy_only=False).astype(np.int64),
            "weight": pc.fill_null(pc.cast(weight, "float64"), float("nan")).to_numpy(zero_copy_only=False),
            "hrid": hrid.to_numpy(zero_copy_only=False).astype(np.int64)}


def _entity_communities(con) -> dict:
    """{"rows": {entity id: (row, ...)}, "community": [each row's community]} over the communities
    rows with a community."""
    rows: dict[str, list[int]] = {}
    community = []
    for n, (c, ids) in enumerate(con.execute(
            "SELECT community, entity_ids FROM communities WHERE community IS NOT NULL").fetchall()):
        community.append(c)
        for e in dict.fromkeys(ids or ()):
            rows.setdefault(e, []).append(n)
    return {"rows": rows, "community": community}
