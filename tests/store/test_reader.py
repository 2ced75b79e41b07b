"""The index reader over the three real GraphRAG generations (and errors on non-indexes)."""
from __future__ import annotations

import shutil

import duckdb
import pytest

from provrag.store.reader import IndexNotFound, open_index

pytestmark = pytest.mark.usefixtures("shared")

GENERATIONS = {"index-2025-v1": "graphrag-v1", "index-2025-v2": "graphrag-v2", "index-2026-v3": "graphrag-v3"}
VIEWS = ("documents", "text_units", "entities", "relationships", "communities", "community_reports",
         "covariates", "keywords", "embeddings")


def _raw_count(folder, table):
    for name in (f"{table}.parquet", f"create_final_{table}.parquet"):
        f = folder / name
        if f.exists():
            return duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{f}')").fetchone()[0]
    return 0


@pytest.mark.parametrize("folder,kind", sorted(GENERATIONS.items()))
def test_opens_every_generation_as_views(dulce, folder, kind):
    path = dulce / folder
    with open_index(path) as r:
        assert r.kind == kind and r.has_pages is False and r.path == path
        views = {v for (v,) in r.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert set(VIEWS) <= views
        # nothing materialised: every table is a view over read_parquet
        assert r.con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] == 0
        for t in VIEWS[:7]:
            assert r.count(t) == _raw_count(path, t), t
        assert r.count("keywords") == 0 and r.count("embeddings") == 0
        assert r.embedder() is None


@pytest.mark.parametrize("folder", sorted(GENERATIONS))
def test_views_are_normalised_to_v3_names(dulce, folder):
    with open_index(dulce / folder) as r:
        con = r.con
        # every unit has its document (v1/v2: first of document_ids) and no invented page
        row = con.execute("""SELECT count(*), count(t.document_id), count(d.id), count(t.page_start),
                                    count(t.char_start)
                             FROM text_units t LEFT JOIN documents d ON d.id = t.document_id""").fetchone()
        assert row[0] == row[1] == row[2] and row[3] == 0 and row[4] == 0
        # row_position is the 0-based row in the file (GraphRAG < 2.6 Sources numbering)
        pos = [p for (p,) in con.execute("SELECT row_position FROM text_units").fetchall()]
        assert sorted(pos) == list(range(len(pos)))
        assert con.execute("SELECT count(*) FROM community_reports WHERE rating_explanation IS NULL").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM entities WHERE frequency IS NULL OR degree IS NULL").fetchone()[0] == 0
        d = con.execute("SELECT title, path, page_labels, n_pages FROM documents ORDER BY title").fetchall()
        assert all(t.endswith(".txt") and p is None and pl is None and n is None for t, p, pl, n in d)


def test_v1_specifics(dulce):
    path = dulce / "index-2025-v1"
    with open_index(path) as r:
        # rank_explanation (v1) is served as rating_explanation, same text
        raw = duckdb.connect().execute(
            f"SELECT community, rank_explanation FROM read_parquet('{path}/create_final_community_reports.parquet')"
        ).fetchall()
        assert dict(r.con.execute("SELECT community, rating_explanation FROM community_reports").fetchall()) == dict(raw)
        # frequency = number of text units; degree comes from create_final_nodes
        f, n, deg = r.con.execute(
            "SELECT frequency, len(text_unit_ids), degree FROM entities WHERE title = 'ALEX MERCER'").fetchone()
        assert f == n > 0 and deg > 0
        # v1 indexes two documents; units point at both
        assert r.con.execute("SELECT count(DISTINCT document_id) FROM text_units").fetchone()[0] == 2
        assert r.con.execute("SELECT min(human_readable_id) FROM text_units").fetchone()[0] == 1


def test_missing_optional_tables_are_empty_views(tmp_path, dulce_v3):
    src = dulce_v3
    for f in ("text_units.parquet", "documents.parquet", "communities.parquet"):
        shutil.copy(src / f, tmp_path / f)
    with open_index(tmp_path) as r:
        assert r.kind == "graphrag-v3"
        assert r.count("covariates") == 0 and r.count("community_reports") == 0 and r.count("entities") == 0
        cols = [c[0] for c in r.con.execute("DESCRIBE covariates").fetchall()]
        assert "text_unit_id" in cols and "human_readable_id" in cols
        assert r.tables["covariates"] is None


def test_finds_graphrag_output_folder(tmp_path, dulce_v3):
    out = tmp_path / "project" / "output"
    shutil.copytree(dulce_v3, out, ignore=shutil.ignore_patterns("answers"))
    with open_index(tmp_path / "project") as r:
        assert r.kind == "graphrag-v3" and r.path == out


def test_not_an_index(tmp_path):
    with pytest.raises(IndexNotFound, match="no such index folder"):
        open_index(tmp_path / "nope")
    with pytest.raises(IndexNotFound, match="not an index folder"):
        open_index(tmp_path)
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(IndexNotFound, match="not a folder"):
        open_index(tmp_path / "f.txt")
    (tmp_path / "text_units.parquet").write_bytes(b"this is not parquet at all")
    with pytest.raises(IndexNotFound) as e:
        open_index(tmp_path)
    assert "\n" not in str(e.value)


def test_cursor_twins_share_views_and_embedder_but_not_temp_tables(squad_subset_index):
    """What a server gives each request: the same views through a connection of its own."""
    with open_index(squad_subset_index) as r:
        one, two = r.cursor(), r.cursor()
        assert one.count("text_units") == two.count("text_units") == r.count("text_units") > 0
        assert one.embedder() is two.embedder() is r.embedder() is not None
        assert (one.path, one.kind, one.tables) == (r.path, r.kind, r.tables)
        one.con.execute("CREATE TEMP TABLE only_here AS SELECT 1 AS x")
        with pytest.raises(duckdb.CatalogException):
            two.con.execute("SELECT * FROM only_here")
        one.close()   # closes its cursor only
        assert two.count("documents") == r.count("documents")
        with pytest.raises(duckdb.ConnectionException):
            one.count("documents")


def test_a_count_leaves_no_unfinished_result_on_the_connection(sample_index):
    """Retrieval registers Arrow tables on the reader's connection; DuckDB 2 refuses a register()
    while a result is not read to its end, which a count read by fetchone() left (a warm ask
    whose other reads all came from kept rows then failed at the next question's register)."""
    import pyarrow as pa

    with open_index(sample_index) as r:
        assert r.count("text_units") > 0
        r.con.register("after_a_count", pa.table({"x": [1]}))
        assert r.con.execute("SELECT x FROM after_a_count").fetchall() == [(1,)]
