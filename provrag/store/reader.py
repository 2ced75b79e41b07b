"""One read-only view over a provrag index or a Microsoft GraphRAG output folder (v1/v2/v3).

Everything is a DuckDB VIEW over `read_parquet(...)`: nothing is loaded until a query runs,
and then DuckDB reads only the columns and row groups the query needs. That is what keeps
resolution fast on a million text units, where GraphRAG's own query code (and the usual
notebook recipe) first reads every table whole into pandas.

The views carry GraphRAG v3 / provrag column names whatever the generation on disk:

| on disk                              | view                                            |
| ------------------------------------ | ----------------------------------------------- |
| v1 `create_final_<table>.parquet`    | `<table>`                                       |
| v1/v2 text_units.document_ids (list) | document_id (first id) and document_ids         |
| v1 reports.rank_explanation          | rating_explanation                              |
| v1 entities without frequency/degree | frequency = len(text_unit_ids), degree from create_final_nodes |
| any column absent (pages, paths…)    | NULL of the contract's type                     |

text_units also has `row_position` (0-based row in the file): GraphRAG before v2.6 numbered
`Sources (n)` by that row position, not by human_readable_id (which starts at 1 in v1/v2
tables — GraphRAG #1871); the resolver uses it for those generations.
"""
from __future__ import annotations

from pathlib import Path

from provrag.errors import UsageError
from provrag.store.schema import SCHEMAS

KINDS = ("provrag", "graphrag-v1", "graphrag-v2", "graphrag-v3")
TABLES = ("documents", "text_units", "entities", "relationships", "communities",
          "community_reports", "covariates", "keywords", "embeddings", "sections")

# GraphRAG's covariates (claims) table: not in provrag's schema, same columns in v1–v3
COVARIATES = [("id", "VARCHAR"), ("human_readable_id", "BIGINT"), ("covariate_type", "VARCHAR"),
              ("type", "VARCHAR"), ("description", "VARCHAR"), ("subject_id", "VARCHAR"),
              ("object_id", "VARCHAR"), ("status", "VARCHAR"), ("start_date", "VARCHAR"),
              ("end_date", "VARCHAR"), ("source_text", "VARCHAR"), ("text_unit_id", "VARCHAR")]


class IndexNotFound(UsageError):
    """The folder is missing or holds no readable index (message is one line)."""


def _duck_type(t) -> str:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_list(t):
        return _duck_type(t.value_type) + "[]"
    if pa.types.is_map(t):
        return f"MAP({_duck_type(t.key_type)}, {_duck_type(t.item_type)})"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f"{f.name} {_duck_type(f.type)}" for f in t) + ")"
    raise TypeError(f"no DuckDB type for {t}")


def _target_columns(table: str) -> list[tuple[str, str]]:
    if table == "covariates":
        return COVARIATES
    return [(f.name, _duck_type(f.type)) for f in SCHEMAS[table]]


def _q(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _find_root(path: Path) -> tuple[Path, str] | None:
    """(folder, kind) of the index at path, also looking into GraphRAG's `output/` layouts."""
    def kind_of(p: Path) -> str | None:
        if (p / "create_final_text_units.parquet").is_file():
            return "graphrag-v1"
        tu = p / "text_units.parquet"
        if not tu.is_file():
            return None
        if (p / "manifest.json").is_file():
            return "provrag"
        try:
            import pyarrow.parquet as pq

            names = set(pq.read_schema(tu).names)
        except Exception as e:
            raise IndexNotFound(f"cannot read {tu}: {str(e).splitlines()[0][:160]}") from None
        if "page_start" in names:
            return "provrag"
        return "graphrag-v3" if "document_id" in names else "graphrag-v2"

    cands = [path, path / "output", path / "artifacts"]
    # GraphRAG < 1.0 wrote output/<timestamp>/artifacts/: take the newest run
    runs = sorted((path / "output").glob("*/artifacts")) if (path / "output").is_dir() else []
    cands += runs[::-1]
    for c in cands:
        if c.is_dir():
            k = kind_of(c)
            if k:
                return c, k
    return None


def open_index(path) -> "IndexReader":
    """Open a provrag or GraphRAG index folder; IndexNotFound (one line) when it is not one."""
    p = Path(path)
    if not p.exists():
        raise IndexNotFound(f"no such index folder: {p}")
    if not p.is_dir():
        raise IndexNotFound(f"not a folder: {p}")
    found = _find_root(p)
    if found is None:
        raise IndexNotFound(f"not an index folder (no text_units.parquet or create_final_text_units.parquet): {p}")
    return IndexReader(*found)


def reading(path, reader: "IndexReader | None" = None):
    """A context giving `reader` itself when the caller holds one open (a server keeps it
    between requests, and closes it), else the index at `path`, opened now and closed on exit."""
    from contextlib import nullcontext

    return nullcontext(reader) if reader is not None else open_index(path)


class IndexReader:
    """DuckDB views over one index; see the module docstring for the normalisation."""

    def __init__(self, path: Path, kind: str):
        import duckdb

        self.path = Path(path)
        self.kind = kind
        self.has_pages = kind == "provrag"
        self.con = duckdb.connect()
        self._embedder = False  # not yet loaded
        self.tables: dict[str, Path | None] = {}
        try:
            for t in TABLES:
                self._create_view(t)
        except IndexNotFound:
            self.con.close()
            raise
        except Exception as e:  # corrupt parquet footers, unexpected types
            self.con.close()
            raise IndexNotFound(f"cannot read index {self.path}: {str(e).splitlines()[0][:160]}") from None

    # ---- views --------------------------------------------------------------------------

    def _file(self, table: str) -> Path | None:
        if table in ("keywords", "embeddings", "sections") and self.kind != "provrag":
            return None
        for name in (f"{table}.parquet", f"create_final_{table}.parquet"):
            f = self.path / name
            if f.is_file():
                return f
        return None

    def _columns(self, f: Path) -> dict[str, str]:
        rows = self.con.execute(f"DESCRIBE SELECT * FROM read_parquet({_q(f)})").fetchall()
        return {r[0]: r[1] for r in rows}

    def _create_view(self, table: str) -> None:
        f = self._file(table)
        self.tables[table] = f
        target = _target_columns(table)
        if f is None:
            if table == "text_units":
                raise IndexNotFound(f"index has no text_units table: {self.path}")
            cols = ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in target)
            extra = ", CAST(NULL AS BIGINT) AS row_position, CAST(NULL AS VARCHAR[]) AS document_ids" \
                if table == "text_units" else ""
            self.con.execute(f"CREATE VIEW {table} AS SELECT {cols}{extra} WHERE false")
            return
        have = self._columns(f)
        exprs, joins = [], ""
        for c, t in target:
            e = self._column_expr(table, c, t, have)
            exprs.append(f'{e} AS "{c}"')
        src = f"read_parquet({_q(f)})"
        if table == "text_units":
            src = f"read_parquet({_q(f)}, file_row_number = true)"
            exprs.append("file_row_number AS row_position")
            exprs.append("document_ids" if "document_ids" in have else
                         "CASE WHEN document_id IS NULL THEN NULL ELSE [document_id] END AS document_ids")
        if table == "entities" and "degree" not in have:
            nodes = self.path / "create_final_nodes.parquet"
            if nodes.is_file() and {"title", "degree"} <= set(self._columns(nodes)):
                joins = (f" LEFT JOIN (SELECT title AS _n_title, max(degree) AS _n_degree "
                         f"FROM read_parquet({_q(nodes)}) GROUP BY title) n ON n._n_title = t.title")
                exprs = [('n._n_degree AS "degree"' if x.endswith(' AS "degree"') else x) for x in exprs]
        self.con.execute(f"CREATE VIEW {table} AS SELECT {', '.join(exprs)} FROM {src} t{joins}")

    def _column_expr(self, table: str, c: str, t: str, have: dict[str, str]) -> str:
        if c in have:
            return f't."{c}"' if have[c] == t else f'TRY_CAST(t."{c}" AS {t})'
        if table == "text_units" and c == "document_id" and "document_ids" in have:
            return "t.document_ids[1]"
        if table == "community_reports" and c == "rating_explanation" and "rank_explanation" in have:
            return "t.rank_explanation"
        if table == "entities" and c == "frequency" and "text_unit_ids" in have:
            return "len(t.text_unit_ids)"
        return f"CAST(NULL AS {t})"

    # ---- helpers ------------------------------------------------------------------------

    def count(self, table: str) -> int:
        # fetchall, not fetchone: DuckDB 2 holds a result not read to its end as unfinished, and
        # the connection's next register() (retrieval registers tables) then raises
        return int(self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])

    def embedder(self):
        """The embedder the index was built with (provrag indexes), else None."""
        if self._embedder is False:
            self._embedder = None
            if self.kind == "provrag" and self.tables.get("embeddings") is not None:
                try:
                    from provrag.embeddings import load_embedder

                    self._embedder = load_embedder(self.path)
                except Exception:  # a damaged or foreign embedder folder: lexical ranking only
                    self._embedder = None
        return self._embedder

    def manifest(self) -> dict:
        """manifest.json of a provrag index ({} for a GraphRAG folder or an unreadable file)."""
        from provrag.store.manifest import read_manifest

        return read_manifest(self.path) or {}

    def cursor(self) -> "IndexReader":
        """The same views through a DuckDB connection of its own, for one thread at a time.

        A server answers requests in threads: one DuckDB connection must not run two queries at
        once, and the temp tables and registered frames the query code makes (BM25 terms, id
        lists, resolve lookups) belong to a connection. Each request gets a twin; the embedder is
        loaded once and shared. Closing the twin closes its cursor only (closing this reader
        closes every twin's too)."""
        twin = object.__new__(IndexReader)
        twin.path, twin.kind, twin.has_pages, twin.tables = self.path, self.kind, self.has_pages, self.tables
        twin._embedder = self.embedder()
        twin.con = self.con.cursor()
        return twin

    def close(self) -> None:
        try:
            self.con.close()
        except Exception:
            pass

    def __enter__(self) -> "IndexReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"IndexReader({str(self.path)!r}, kind={self.kind!r})"
