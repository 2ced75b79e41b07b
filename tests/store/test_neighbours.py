"""Each unit's previous and next unit, written at index time (store/neighbours.py): the same
continuations and antecedents as the SQL window over the units' documents, which an index
written before still gets; and text_units' row groups read once per process (store/units.py)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from provrag.query import retrieve
from provrag.store.neighbours import NEIGHBOURS, neighbours_by_row, unit_neighbours
from provrag.store.postings import folder_of
from provrag.store.reader import open_index


def _sql(r, ids, chars):
    saved = retrieve.neighbours_by_row
    retrieve.neighbours_by_row = lambda *a: None
    try:
        return retrieve._look_up_neighbours(r, ids, chars, None)
    finally:
        retrieve.neighbours_by_row = saved


@pytest.mark.parametrize("fixture", ["sample_index", "squad_subset_index"])
def test_every_unit_has_the_neighbours_the_sql_window_gives(fixture, request):
    index = request.getfixturevalue(fixture)
    assert (folder_of(index) / NEIGHBOURS).is_file()
    with open_index(index) as r:
        ids = [row[0] for row in r.con.execute("SELECT id FROM text_units").fetchall()]
        for chars in (600, 40):
            by_row = neighbours_by_row(index, ids, chars)
            assert by_row == _sql(r, ids, chars)
            assert by_row == retrieve._look_up_neighbours(r, ids, chars, None)
    # not a vacuous comparison: units do have neighbours on both sides
    assert sum(nxt is not None for nxt, _ in by_row.values()) >= len(ids) // 3
    assert sum(prv is not None for _, prv in by_row.values()) >= len(ids) // 3


def test_an_index_without_the_file_or_with_a_stale_one_is_read_by_sql(tmp_path, sample_index):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index, ignore=shutil.ignore_patterns("queries", "cache"))
    with open_index(index) as r:
        ids = [row[0] for row in r.con.execute("SELECT id FROM text_units").fetchall()]
    want = neighbours_by_row(index, ids, 600)
    np.save(folder_of(index) / NEIGHBOURS, np.full((len(ids) + 1, 2), -1, np.int64))   # written for other rows
    assert neighbours_by_row(index, ids, 600) is None
    (folder_of(index) / NEIGHBOURS).unlink()
    assert neighbours_by_row(index, ids, 600) is None
    with open_index(index) as r:
        assert retrieve._look_up_neighbours(r, ids, 600, None) == want


def test_neighbours_follow_char_start_within_a_document_wherever_the_rows_lie():
    # rows: a2 b1 a1 a3 (no start) b2 (no document) a4
    docs = ["a", "b", "a", "a", "b", None, "a"]
    starts = [100, 0, 0, None, 50, 0, 200]
    hrids = [2, 5, 1, 3, 6, 9, 4]
    got = unit_neighbours(docs, starts, hrids).tolist()
    assert got == [[2, 6], [-1, 4], [-1, 0], [-1, -1], [1, -1], [-1, -1], [0, -1]]
    # equal starts: human_readable_id decides, as the SQL's ORDER BY does
    assert unit_neighbours(["a", "a"], [0, 0], [8, 7]).tolist() == [[1, -1], [-1, 0]]


def test_row_groups_are_kept_within_their_budget(monkeypatch, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from provrag.store import schema, units

    n = 1000
    cols = {f.name: (pa.array([f"unit {i}" for i in range(n)]) if f.type == pa.string() else
                     pa.array(np.arange(n), f.type) if pa.types.is_integer(f.type) else pa.nulls(n, f.type))
            for f in schema.SCHEMAS[schema.TEXT_UNITS]}
    pq.write_table(pa.table(cols, schema=schema.SCHEMAS[schema.TEXT_UNITS]), tmp_path / "text_units.parquet",
                   row_group_size=100)
    one_group = pq.ParquetFile(tmp_path / "text_units.parquet").read_row_group(9, columns=list(units.UNIT_COLUMNS)).nbytes
    monkeypatch.setattr(units, "GROUPS_KEPT_BYTES", 3 * one_group)
    monkeypatch.setattr(units, "_groups", type(units._groups)())
    monkeypatch.setattr(units, "_groups_held", [0])
    wanted = [5, 150, 420, 421, 999, 640]
    first = units.read_rows(tmp_path, wanted)
    assert first["row_position"].to_pylist() == sorted(wanted) and first["text"].to_pylist()[0] == "unit 5"
    # groups 0, 1, 4, 6, 9 were read in that order: the first ones went, the last three stayed
    assert [key[2] for key in units._groups] == [4, 6, 9] and units._groups_held[0] <= 3 * one_group
    assert units.read_rows(tmp_path, wanted).equals(first)


def test_an_index_written_before_the_file_is_written_again_by_the_next_run(tmp_path, sample_data, sample_index):
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    index = tmp_path / "idx"
    shutil.copytree(sample_index, index, ignore=shutil.ignore_patterns("queries"))
    assert run_index(sample_data, index, load_config()).mode == "up to date"      # nothing changed: left as it was
    (folder_of(index) / NEIGHBOURS).unlink()
    summary = run_index(sample_data, index, load_config())
    assert summary.mode == "update" and (folder_of(index) / NEIGHBOURS).is_file()
    with open_index(index) as r:
        ids = [row[0] for row in r.con.execute("SELECT id FROM text_units").fetchall()]
        assert neighbours_by_row(index, ids, 600) == _sql(r, ids, 600)
