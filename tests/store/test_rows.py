"""store/rows.py: Python rows → an Arrow table through pyarrow's JSON reader, the same table
Table.from_pylist makes, without pyarrow's pandas shim (issue #30)."""
from __future__ import annotations

import math

import pyarrow as pa

from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.store import provenance
from provrag.store.rows import string_array, table_from_rows
from provrag.store.traces import trace_schema


def test_a_real_asks_rows_make_the_same_tables_as_from_pylist(sample_index):
    trace = run_ask("Who leads the Halcyon commissioning team?", sample_index, load_config(), save=False).trace
    for table, rows in (("retrievals", provenance.retrieval_rows(trace)), ("citations", provenance.citation_rows(trace))):
        assert rows, table
        schema = provenance.schema(table)
        assert table_from_rows(rows, schema).equals(pa.Table.from_pylist(rows, schema=schema)), table


def test_odd_values_are_kept_as_from_pylist_keeps_them():
    schema = provenance.schema("retrievals")
    rows = [{"trace_id": "t1", "score": float("nan"), "rank": 1, "components": {"bm25": 1 / 3}, "not_a_column": 5,
             "influence": [{"term": "é\u2028x", "channel": "bm25", "weight": 1e-300}]},
            {"trace_id": "t2", "score": float("inf"), "question": None}]
    got = table_from_rows(rows, schema)
    assert got.schema == schema and got.num_rows == 2
    assert got.to_pylist()[0]["components"]["bm25"] == 1 / 3
    assert math.isnan(got.column("score")[0].as_py()) and got.column("score")[1].as_py() == math.inf
    assert got.column("influence")[0].as_py()[0] == {"term": "é\u2028x", "channel": "bm25", "weight": 1e-300}
    assert table_from_rows([], schema).num_rows == 0


def test_a_row_larger_than_a_read_block_and_a_string_array():
    row = {"trace_id": "t", "trace_json": "x" * (3 << 20), "n_citations": 2, "total_ms": 12.5}
    got = table_from_rows([row], trace_schema())
    assert got.equals(pa.Table.from_pylist([row], schema=trace_schema()))
    assert string_array(["a", None, "b'c"]).to_pylist() == ["a", None, "b'c"]
