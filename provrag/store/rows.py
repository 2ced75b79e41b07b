"""Python rows → a typed Arrow table, without importing pandas.

pyarrow turns every Python list (or numpy object array) into an array through its pandas shim,
which imports pandas on first use: ~0.3 s and ~40 MB in a process that otherwise never needs it
(measured: one `provrag ask` writes its trace and paid both). pyarrow's JSON reader parses JSON
lines into a table of an explicit schema in C++ and never asks for pandas, so rows go through it.
Floats survive exactly (json writes repr(), which round-trips; NaN and infinities included);
keys a schema does not name are ignored and missing keys are null, as Table.from_pylist does.
"""
from __future__ import annotations

import io
import json


def _plain(value):
    """numpy scalars (and anything else json does not know) as plain Python values."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not a table value")


def int64_column(values):
    """Integers (a list or a numpy array) as an Arrow int64 array made from their buffer: pa.array()
    of either goes through the pandas shim too."""
    import numpy as np
    import pyarrow as pa

    data = np.ascontiguousarray(np.asarray(values, dtype=np.int64))
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def table_from_rows(rows: list[dict], schema):
    """The rows as a pyarrow Table of `schema` (same values as Table.from_pylist(rows, schema=schema))."""
    import pyarrow.json as pj

    if not rows:
        return schema.empty_table()
    data = "\n".join(json.dumps(row, ensure_ascii=False, default=_plain) for row in rows).encode("utf-8")
    # one block holds the whole input: a row (a whole trace as JSON) may be larger than the 1 MB default
    read = pj.ReadOptions(use_threads=False, block_size=max(1 << 20, len(data) + 1))
    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    table = pj.read_json(io.BytesIO(data), read_options=read, parse_options=parse)
    # the reader keeps the schema's order, but a column no row names comes back missing
    return table if table.schema.names == schema.names else _complete(table, schema)


def _complete(table, schema):
    """Add the schema's columns no row had (all null), in the schema's order."""
    import pyarrow as pa

    cols = [table.column(f.name) if f.name in table.schema.names else pa.nulls(table.num_rows, f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def string_array(values):
    """A pyarrow string array of the values, through the same pandas-free path."""
    import pyarrow as pa

    schema = pa.schema([("v", pa.string())])
    return table_from_rows([{"v": v} for v in values], schema).column("v").combine_chunks()


def strings_of(fixed):
    """A numpy array of fixed-width UTF-8 bytes ('S' dtype, NUL-padded) as an Arrow string array,
    built from buffers: pyarrow's conversion of a numpy 'S' array goes through its pandas shim and
    imports pandas (~0.3 s, ~40 MB) into every cold ask (tests/test_cold_ask.py)."""
    import numpy as np
    import pyarrow as pa

    n = len(fixed)
    lengths = np.char.str_len(fixed).astype(np.int32) if n else np.zeros(0, np.int32)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    width = fixed.dtype.itemsize
    data = np.zeros(0, np.uint8)
    if n:   # row by row, each term's bytes up to its length (NUL padding dropped)
        grid = np.ascontiguousarray(fixed).view(np.uint8).reshape(n, width)
        data = grid[np.arange(width)[None, :] < lengths[:, None]]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))
