"""The run's tables: polars frames typed as the contract from the start, Arrow exactly as the contract at the write."""
import polars as pl
import pytest

from provrag.index.progress import stage
from provrag.index.tables import PAGES, frame, to_arrow
from provrag.store import schema


@pytest.mark.parametrize("name", sorted(schema.SCHEMAS))
def test_empty_frames_round_trip_to_the_contract(name):
    df = frame(name, [])
    assert df.height == 0 and df.columns == schema.SCHEMAS[name].names
    assert to_arrow(name, df).schema == schema.SCHEMAS[name]


def test_missing_columns_are_typed_nulls_and_extra_columns_are_not_written():
    rows = [{"id": "d1", "human_readable_id": 0, "title": "a", "text": "x", "metadata": {"pdf_backend": "pypdfium2"},
             "page_labels": ["i", "ii"], "status": "ok"},
            {"id": "d2", "human_readable_id": 1, "title": "b", "text": "", "metadata": {}, "status": "failed",
             "error": "damaged"}]
    df = frame(schema.DOCUMENTS, rows).with_columns(pl.Series(PAGES, [[[1, 0, 1]], None]))
    assert df["n_pages"].dtype == pl.Int64 and df["n_pages"].null_count() == 2
    table = to_arrow(schema.DOCUMENTS, df)
    assert table.schema == schema.SCHEMAS[schema.DOCUMENTS] and PAGES not in table.column_names
    assert table.equals(schema.to_arrow(schema.DOCUMENTS, rows))   # the rows as the contract builds them


def test_nested_report_columns_survive_the_round_trip():
    rows = [{"id": "r", "human_readable_id": 3, "community": 3, "level": 1, "parent": 0, "children": [7, 8],
             "title": "T", "findings": [{"explanation": "e [Data: Entities (1)]", "summary": "s"}], "rank": 7.5}]
    table = to_arrow(schema.COMMUNITY_REPORTS, frame(schema.COMMUNITY_REPORTS, rows))
    assert table.equals(schema.to_arrow(schema.COMMUNITY_REPORTS, rows))


def test_progress_is_optional():
    with stage(None, "extract", 3) as task:   # nobody watching: advancing is a no-op
        task.advance()
        task.advance(2)
    seen = []

    class Display:
        def stage(self, name, total=None):
            seen.append((name, total))
            return stage(None, name, total)

    with stage(Display(), "reports", 5) as task:
        task.advance()
    assert seen == [("reports", 5)]
