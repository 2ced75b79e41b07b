"""INDEX/retrieval/ (store/postings.py, store/vectors.py): the memory-mapped postings and IVF rank
exactly as the SQL scans over terms.parquet and embeddings.parquet do, an index without them
still answers by those scans (and the trace says so), and an update rewrites them."""
from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.usefixtures("shared")

QUESTIONS = ("What did the oil crisis do to the price of oil?", "Who invented packet switching?",
             "What is construction management?", "When did the embargo end?", "Donald Davies and Paul Baran")


@pytest.fixture(scope="module")
def reader(squad_subset_index):
    from provrag.store.reader import open_index

    r = open_index(squad_subset_index)
    yield r
    r.close()


def _sql_stats(stats: dict) -> dict:
    """The same stats without the postings: terms.py answers by SQL over terms.parquet."""
    return {k: v for k, v in stats.items() if k != "postings"}


def _flat(shares: dict) -> dict:
    return {(u, t): s for u, terms in shares.items() for t, s in terms.items()}


def test_postings_give_the_sql_scans_bm25_scores_and_order(reader):
    from provrag.store import terms as lexical

    stats = lexical.ensure_terms(reader.con, reader.path)
    assert stats.get("postings"), "the index pipeline wrote no postings"
    for q in QUESTIONS:
        terms, _ = lexical.match_terms(reader.con, q)
        assert terms
        new = lexical.bm25(reader.con, stats, terms, limit=30)
        old = lexical.bm25(reader.con, _sql_stats(stats), terms, limit=30)
        assert [u for u, _ in new] == [u for u, _ in old]
        assert [s for _, s in new] == pytest.approx([s for _, s in old], rel=1e-9)
        some = [u for u, _ in old[5:12]]
        assert dict(lexical.bm25(reader.con, stats, terms, 50, some)) == pytest.approx(
            dict(lexical.bm25(reader.con, _sql_stats(stats), terms, 50, some)))
        assert _flat(lexical.term_contributions(reader.con, stats, terms, some)) == pytest.approx(
            _flat(lexical.term_contributions(reader.con, _sql_stats(stats), terms, some)))
        assert lexical.idf_of(reader.con, stats, terms) == pytest.approx(lexical.idf_of(reader.con, _sql_stats(stats), terms))


def test_ivf_lists_return_the_exact_scans_neighbours(reader, tmp_path, monkeypatch):
    """Forced into lists on a small real index: all lists probed = the SQL scan's top-k; fewer
    probed = a subset of units, each with its exact cosine."""
    import numpy as np
    import pyarrow.parquet as pq

    from provrag.query.retrieve import dense, embed_query
    from provrag.store import vectors

    table = pq.read_table(reader.path / "embeddings.parquet")
    ids, vecs = table.column("id").to_pylist(), np.array(table.column("vector").to_pylist(), np.float32)
    monkeypatch.setattr(vectors, "EXACT_BELOW", 16)
    meta = vectors.write_vectors(tmp_path, ids, vecs)
    assert meta["lists"] > 4
    ann = vectors.opened(tmp_path)
    assert not ann.exact and "ivf" in ann.describe()
    for q in QUESTIONS:
        vec, _ = embed_query(reader, q)
        exact = dense(reader.con, vec, limit=25)
        every = ann.search(vec, 25, probes=meta["lists"])
        assert [u for u, _ in every] == [u for u, _ in exact]
        assert [s for _, s in every] == pytest.approx([s for _, s in exact], abs=1e-5)
        scores = dict(dense(reader.con, vec, limit=len(ids)))
        for u, s in ann.search(vec, 25, probes=2):
            assert s == pytest.approx(scores[u], abs=1e-5)


def test_retrieval_ranks_as_the_scans_and_an_index_without_the_files_falls_back(reader, squad_subset_index, tmp_path):
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units
    from provrag.store.reader import open_index

    cfg = load_config()
    old_index = tmp_path / "old"
    shutil.copytree(squad_subset_index, old_index)
    shutil.rmtree(old_index / "retrieval")  # an index written before INDEX/retrieval/
    with open_index(old_index) as old:
        for q in QUESTIONS:
            new = retrieve_units(reader, q, cfg, k=20)
            scanned = retrieve_units(old, q, cfg, k=20)
            assert [c["text_unit_id"] for c in new.candidates] == [c["text_unit_id"] for c in scanned.candidates]
            assert [c["text"] for c in new.candidates] == [c["text"] for c in scanned.candidates]
            assert new.channels["bm25"]["index"].startswith("postings")
            assert new.channels["dense"]["index"].startswith("exact")
            assert scanned.channels["bm25"]["index"] == "term table scan (SQL)"
            assert scanned.channels["dense"]["index"].startswith("embeddings.parquet scan")


def test_an_update_rewrites_postings_and_vectors(tmp_path, small_corpus):
    """Lincoln's message indexed in halves: the second half added by an update is found through
    the postings and the vectors, with the scores the scans give."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index
    from provrag.query.retrieve import dense, embed_query, retrieve_units
    from provrag.store import terms as lexical
    from provrag.store.reader import open_index

    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    cut = text.index(". ", len(text) // 2) + 1  # the speech is a few long lines: cut at a sentence
    docs, out, cfg = tmp_path / "docs", tmp_path / "idx", load_config()
    docs.mkdir()
    (docs / "first.txt").write_text(text[:cut], encoding="utf-8")
    run_index(docs, out, cfg)
    (docs / "second.txt").write_text(text[cut:], encoding="utf-8")
    run_index(docs, out, cfg)
    with open_index(out) as r:
        second = {u for (u,) in r.con.execute(
            "SELECT t.id FROM text_units t JOIN documents d ON d.id = t.document_id WHERE d.path LIKE '%second.txt'").fetchall()}
        assert second
        stats = lexical.ensure_terms(r.con, r.path)
        assert stats.get("postings") and stats["n_units"] == r.con.execute("SELECT count(*) FROM text_units").fetchall()[0][0]
        question = text[cut:].split(".")[2] + "?"
        terms, _ = lexical.match_terms(r.con, question)
        new = lexical.bm25(r.con, stats, terms, limit=10)
        old = lexical.bm25(r.con, _sql_stats(stats), terms, limit=10)
        assert [u for u, _ in new] == [u for u, _ in old] and dict(new) == pytest.approx(dict(old))
        assert new[0][0] in second
        vec, _ = embed_query(r, question)
        found = retrieve_units(r, question, cfg, k=5)
        assert found.channels["dense"]["index"].startswith("exact")
        assert [c["cosine"] for c in found.candidates] == pytest.approx(
            [dict(dense(r.con, vec, limit=500)).get(c["text_unit_id"], 0.0) for c in found.candidates], abs=1e-5)
        assert found.candidates[0]["text_unit_id"] in second
