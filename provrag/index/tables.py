"""The index's tables while a run builds them: polars frames typed exactly as the contract.

Every table is a polars frame from the stage that makes it to the write, built from rows
with `frame()` so its columns and types are those of provrag/store/schema.py from the
start (a column a later stage fills is there, null, until it does), and turned into the
contract's Arrow table once, by `to_arrow()` at the write. One representation per table
means no stage has to guess whether it holds dicts, a frame or Arrow.

Two columns are the run's own, on the documents frame: `PAGES`, the physical page offsets
(page_no, char_start, char_end) the chunker needs to put units on pages, and `OCR_PAGES`,
the pages whose text is OCR output, which the chunker copies onto the units of those pages.
The contract keeps pages on text units, so the write leaves both out of documents. A third,
`OUTLINE`, holds the headings a file names (a PDF's bookmarks, DOCX/HTML/Markdown headings) as
(level, title, char_start): the sections stage turns them into sections.parquet.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from provrag.store import schema

if TYPE_CHECKING:  # polars and pyarrow are imported where they are used, not at import time
    import polars as pl
    import pyarrow as pa

PAGES = "pages"  # documents frame only: [[page_no, char_start, char_end], …] or null; not written
OCR_PAGES = schema.OCR_PAGES  # on the documents frame too: the pages whose text is OCR output; not written there
OUTLINE = "outline"  # documents frame only: [{level, title, char_start}, …] in order; not written
OCR_WAITING = "ocr_waiting"   # documents frame only: pages OCR would read had it run (the summary names them); not written


def outline_type():
    """The OUTLINE column's polars type."""
    import polars as pl

    return pl.List(pl.Struct({"level": pl.Int64, "title": pl.String, "char_start": pl.Int64}))


def frame(table: str, rows: list[dict]) -> pl.DataFrame:
    """Rows → a frame with exactly the contract's columns and types (missing columns null)."""
    import polars as pl

    return pl.from_arrow(schema.to_arrow(table, rows))


def to_arrow(table: str, df: pl.DataFrame) -> pa.Table:
    """A frame → the contract's Arrow table: its columns in its order, its types (polars'
    large strings and lists cast back); columns outside the contract are left out."""
    names = schema.SCHEMAS[table].names
    return df.select(names).to_arrow().cast(schema.SCHEMAS[table])
