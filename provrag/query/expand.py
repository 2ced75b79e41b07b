"""Cited ids → candidate text units, each with the route that reached it (CONTRACT.md §4, step 1).

`[Data: Reports (4)]` reaches every text unit of community 4, `Entities (7)` / `Relationships
(7)` the units the graph element was extracted from, `Claims (7)` its one unit, `Sources (7)`
the unit itself. Every lookup is one SQL query per citation kind over the parquet views, with
the ids inlined (pushed into the scan). The resolver (provrag/query/resolve.py) then ranks the
candidates of each cited sentence.

GraphRAG before v2.6 numbered `Sources (n)` by the unit's row position in the loaded table,
not by human_readable_id (GraphRAG #1871): for graphrag-v1/v2 indexes both readings are
candidates, each with its route spelled out.

A reader that resolves a second time builds two in-memory lookup tables (`Lookups`) so
repeated resolutions skip the two scans parquet cannot prune.
"""
from __future__ import annotations

from provrag.store.units import sql_in, sql_strings
from provrag.text.similarity import content_words

OLD_SOURCES = ("graphrag-v1", "graphrag-v2")   # index kinds whose Sources ids may be row positions
CACHE_MIN_UNITS = 50_000   # below this, direct parquet lookups take a few ms already


def _ints(ids) -> str:
    return ", ".join(str(int(i)) for i in ids)


class Lookups:
    """Two small TEMP tables that turn the costly lookups into in-memory ones.

    On a large index the two costs of a resolution are decoding communities.text_unit_ids
    (a parquet list column is decoded whole, whatever the filter) and scanning
    text_units.id (random hashes: no min/max pruning). A one-shot `provrag resolve` pays each
    once, batched for the whole answer. A reader that resolves again (ask/verify loops, a
    notebook, a server) builds these once instead, in DuckDB's memory (~16 bytes per
    community-unit pair, ~80 bytes per unit): unit id → row position, and community → row
    positions of its units, sorted so DuckDB's zone maps find a community without a scan.
    """

    UNITS = "_prv_units"       # (id, hrid, row_position): store.units.fetch_units' `positions` table
    COMMUNITIES = "_prv_comm"  # (community, row_position)

    def __init__(self, reader):
        con = reader.con
        con.execute(f"CREATE OR REPLACE TEMP TABLE {self.UNITS} AS SELECT id, human_readable_id AS hrid, "
                    "row_position FROM text_units ORDER BY row_position")
        con.execute(f"CREATE OR REPLACE TEMP TABLE {self.COMMUNITIES} AS SELECT c.community, u.row_position "
                    "FROM (SELECT community, unnest(text_unit_ids) AS tu FROM communities) c "
                    f"JOIN {self.UNITS} u ON u.id = c.tu ORDER BY c.community, u.row_position")


def lookups(reader) -> Lookups | None:
    """The reader's lookup tables: built on its second resolution, if the index is large."""
    st = reader.__dict__.setdefault("_prv_resolve", {"calls": 0, "lookups": None, "units": None})
    st["calls"] += 1
    if st["lookups"] is None and st["calls"] >= 2:
        if st["units"] is None:
            st["units"] = reader.count("text_units")
        if st["units"] >= CACHE_MIN_UNITS:
            st["lookups"] = Lookups(reader)
    return st["lookups"]


def expand(reader, wanted: dict[str, set[int]], lk: Lookups | None = None) -> tuple[dict, set]:
    """{(kind, id): [(unit_id, via)]} for the ids that exist, and the set of missing ones."""
    con = reader.con
    units = Lookups.UNITS if lk else "text_units"
    hrid = "hrid" if lk else "human_readable_id"
    found: dict[tuple[str, int], list] = {}
    for kind, ids in wanted.items():
        if not ids:
            continue
        lst = _ints(sorted(ids))
        if kind == "Reports":
            rows = con.execute(
                f"SELECT DISTINCT community FROM community_reports WHERE community IN ({lst})").fetchall()
            exist = {int(r[0]) for r in rows}
            for c in exist:
                found[(kind, c)] = []
            if exist and lk:
                for c, tu in con.execute(
                        f"SELECT c.community, u.id FROM {Lookups.COMMUNITIES} c JOIN {Lookups.UNITS} u "
                        f"USING (row_position) WHERE c.community IN ({_ints(exist)}) "
                        f"ORDER BY c.community, u.row_position").fetchall():
                    found[(kind, int(c))].append((tu, f"Report {c} → community {c}"))
            elif exist:
                for c, tus in con.execute(
                        f"SELECT community, text_unit_ids FROM communities WHERE community IN ({_ints(exist)})").fetchall():
                    for tu in tus or []:
                        found[(kind, int(c))].append((tu, f"Report {c} → community {c}"))
        elif kind in ("Entities", "Relationships"):
            table, label = ("entities", "title") if kind == "Entities" else \
                ("relationships", "source || ' – ' || target")
            rows = con.execute(
                f"SELECT human_readable_id, {label}, text_unit_ids FROM {table} "
                f"WHERE human_readable_id IN ({lst})").fetchall()
            word = "Entity" if kind == "Entities" else "Relationship"
            for h, name, tus in rows:
                routes = found.setdefault((kind, int(h)), [])
                via = f"{word} {h}" + (f" ({name})" if name else "")
                routes.extend((tu, via) for tu in (tus or []))
        elif kind == "Claims":
            rows = con.execute(
                f"SELECT human_readable_id, text_unit_id FROM covariates WHERE human_readable_id IN ({lst})").fetchall()
            for h, tu in rows:
                routes = found.setdefault((kind, int(h)), [])
                if tu:
                    routes.append((tu, f"Claim {h}"))
        elif kind == "Sources":
            rows = con.execute(f"SELECT {hrid}, id FROM {units} WHERE {hrid} IN ({lst})").fetchall()
            for h, tu in rows:
                found.setdefault((kind, int(h)), []).append((tu, f"Source {h}"))
            if reader.kind in OLD_SOURCES:
                rows = con.execute(f"SELECT row_position, id FROM {units} WHERE row_position IN ({lst})").fetchall()
                for pos, tu in rows:
                    found.setdefault((kind, int(pos)), []).append(
                        (tu, f"Source {pos} → row {pos} (GraphRAG < 2.6 numbering, #1871)"))
    missing = {(k, i) for k, ids in wanted.items() for i in ids if (k, i) not in found}
    return found, missing


def prefilter(reader, unit_ids: list[str], sentence: str, limit: int, tag: str) -> list[str]:
    """The `limit` candidates whose text holds most of the sentence's content words (in DuckDB):
    a huge community is narrowed before its units' text reaches Python."""
    words = sorted(set(content_words(sentence)), key=len, reverse=True)[:24]
    if words:
        hits = " + ".join(f"CAST(contains(lower(text), {sql_strings([w])}) AS INTEGER)" for w in words)
    else:
        hits = "0"
    sql = (f"SELECT id FROM text_units WHERE {sql_in(reader.con, 'id', unit_ids, tag)} "
           f"ORDER BY {hits} DESC, human_readable_id LIMIT {int(limit)}")
    return [r[0] for r in reader.con.execute(sql).fetchall()]
