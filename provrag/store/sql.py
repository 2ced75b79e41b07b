"""`provrag sql`: one read-only SQL query over an index's tables and its provenance.

The views: the index's tables as provrag/store/reader.py normalises them (documents,
text_units, entities, relationships, communities, community_reports, covariates, keywords,
embeddings — the same views every command reads, whatever GraphRAG generation is on disk),
plus `traces` (one row per stored ask/verify trace), `retrievals` and `citations`
(store/provenance.py), over the index's queries/ folder and its user fallback.

Read-only, three ways, none of them a regex over the query:
- DuckDB's own parser (`duckdb.extract_statements`) must find exactly one statement, of type
  SELECT (WITH, VALUES, FROM-first, DESCRIBE, SUMMARIZE and SHOW parse as SELECT too);
  INSERT, CREATE, COPY, ATTACH, INSTALL/LOAD, SET, PRAGMA, EXPORT, CALL … are refused;
- the database is a fresh in-memory one, never the index's files, which DuckDB only reads;
- after the views exist, file access is confined to the folders they read
  (`allowed_directories`, then `enable_external_access = false`) and the configuration is
  locked, so read_csv('/etc/passwd'), glob(), ATTACH or COPY fail even inside a SELECT, and no
  statement can undo it. (DuckDB checks file access when a view is queried, not when it is
  created, so turning access off entirely would break the views themselves.)
A timer interrupts the query after `timeout_s` (DuckDB's `interrupt()`), and at most `limit`
rows are returned (`truncated` says when there were more).
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from provrag.errors import UsageError
from provrag.store.provenance import TABLES, schema
from provrag.store.traces import stored_files, trace_dirs, trace_schema

MAX_LIMIT = 100_000


class SqlError(UsageError):
    """A refused, failed or timed-out query (one-line message; the CLI exits 2)."""


@dataclass
class SqlResult:
    """The rows of one query: column names, rows (tuples of JSON-able values), and whether
    rows beyond `limit` were left out."""

    columns: list[str]
    rows: list[tuple] = field(default_factory=list)
    truncated: bool = False
    ms: float = 0.0

    def to_json(self) -> dict:
        return {"columns": self.columns, "rows": [list(r) for r in self.rows], "truncated": self.truncated,
                "row_count": len(self.rows), "ms": self.ms}


def jsonable(v):
    """A DuckDB value as JSON: structs and maps as objects, lists as arrays, times as ISO text,
    decimals and non-finite floats as numbers or null, bytes as hex."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (dt.timedelta, uuid.UUID)):
        return str(v)
    return str(v)


def _one_select(query: str):
    """The query's one statement, if it is a read (SELECT); SqlError otherwise."""
    import duckdb

    if not isinstance(query, str) or not query.strip():
        raise SqlError("the query is empty")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:  # a byte the shell passed undecoded (PEP 383): DuckDB takes UTF-8 text only
        raise SqlError("the query is not UTF-8 text") from None
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as e:
        raise SqlError(_one_line(e)) from None
    if len(statements) != 1:
        raise SqlError(f"give exactly one SQL statement (found {len(statements)})")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise SqlError(f"only a read (SELECT / WITH / FROM …) is allowed; this is a statement of type {kind.name}")
    return statements[0]


def _one_line(e: Exception) -> str:
    lines = [x.strip() for x in str(e).splitlines() if x.strip()]
    return (lines[0] if lines else type(e).__name__)[:300]


def _sql_text(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _stored_view(con, name: str, files: list[Path], arrow_schema) -> None:
    """A view over stored parquet files; with none, an empty table of the same columns."""
    if files:
        listed = ", ".join(_sql_text(str(f)) for f in sorted(files))
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}], union_by_name = true)")
        return
    empty = arrow_schema.empty_table()
    con.register("_provrag_empty", empty)
    try:
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _provrag_empty")
    finally:
        con.unregister("_provrag_empty")


def _lock(con, folders: list[Path]) -> None:
    """From here on, files are read only inside `folders`, and no setting can change."""
    allowed = ", ".join(_sql_text(str(Path(f).absolute()).rstrip("/") + "/") for f in folders)
    con.execute(f"SET allowed_directories = [{allowed}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def run_sql(index_path, query: str, timeout_s: float = 10, limit: int = 1000) -> SqlResult:
    """Run one read-only query over the index's views and its traces, retrievals and
    citations (see the module docstring). SqlError (a UsageError: the CLI exits 2) when the
    query is not a single read, fails, or runs past `timeout_s`; IndexNotFound when the
    folder holds no index."""
    import time

    import duckdb

    from provrag.store.reader import open_index

    if not (isinstance(limit, int) and 0 < limit <= MAX_LIMIT):
        raise SqlError(f"limit must be between 1 and {MAX_LIMIT:,} (got {limit})")
    if not (isinstance(timeout_s, (int, float)) and 0 < timeout_s <= 3600):
        raise SqlError(f"timeout must be between 0 and 3600 seconds (got {timeout_s})")
    statement = _one_select(query)
    with open_index(index_path) as reader:   # a connection of its own: locking it touches nobody else
        con = reader.con
        try:
            _stored_view(con, "traces", stored_files(reader.path), trace_schema())
            for table in TABLES:
                _stored_view(con, table, stored_files(reader.path, table), schema(table))
        except duckdb.Error as e:   # a damaged trace file: say so, in one line
            raise SqlError(f"cannot read the stored traces of {reader.path}: {_one_line(e)}") from None
        _lock(con, [reader.path, *trace_dirs(reader.path)])
        timer = threading.Timer(float(timeout_s), con.interrupt)
        t0 = time.perf_counter()
        timer.start()
        try:
            cur = con.execute(statement.query)
            columns = [d[0] for d in cur.description or []]
            rows = cur.fetchmany(limit + 1)
        except duckdb.InterruptException:
            raise SqlError(f"the query ran longer than {timeout_s:g} s and was stopped") from None
        except duckdb.Error as e:
            if not timer.is_alive() and time.perf_counter() - t0 >= timeout_s:
                raise SqlError(f"the query ran longer than {timeout_s:g} s and was stopped") from None
            raise SqlError(_one_line(e)) from None
        finally:
            timer.cancel()
        ms = round((time.perf_counter() - t0) * 1000, 2)
    return SqlResult(columns, [tuple(jsonable(v) for v in r) for r in rows[:limit]], len(rows) > limit, ms)
