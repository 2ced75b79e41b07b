"""Table names, column names and Arrow types of the index: CONTRACT.md §1–§2 in code.

The six GraphRAG tables keep GraphRAG v3's names, columns and types so GraphRAG's own query
code, a notebook or DuckDB can read them unchanged; provrag's provenance columns are added
after them. Every writer goes through `SCHEMAS` so a table can never drift from the contract.

documents.path is the file's path relative to DOCS in the escaped form of
provrag/store/paths.py: a name of any bytes (not UTF-8, with a newline…) is kept losslessly
as valid text; `paths.path_bytes(path)` gives the original bytes back.
"""
from __future__ import annotations

import hashlib

import pyarrow as pa

from provrag.store.paths import printable

DOCUMENTS = "documents"
TEXT_UNITS = "text_units"
ENTITIES = "entities"
RELATIONSHIPS = "relationships"
COMMUNITIES = "communities"
COMMUNITY_REPORTS = "community_reports"
KEYWORDS = "keywords"
SECTIONS = "sections"
EMBEDDINGS = "embeddings"
MANIFEST = "manifest.json"

# column names shared by several tables
ID = "id"
HRID = "human_readable_id"
TITLE = "title"
TEXT = "text"
TEXT_UNIT_IDS = "text_unit_ids"
ENTITY_IDS = "entity_ids"
RELATIONSHIP_IDS = "relationship_ids"
DOCUMENT_ID = "document_id"
PAGE_START = "page_start"
PAGE_END = "page_end"
CHAR_START = "char_start"
CHAR_END = "char_end"
OCR_PAGES = "ocr_pages"
COMMUNITY = "community"
LEVEL = "level"
PARENT = "parent"
CHILDREN = "children"

STATUS_OK, STATUS_FAILED, STATUS_SKIPPED = "ok", "failed", "skipped"

_str, _i64, _f64, _bool = pa.string(), pa.int64(), pa.float64(), pa.bool_()
_strs, _i64s = pa.list_(pa.string()), pa.list_(pa.int64())
FINDING = pa.struct([("explanation", _str), ("summary", _str)])

SCHEMAS: dict[str, pa.Schema] = {
    DOCUMENTS: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("title", _str), ("text", _str),
        ("text_unit_ids", _strs), ("creation_date", _str),
        ("metadata", pa.map_(_str, _str)),
        # provenance
        ("path", _str),  # relative to DOCS, escaped: store/paths.py (any bytes, reversible)
        ("sha256", _str), ("mime_type", _str), ("n_pages", _i64),
        ("page_labels", _strs), ("status", _str), ("error", _str),
        ("running_heads", _strs),  # per page, what its running heads said (index/running_heads.py); null: none
    ]),
    TEXT_UNITS: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("text", _str), ("n_tokens", _i64),
        ("document_id", _str), ("entity_ids", _strs), ("relationship_ids", _strs),
        ("covariate_ids", _strs),
        # provenance
        ("page_start", _i64), ("page_end", _i64), ("char_start", _i64), ("char_end", _i64),
        ("is_skeleton", _bool), ("skeleton_score", _f64),
        ("ocr_pages", _i64s),  # the unit's pages whose text is OCR output ([] when none)
    ]),
    ENTITIES: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("title", _str), ("type", _str),
        ("description", _str), ("text_unit_ids", _strs), ("frequency", _i64), ("degree", _i64),
    ]),
    RELATIONSHIPS: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("source", _str), ("target", _str),
        ("description", _str), ("weight", _f64), ("combined_degree", _i64),
        ("text_unit_ids", _strs),
    ]),
    COMMUNITIES: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("community", _i64), ("level", _i64),
        ("parent", _i64), ("children", _i64s), ("title", _str), ("entity_ids", _strs),
        ("relationship_ids", _strs), ("text_unit_ids", _strs), ("period", _str), ("size", _i64),
    ]),
    COMMUNITY_REPORTS: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("community", _i64), ("level", _i64),
        ("parent", _i64), ("children", _i64s), ("title", _str), ("summary", _str),
        ("full_content", _str), ("rank", _f64), ("rating_explanation", _str),
        ("findings", pa.list_(FINDING)), ("full_content_json", _str), ("period", _str),
        ("size", _i64),
    ]),
    # provrag's own: the KET-RAG keyword-chunk bipartite graph (every unit, skeleton or not)
    KEYWORDS: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("keyword", _str),
        ("text_unit_ids", _strs), ("frequency", _i64),
    ]),
    # provrag's own: each document's parts, from its outline/headings or where its topic shifts
    # (index/sections.py); parent is the human_readable_id of the level-0 section holding a level-1 one
    SECTIONS: pa.schema([
        ("id", _str), ("human_readable_id", _i64), ("document_id", _str), ("level", _i64), ("parent", _i64),
        ("title", _str), ("origin", _str), ("key_phrases", _strs), ("statement", _str), ("statement_unit", _i64),
        ("text_unit_ids", _strs), ("n_tokens", _i64), ("page_start", _i64), ("page_end", _i64),
        ("char_start", _i64), ("char_end", _i64),
    ]),
    # provrag's own: one embedding per text unit (L2-normalised float32)
    EMBEDDINGS: pa.schema([("id", _str), ("vector", pa.list_(pa.float32()))]),
}

GRAPHRAG_TABLES = (DOCUMENTS, TEXT_UNITS, ENTITIES, RELATIONSHIPS, COMMUNITIES, COMMUNITY_REPORTS)


def content_id(*parts: str) -> str:
    """A stable id from content (nano-graphrag style): same input, same id, every run."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()


def to_arrow(table: str, rows: list[dict] | dict[str, list]) -> pa.Table:
    """Build a table with exactly the contract's columns and types (missing columns → null).

    Arrow strings are UTF-8: a str holding a lone surrogate (a raw byte of a file name, PEP 383)
    cannot go in. The loader stores names escaped (store/paths.py) so none should arrive; if
    one does (a parser message quoting a raw name), it is written as `\\xHH` rather than ending
    the run after all its work."""
    try:
        return _to_arrow(table, rows)
    except UnicodeEncodeError:
        return _to_arrow(table, _printable(rows))


def _printable(value):
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


def _to_arrow(table: str, rows: list[dict] | dict[str, list]) -> pa.Table:
    schema = SCHEMAS[table]
    if isinstance(rows, dict):
        n = len(next(iter(rows.values()))) if rows else 0
        cols = {f.name: rows.get(f.name, [None] * n) for f in schema}
        return pa.table(cols, schema=schema)
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)
