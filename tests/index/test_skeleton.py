"""KET-RAG skeleton: β of the units by PageRank, and a keyword graph over every unit."""
import polars as pl
import pytest

from provrag.config import load_config
from provrag.embeddings.tfidf import TfidfEmbedder
from provrag.index.chunk import chunk_text
from provrag.index.skeleton import skeleton_stage
from provrag.index.tables import frame
from provrag.store import schema


def _units(small_corpus) -> tuple[pl.DataFrame, object]:
    """Lincoln's 1863 message (../shared/corpora/small) in 120-token units, with TF-IDF vectors."""
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text()
    rows = chunk_text(text, None, 120, 0)
    for i, u in enumerate(rows):
        u["id"], u["human_readable_id"] = f"u{i:03d}", i
    vecs = TfidfEmbedder(64).fit([u["text"] for u in rows]).embed([u["text"] for u in rows])
    return frame(schema.TEXT_UNITS, rows), vecs


@pytest.mark.parametrize("beta", [0.1, 0.25, 0.5])
def test_skeleton_fraction_is_beta(small_corpus, beta):
    units, vecs = _units(small_corpus)
    cfg = load_config(overrides={"skeleton": {"beta": beta}})
    units, _ = skeleton_stage(units, vecs, cfg)
    n_sk = units["is_skeleton"].sum()
    assert abs(n_sk - beta * units.height) <= 1
    # the skeleton is exactly the top-scored units
    lowest_in = units.filter(pl.col("is_skeleton"))["skeleton_score"].min()
    highest_out = units.filter(~pl.col("is_skeleton"))["skeleton_score"].max()
    assert lowest_in >= highest_out
    assert abs(units["skeleton_score"].sum() - 1.0) < 1e-6  # PageRank is a distribution


def test_fills_the_contract_columns_and_keeps_the_rest(small_corpus):
    units, vecs = _units(small_corpus)
    marked, keywords = skeleton_stage(units, vecs, load_config())
    assert marked.schema == units.schema and keywords.schema == frame(schema.KEYWORDS, []).schema
    assert marked["is_skeleton"].null_count() == 0 and marked["skeleton_score"].null_count() == 0
    assert marked.drop("is_skeleton", "skeleton_score").equals(units.drop("is_skeleton", "skeleton_score"))
    assert keywords["human_readable_id"].to_list() == list(range(keywords.height))


def test_keywords_cover_every_unit_and_are_real_words(small_corpus):
    units, vecs = _units(small_corpus)
    units, keywords = skeleton_stage(units, vecs, load_config())
    ids = set(units["id"])
    covered = {t for ts in keywords["text_unit_ids"] for t in ts}
    assert covered == ids, "every unit, skeleton or not, is in the keyword graph"
    by_word = {k["keyword"]: k for k in keywords.iter_rows(named=True)}
    assert "the" not in by_word and "and" not in by_word
    treaty = by_word["treaty"]
    assert set(treaty["text_unit_ids"]) == {u["id"] for u in units.iter_rows(named=True) if "treaty" in u["text"].lower()}


def test_deterministic(small_corpus):
    units, vecs = _units(small_corpus)
    a, ka = skeleton_stage(units, vecs, load_config())
    b, kb = skeleton_stage(units, vecs, load_config())
    assert a.equals(b) and ka.equals(kb)


def _two_documents(small_corpus) -> pl.DataFrame:
    """Lincoln's message and a tenth of it as a second document, as one run's text units."""
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text()
    rows = []
    for doc, body in (("doc-lincoln", text), ("doc-excerpt", text[: len(text) // 10])):
        for u in chunk_text(body, None, 120, 0):
            u["id"], u["document_id"] = f"{doc}-{len(rows):03d}", doc
            u["human_readable_id"] = len(rows)
            rows.append(u)
    return frame(schema.TEXT_UNITS, rows)


def test_each_document_gets_its_own_beta_and_keeps_it_when_others_change(small_corpus):
    units = _two_documents(small_corpus)
    cfg = load_config()
    both, _ = skeleton_stage(units, None, cfg)
    for doc in ("doc-lincoln", "doc-excerpt"):  # the short excerpt is not starved by the long message
        part = both.filter(pl.col("document_id") == doc)
        assert part.height and part["is_skeleton"].sum() == max(1, round(0.25 * part.height))
    # the other document removed: this one's skeleton and scores are exactly what they were
    alone, _ = skeleton_stage(units.filter(pl.col("document_id") == "doc-lincoln"), None, cfg)
    was = both.filter(pl.col("document_id") == "doc-lincoln")
    assert alone.select("id", "is_skeleton", "skeleton_score").equals(was.select("id", "is_skeleton", "skeleton_score"))


def _one_document_graph(small_corpus):
    """Lincoln's message as one document: its count matrix and its skeleton edges (cosine + overlap)."""
    from provrag.index.neighbours import exact_neighbours
    from provrag.index.skeleton import _lexical_neighbours, document_vectors, keyword_matrix

    units, _ = _units(small_corpus)
    m, vocab = keyword_matrix(units["text"].to_list())
    sk = load_config().skeleton
    return units, m, vocab, exact_neighbours(document_vectors(m), sk.knn_k) + _lexical_neighbours(m, sk.lexical_k)


def test_pagerank_is_networkx_pagerank(small_corpus):
    """The sparse power iteration gives networkx's scores on the real graph (repeated edges add up)."""
    import networkx as nx

    from provrag.index.skeleton import pagerank

    units, m, _, edges = _one_document_graph(small_corpus)
    g = nx.DiGraph()
    g.add_nodes_from(range(units.height))
    for a, b, w in edges:
        g.add_edge(a, b, weight=g.get_edge_data(a, b, {}).get("weight", 0.0) + w)
    expected = nx.pagerank(g, alpha=0.85, weight="weight")
    got = pagerank(units.height, edges, 0.85)
    assert max(abs(got[i] - expected[i]) for i in range(units.height)) < 1e-12
    assert len({round(v, 9) for v in got}) > units.height // 2  # a real ranking, not a uniform vector


def test_bounded_blocks_give_the_same_edges(small_corpus, monkeypatch):
    """Overlap and exact neighbours computed a few rows at a time equal the one-block result."""
    from provrag.index import neighbours, skeleton
    from provrag.index.skeleton import _lexical_neighbours, document_vectors

    _, m, _, _ = _one_document_graph(small_corpus)
    lexical, cosine = _lexical_neighbours(m, 3), neighbours.exact_neighbours(document_vectors(m), 3)
    monkeypatch.setattr(skeleton, "_OVERLAP_PAIRS", 50)      # a handful of units per block
    monkeypatch.setattr(neighbours, "_BLOCK_CELLS", 3 * m.shape[0])  # three rows per block
    assert len(skeleton._row_blocks(m[:, :1].toarray().ravel() + 40.0, 50)) == m.shape[0]
    assert _lexical_neighbours(m, 3) == lexical and lexical
    assert neighbours.exact_neighbours(document_vectors(m), 3) == cosine and cosine


def test_keywords_frame_lists_each_words_units_sorted_by_id(small_corpus):
    """Built from the count matrix's arrays: per word, the ids of the units it occurs in, sorted,
    and its total count."""
    from provrag.index.skeleton import keywords_frame

    units, m, vocab, _ = _one_document_graph(small_corpus)
    ids = units["id"].to_list()
    shuffled = pl.Series(list(reversed(ids)))  # ids out of row order: lists must still come out sorted
    kw = keywords_frame(m[::-1], vocab, shuffled)
    dense = m.toarray()
    for row in kw.iter_rows(named=True):
        j = row["human_readable_id"]
        assert row["keyword"] == vocab[j] and row["frequency"] == int(dense[:, j].sum())
        assert row["text_unit_ids"] == sorted(ids[r] for r in range(len(ids)) if dense[r, j])
