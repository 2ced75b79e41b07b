"""Unit rows fetched by the index's row map (INDEX/retrieval/, read with pyarrow) are the rows
DuckDB finds by scanning text_units, and fetching them asks DuckDB nothing about text_units.

Why it matters: every fetch of an ask (its context, citations, the answer check) took this path
from 2026-11-30 on (issue 30); a row out of place would put a quote on the wrong page."""
from __future__ import annotations

import random

from provrag.store import units
from provrag.store.reader import open_index


class _Counted:
    """A DuckDB connection that records the SQL run through it."""

    def __init__(self, con):
        self._con, self.queries = con, []

    def execute(self, sql, *args):
        self.queries.append(sql)
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_rows_by_the_row_map_are_the_rows_duckdb_finds(squad_subset_index):
    with open_index(squad_subset_index) as reader:
        assert (reader.path / "retrieval").is_dir()     # an index this tree writes has the row map
        ids = [r[0] for r in reader.con.execute("SELECT id FROM text_units ORDER BY id").fetchall()]
        rng = random.Random(7)
        for n in (1, 3, 12, len(ids)):
            wanted = rng.sample(ids, min(n, len(ids))) + ["no-such-unit"]
            by_sql = units._fetch(reader, wanted, "text_units", None)     # DuckDB: id scan, rows by position
            plain = reader.con
            reader.con = counted = _Counted(plain)
            try:
                by_map = units.fetch_units(reader, wanted)
            finally:
                reader.con = plain
            assert by_map == by_sql and "no-such-unit" not in by_map and len(by_map) == len(set(wanted)) - 1
            assert not any("text_units" in q for q in counted.queries), counted.queries


def test_an_index_without_the_row_map_is_read_by_duckdb(squad_subset_index, tmp_path):
    import shutil

    copy = tmp_path / "idx"
    shutil.copytree(squad_subset_index, copy, ignore=shutil.ignore_patterns("retrieval", "queries"))
    with open_index(squad_subset_index) as with_map, open_index(copy) as without:
        ids = [r[0] for r in with_map.con.execute("SELECT id FROM text_units LIMIT 5").fetchall()]
        assert units.fetch_units(without, ids) == units.fetch_units(with_map, ids)
        assert len(units.fetch_units(without, ids)) == 5
