"""The BM25 term table's spelling correction (provrag/store/terms.py): a query word missing from
the index is read as the closest indexed term, the same one on every run."""
from __future__ import annotations

import duckdb

from provrag.store.terms import TERMS_VIEW, match_terms


def _con(units_of: dict[str, int], threads: int):
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    # enough other terms that DuckDB really spreads the scan over its threads
    con.execute(f"CREATE TEMP TABLE {TERMS_VIEW} AS SELECT 'filler' || i::VARCHAR AS term, 'f' || i::VARCHAR "
                "AS text_unit_id, 1 AS tf, 10 AS dl FROM range(200000) t(i)")
    rows = [(term, f"u{term}{i}", 1, 10) for term, n in units_of.items() for i in range(n)]
    con.executemany(f"INSERT INTO {TERMS_VIEW} VALUES (?, ?, ?, ?)", rows)
    return con


def test_equally_close_terms_go_to_the_one_in_more_units_on_every_run():
    # "serv" is as close to "server" as to "servic" (Jaro-Winkler 0.933): the term in more units wins
    for threads in (1, 4):
        for _ in range(5):
            con = _con({"servic": 3, "server": 1}, threads)
            terms, fixes = match_terms(con, "serv")
            assert fixes == {"serv": "servic"} and terms == {"servic": 1}
            con.close()


def test_equally_close_and_equally_common_terms_go_to_the_first_in_order():
    con = _con({"servic": 2, "server": 2}, 4)
    assert match_terms(con, "serv")[1] == {"serv": "server"}
    con.close()


def test_a_word_close_to_nothing_is_dropped():
    con = _con({"server": 1}, 1)
    assert match_terms(con, "zzyzx") == ({}, {})
    con.close()


def test_the_term_table_of_many_units_is_sorted_by_term_then_unit_and_counts_each(shared):
    """Past _BATCH_UNITS units the rows are built batch by batch and sorted by (term, unit id
    rank): the table is every (term, unit) once, with its count and the unit's length, in
    (term, text_unit_id) order, whatever order the units came in."""
    import random
    from collections import Counter

    import polars as pl

    from provrag.index.chunk import chunk_text
    from provrag.store.terms import _BATCH_UNITS, build_terms, terms_of

    novella = next((shared / "fixtures" / "graphrag-dulce" / "source").glob("Operation*.md")).read_text()
    texts = [u["text"] for u in chunk_text(novella, None, 20, 0)] * 3
    ids = [f"unit-{i:05d}" for i in range(len(texts))]
    random.Random(0).shuffle(ids)  # ids not in unit order: the sort must not lean on it
    assert len(texts) > _BATCH_UNITS
    df = build_terms(pl.DataFrame({"id": ids, "text": texts}))
    want = sorted((term, uid, tf, sum(c.values())) for uid, text in zip(ids, texts)
                  for c in [Counter(terms_of(text))] for term, tf in c.items())
    assert df.rows() == want
    assert df.schema == {"term": pl.String, "text_unit_id": pl.String, "tf": pl.Int32, "dl": pl.Int32}


def test_the_stats_kept_on_a_connection_are_its_own_and_a_copy(sample_index):
    """kept_stats answers from what ensure_terms kept for that connection (not DuckDB's catalog),
    as DuckDB's temp table holds them; a caller changing its copy changes nothing kept."""
    import json

    from provrag.store.reader import open_index
    from provrag.store.terms import STATS_TABLE, ensure_terms, kept_stats

    with open_index(sample_index) as r:
        assert kept_stats(r.con) is None
        stats = ensure_terms(r.con, r.path)
        stored = json.loads(r.con.execute(f"SELECT stats FROM {STATS_TABLE}").fetchall()[0][0])
        assert kept_stats(r.con) == stats == stored and stats["n_units"] == r.count("text_units")
        kept_stats(r.con)["n_units"] = -1
        assert kept_stats(r.con) == stored and ensure_terms(r.con, r.path) == stored
        twin = r.cursor()
        try:
            assert kept_stats(twin.con) is None      # a cursor's temp tables are its own
        finally:
            twin.close()
