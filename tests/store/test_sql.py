"""`provrag sql`'s runner (provrag/store/sql.py): read-only SQL over an index's tables and its
provenance, after real asks and a real verify over real PDFs."""
from __future__ import annotations

import pytest

from provrag.errors import UsageError
from provrag.store.sql import SqlError, run_sql

pytestmark = pytest.mark.usefixtures("shared")

WHICH_QUERIES = """
    SELECT r.question, r.kind, r.rank, r.score, list_transform(r.influence, lambda x: x.term) AS terms
    FROM retrievals r WHERE r.text_unit_id = ? ORDER BY r.created, r.rank"""

LAST_SOURCES = """
    SELECT c.sentence_index, c.kind, c.id, c.document, c.page, c.text_unit_id
    FROM citations c
    WHERE c.trace_id = (SELECT trace_id FROM traces WHERE kind = 'ask' ORDER BY created DESC LIMIT 1)
      AND c.text_unit_id IS NOT NULL
    ORDER BY c.sentence_index, c.page"""


def test_which_queries_retrieved_a_text_unit(asked_index):
    idx, basic, _, verified = asked_index
    unit = basic.sources[0].text_unit_id
    res = run_sql(idx, WHICH_QUERIES.replace("?", f"'{unit}'"))
    assert res.columns == ["question", "kind", "rank", "score", "terms"] and not res.truncated
    asks = [r for r in res.rows if r[1] == "ask"]
    assert [r[0] for r in asks] == [basic.question]   # the global ask retrieved reports, not units
    cands = next(s for s in basic.trace["stages"] if s["name"] == "exploration")["data"]["candidates"]
    want = next(c for c in cands if c["text_unit_id"] == unit)
    assert list(asks[0][2:]) == [want["why"]["rank"], want["score"], [x["term"] for x in want["why"]["influence"]]]
    # the verify run retrieved it again for the claim it backs
    assert any(r[1] == "verify" for r in res.rows)
    assert res.to_json()["rows"][0][0] == basic.question


def test_the_sources_of_the_last_answer(asked_index):
    idx, _, glob, _ = asked_index
    res = run_sql(idx, LAST_SOURCES)
    assert res.rows
    got = {(r[5], r[4]) for r in res.rows}
    assert {(s.text_unit_id, s.page_start) for s in glob.sources} <= got
    assert all(r[1] == "Reports" and r[3] for r in res.rows)   # a global answer cites reports


def test_index_tables_are_the_readers_views(asked_index):
    idx = asked_index[0]
    res = run_sql(idx, "SELECT count(*) AS n, count(DISTINCT document_id) AS docs FROM text_units")
    assert res.rows[0][0] > 10 and res.rows[0][1] == 3
    res = run_sql(idx, "SELECT title FROM documents ORDER BY title", limit=2)
    assert len(res.rows) == 2 and res.truncated
    # the lock is the runner's own database's: an index opened afterwards reads files as ever
    from provrag.store.reader import open_index

    with open_index(idx) as r:
        assert r.con.execute(f"SELECT count(*) FROM read_parquet('{idx}/documents.parquet')").fetchone()[0] == 3


def test_a_damaged_trace_file_is_a_one_line_error(asked_index, tmp_path):
    import shutil

    idx = tmp_path / "idx"
    shutil.copytree(asked_index[0], idx)
    (idx / "queries" / "retrievals" / "20000101000000000-0123456789ab.parquet").write_bytes(b"not parquet")
    with pytest.raises(SqlError, match="cannot read the stored traces") as e:
        run_sql(idx, "SELECT count(*) FROM retrievals")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("query", [
    "DELETE FROM text_units",
    "CREATE TABLE x AS SELECT 1",
    "COPY (SELECT * FROM traces) TO '/tmp/provrag-sql-test.csv'",
    "ATTACH '/tmp/provrag-sql-test.db'",
    "INSTALL httpfs",
    "SET enable_external_access = true",
    "PRAGMA version",
    "SELECT 1; DROP TABLE traces",
    "",
])
def test_anything_but_one_read_is_refused(asked_index, query):
    with pytest.raises(SqlError) as e:
        run_sql(asked_index[0], query)
    assert isinstance(e.value, UsageError) and e.value.exit_code == 2 and "\n" not in str(e.value)


@pytest.mark.parametrize("query", [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM read_parquet('{idx}/../../*/idx/text_units.parquet')",
])
def test_a_select_cannot_read_files_outside_the_index(asked_index, query):
    with pytest.raises(SqlError, match="disabled by configuration|Permission"):
        run_sql(asked_index[0], query.format(idx=asked_index[0]))


def test_a_long_query_is_stopped_at_the_timeout(asked_index):
    # 10^13 products: hours of work, so only the timeout ends it (how soon: bench/client_timing.py)
    with pytest.raises(SqlError, match="longer than 0.5 s"):
        run_sql(asked_index[0], "SELECT sum(a.range * b.range) FROM range(100000000) a, range(100000) b", timeout_s=0.5)


def test_a_graphrag_folder_has_the_views_and_empty_provenance(dulce_v3, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    res = run_sql(dulce_v3, "SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM retrievals), "
                            "(SELECT count(*) FROM citations), (SELECT count(*) FROM traces)")
    n_entities, *empty = res.rows[0]
    assert n_entities > 0 and empty == [0, 0, 0]
    cols = run_sql(dulce_v3, "SELECT * FROM retrievals").columns
    assert {"trace_id", "text_unit_id", "rank", "score", "components", "influence"} <= set(cols)
