"""Hybrid retrieval (provrag/query/retrieve.py) and the BM25 term table (provrag/store/terms.py) on real data."""
from __future__ import annotations

import math
from collections import Counter

import pytest

pytestmark = pytest.mark.usefixtures("shared")


@pytest.fixture(scope="module")
def index(squad_subset_index):
    return squad_subset_index


@pytest.fixture
def reader(index):
    from provrag.store.reader import open_index

    r = open_index(index)
    yield r
    r.close()


def test_terms_of_stems_drops_stop_words_and_joins_hyphenated():
    from provrag.store.terms import terms_of

    t = terms_of("The half-time shows of 1973 were selected, and 99.4 percent")
    assert "the" not in t and "of" not in t and "and" not in t
    assert "show" in t and "select" in t  # snowball stems
    assert "halftim" in t  # "half-time" also matches "halftime"
    assert "1973" in t and "99.4" in t


def test_build_terms_counts_real_units(index):
    import polars as pl

    from provrag.store.terms import build_terms, terms_of

    units = pl.read_parquet(index / "text_units.parquet", columns=["id", "text"]).head(20)
    df = build_terms(units)
    assert df.columns == ["term", "text_unit_id", "tf", "dl"]
    assert df["term"].to_list() == sorted(df["term"].to_list())
    first = units.row(0, named=True)
    want = Counter(terms_of(first["text"]))
    got = {r["term"]: r["tf"] for r in df.filter(pl.col("text_unit_id") == first["id"]).iter_rows(named=True)}
    assert got == dict(want)
    assert set(df.filter(pl.col("text_unit_id") == first["id"])["dl"].to_list()) == {sum(want.values())}


def test_index_pipeline_wrote_terms_with_footer_stats(index, reader):
    from provrag.store import terms as lexical

    assert (index / lexical.TERMS_FILE).is_file()
    stats = lexical.ensure_terms(reader.con, reader.path)
    assert stats["source"] == "terms.parquet"
    assert stats["n_units"] == reader.count("text_units")
    assert stats["avgdl"] > 10
    # idempotent on one connection, stats kept inside it
    assert lexical.ensure_terms(reader.con, reader.path)["n_units"] == stats["n_units"]


def test_bm25_sql_matches_the_formula(reader):
    """The SQL BM25 equals Okapi BM25 computed by hand from the unit texts."""
    from provrag.store import terms as lexical

    stats = lexical.ensure_terms(reader.con, reader.path)
    q = "packet switching network"
    terms, _ = lexical.match_terms(reader.con, q)
    got = dict(lexical.bm25(reader.con, stats, terms, limit=5))
    rows = reader.con.execute("SELECT id, text FROM text_units").fetchall()
    docs = {i: Counter(lexical.terms_of(t)) for i, t in rows}
    n, avgdl = len(docs), sum(sum(c.values()) for c in docs.values()) / len(docs)
    df = {t: sum(1 for c in docs.values() if t in c) for t in terms}

    def score(c):
        dl = sum(c.values())
        return sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * c[t] * 2.2 / (c[t] + 1.2 * (0.25 + 0.75 * dl / avgdl))
                   for t in terms if c[t])

    want = sorted(((i, score(c)) for i, c in docs.items()), key=lambda x: -x[1])[:5]
    assert [i for i, _ in want] == list(got)
    for i, s in want:
        assert got[i] == pytest.approx(s, rel=1e-6)


def test_misspelled_terms_are_corrected_from_the_index_vocabulary(reader):
    """Typos that stemming leaves as they are ("protocoll" would not do: the stemmer itself turns
    it into "protocol"): absent from the index, each is replaced by the closest indexed term."""
    from provrag.store import terms as lexical

    lexical.ensure_terms(reader.con, reader.path)
    question = "What does the Datagram protokol gaurantee?"
    typed = lexical.query_terms(question)
    assert {"protokol", "gaurante"} <= set(typed)  # what stemming makes of the typos: not the right words
    indexed = {r[0] for r in reader.con.execute(f"SELECT DISTINCT term FROM {lexical.TERMS_VIEW} "
                                                 "WHERE term IN ('protokol', 'gaurante', 'protocol', 'guarante')").fetchall()}
    assert indexed == {"protocol", "guarante"}  # the typos are not in the index; the words are
    terms, fixes = lexical.match_terms(reader.con, question)
    assert fixes == {"protokol": "protocol", "gaurante": "guarante"}
    assert {"protocol", "guarante"} <= set(terms) and not {"protokol", "gaurante"} & set(terms)


def test_dense_channel_equals_numpy_cosine(reader):
    import numpy as np

    from provrag.query.retrieve import dense

    emb = reader.embedder()
    assert emb is not None
    vec = emb.embed(["oil prices rose after the embargo"])[0]
    top = dense(reader.con, vec, limit=3)
    ids = [i for i, _ in top]
    rows = dict(reader.con.execute("SELECT id, vector FROM embeddings WHERE id IN (SELECT unnest(?::VARCHAR[]))",
                                   [ids]).fetchall())
    for i, s in top:
        v = np.asarray(rows[i], dtype=np.float32)
        assert s == pytest.approx(float(v @ vec / (np.linalg.norm(v) * np.linalg.norm(vec))), abs=1e-4)


def test_hybrid_retrieval_finds_the_gold_document(reader, subset_questions):
    """For every question of the three articles, the best unit comes from the right PDF."""
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units

    cfg = load_config()
    qs = subset_questions
    right = sum(retrieve_units(reader, q["question"], cfg, k=3).candidates[0]["path"] == q["document"] for q in qs)
    assert right / len(qs) >= 0.9


def test_fusion_uses_both_channels_and_reports_them(reader):
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units

    ret = retrieve_units(reader, "When did the oil embargo end?", load_config(), k=5)
    assert ret.channels["dense"]["used"] is True
    assert ret.channels["bm25"]["source"] == "terms.parquet"
    scores = [c["score"] for c in ret.candidates]
    assert scores == sorted(scores, reverse=True)
    assert all(c["page_start"] is not None and c["path"] for c in ret.candidates)
    assert ret.idf and all(v > 0 for v in ret.idf.values())


def test_graphrag_folder_builds_terms_on_the_fly_and_has_no_dense_channel(dulce_v3):
    from provrag.config import load_config
    from provrag.store.reader import open_index
    from provrag.query.retrieve import retrieve_units

    with open_index(dulce_v3) as r:
        ret = retrieve_units(r, "Who leads the Paranormal Military Squad?", load_config(), k=3)
        assert ret.channels["bm25"]["source"].startswith("built from text_units")
        assert ret.channels["dense"]["used"] is False
        assert ret.candidates and ret.candidates[0]["page_start"] is None


def test_nonsense_question_retrieves_nothing_without_error(reader):
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units

    ret = retrieve_units(reader, "the of and ???", load_config(), k=3)
    assert ret.candidates == [] or all(c["bm25"] == 0 for c in ret.candidates)


def test_zero_query_vector_gives_zero_similarity_not_nan(reader):
    """A question with no word the embedder knows embeds to the zero vector: DuckDB's cosine is
    then NaN, which must count as 0 (not rank first), and hybrid retrieval falls back to BM25."""
    import numpy as np

    from provrag.config import load_config
    from provrag.query.retrieve import dense, retrieve_units

    emb = reader.embedder()
    zero = emb.embed(["zzqxv wqzzt"])[0]
    assert not np.any(zero)
    top = dense(reader.con, zero, limit=5)
    assert len(top) == 5 and all(s == 0.0 for _, s in top)
    # scikit-learn's stop words ("first", "amount") are not BM25's: the TF-IDF vector is zero,
    # BM25 still finds the units
    q = "first amount"
    assert not np.any(emb.embed([q])[0])
    ret = retrieve_units(reader, q, load_config(), k=3)
    assert ret.channels["dense"]["used"] is False and ret.channels["lexical_weight"] == 1.0
    assert all(math.isfinite(c["score"]) for c in ret.candidates)
    assert ret.candidates and "first" in ret.candidates[0]["text"].lower()


def test_antecedents_give_the_text_before_each_unit(reader):
    """antecedents(): the previous unit's text up to where the unit starts, so a sentence cut by
    the unit's start can be completed; the first unit of a document has none."""
    from provrag.query.retrieve import antecedents

    rows = reader.con.execute("""
        SELECT id, document_id, char_start, text FROM text_units ORDER BY document_id, char_start""").fetchall()
    docs = {}
    for uid, doc, start, text in rows:
        docs.setdefault(doc, []).append((uid, start, text))
    firsts = [units[0][0] for units in docs.values()]
    seconds = [units[1] for units in docs.values() if len(units) > 1]
    got = antecedents(reader, firsts + [u[0] for u in seconds])
    assert not any(f in got for f in firsts)
    for doc_units in docs.values():
        if len(doc_units) < 2:
            continue
        (_, p_start, p_text), (uid, start, text) = doc_units[0], doc_units[1]
        head = got[uid]["text"]
        before = p_text[:start - p_start] if start - p_start <= len(p_text) else p_text + "\n"
        assert before.endswith(head) and head.strip()


class _Counted:
    """A connection that records the queries run through it (DuckDB's own cannot be patched)."""

    def __init__(self, con):
        self.con, self.queries = con, []

    def execute(self, sql, *args):
        self.queries.append(" ".join(sql.split()))
        return self.con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self.con, name)


FIND_DOCUMENTS = "SELECT document_id FROM text_units WHERE id IN"


def test_neighbours_kept_by_the_reader_are_the_same_and_not_looked_up_again(index, monkeypatch):
    """An ask's wider retries and a server's next questions meet the same units: a reader that
    keeps unit rows (KeptUnits) keeps their neighbours too. What it keeps is what a fresh lookup
    gives; a unit asked again costs no query; and where the units' rows are kept, their documents
    come from the rows instead of a scan of text_units, with the same neighbours. (The SQL an index
    written before INDEX/retrieval/unit_neighbours.npy is read with.)"""
    from provrag.query import retrieve
    from provrag.query.retrieve import antecedents, continuations, neighbours
    from provrag.store.reader import open_index
    from provrag.store.units import KeptUnits, fetch_units

    monkeypatch.setattr(retrieve, "neighbours_by_row", lambda *args: None)

    with open_index(index) as plain, open_index(index) as rows_kept, open_index(index) as nothing_kept:
        ids = [r[0] for r in plain.con.execute(
            "SELECT id FROM text_units ORDER BY document_id, char_start LIMIT 12").fetchall()]
        fresh = (continuations(plain, ids), antecedents(plain, ids))
        assert len(fresh[0]) >= 6 and len(fresh[1]) >= 6

        nothing_kept.kept_units = KeptUnits()
        nothing_kept.con = scanned = _Counted(nothing_kept.con)
        assert neighbours(nothing_kept, ids) == fresh
        assert any(FIND_DOCUMENTS in q for q in scanned.queries)    # the documents found by a scan

        rows_kept.kept_units = KeptUnits()
        fetch_units(rows_kept, ids)
        rows_kept.con = counted = _Counted(rows_kept.con)
        assert neighbours(rows_kept, ids) == fresh
        assert counted.queries and not any(FIND_DOCUMENTS in q for q in counted.queries)
        first = list(counted.queries)
        assert neighbours(rows_kept, ids[::-1]) == fresh            # all kept: the same, and no query
        part = neighbours(rows_kept, ids[:3])
        assert part == ({i: fresh[0][i] for i in ids[:3] if i in fresh[0]},
                        {i: fresh[1][i] for i in ids[:3] if i in fresh[1]})
        assert counted.queries == first


def test_neighbours_of_an_index_that_wrote_them_down_cost_no_query(index, monkeypatch):
    """The index's own unit_neighbours.npy (store/neighbours.py): the same neighbours as the SQL
    window, and not one query to DuckDB for them."""
    from provrag.query import retrieve
    from provrag.store.reader import open_index

    with open_index(index) as r:
        ids = [row[0] for row in r.con.execute("SELECT id FROM text_units ORDER BY document_id, char_start").fetchall()]
        r.con = counted = _Counted(r.con)
        by_row = retrieve.neighbours(r, ids)
        assert counted.queries == []
        monkeypatch.setattr(retrieve, "neighbours_by_row", lambda *args: None)   # as an older index is read
        assert retrieve.neighbours(r, ids) == by_row and counted.queries
    assert len(by_row[0]) >= len(ids) // 3 and len(by_row[1]) >= len(ids) // 3
