"""The TF-IDF+LSA embedder: deterministic, saved without pickles, retrieves the right unit."""
import numpy as np
import pytest

from provrag.index.chunk import chunk_text
from provrag.embeddings import load_embedder
from provrag.embeddings.tfidf import TfidfEmbedder


def _units(small_corpus):
    """Lincoln's 1863 message (../shared/corpora/small) in 200-token units."""
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text()
    return [u["text"] for u in chunk_text(text, None, 200, 0)]


def test_vectors_are_normalised_and_deterministic(small_corpus):
    texts = _units(small_corpus)
    a = TfidfEmbedder(64).fit(texts).embed(texts)
    b = TfidfEmbedder(64).fit(texts).embed(texts)
    assert a.dtype == np.float32 and a.shape[0] == len(texts)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)
    assert np.array_equal(a, b)


def test_save_load_roundtrip_and_query(tmp_path, small_corpus):
    texts = _units(small_corpus)
    e = TfidfEmbedder(64).fit(texts)
    e.save(tmp_path / "embedder")
    files = sorted(p.name for p in (tmp_path / "embedder").iterdir())
    assert not any(f.endswith((".pkl", ".joblib")) for f in files)
    e2 = load_embedder(tmp_path)
    assert np.allclose(e2.embed(texts), e.embed(texts), atol=1e-6)
    target = next(i for i, t in enumerate(texts) if "Indian" in t and "tribes" in t)
    q = e2.embed([texts[target][:300]])
    sims = (e2.embed(texts) @ q.T).ravel()
    assert int(np.argmax(sims)) == target


def test_tiny_and_empty_corpora():
    for texts in (["one short text"], ["the and of", "a an the"], ["alpha beta", "gamma delta", "alpha gamma"]):
        e = TfidfEmbedder(32).fit(texts)
        v = e.embed(texts + ["unseen words only"])
        assert v.shape[0] == len(texts) + 1 and np.isfinite(v).all()


def test_query_transform_is_numpy_only_and_equals_the_fit_time_transform(tmp_path, small_corpus):
    """Queries are embedded without scikit-learn (its import is most of `provrag ask`'s
    start-up): the numpy transform gives the vectors scikit-learn's vectoriser gives."""
    import json
    import subprocess
    import sys

    from provrag.text.words import ENGLISH_STOP_WORDS as SKLEARN_STOP_WORDS

    texts = _units(small_corpus)
    e = TfidfEmbedder(64).fit(texts)
    e.save(tmp_path / "embedder")
    e2 = load_embedder(tmp_path)
    queries = [t[:200] for t in texts[:10]] + ["What did Lincoln say about the Indian tribes?",
                                                "nothing known here zzqx", "", "The the and of"]
    counts = e2._counter(e2.vocab).transform(queries + texts)  # the fit-time (scikit-learn) path
    from provrag.embeddings.base import normalise as _normalise

    expected = _normalise(e2._weigh(counts) @ e2.components.T)
    got = e2.embed_numpy(queries + texts)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.allclose(got, expected, atol=1e-6)
    assert np.allclose(e2.embed(queries), expected[:len(queries)], atol=1e-6)  # small batches take the numpy path
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert SKLEARN_STOP_WORDS == frozenset(ENGLISH_STOP_WORDS)
    # and a fresh process embedding a query never imports scikit-learn
    code = ("import sys, json; from provrag.embeddings import load_embedder; "
            f"e = load_embedder({json.dumps(str(tmp_path))}); e.embed(['Indian tribes']); "
            "print(any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture(scope="module")
def many_units(shared) -> list[str]:
    """~3,000 small units (more than the 2,000-unit LSA sample) of real text: the eval split's
    halueval and vitaminc articles and the Dulce novella in 30-token units."""
    dev = shared / "eval" / "dev"
    files = sorted((dev / "halueval" / "corpus").glob("*.md")) + sorted((dev / "vitaminc" / "corpus").glob("*.md"))
    files += sorted((shared / "fixtures" / "graphrag-dulce" / "source").glob("Operation*.md"))
    return [u["text"] for f in files for u in chunk_text(f.read_text(), None, 30, 0)][:3000]


@pytest.fixture(scope="module")
def fitted_many(many_units) -> TfidfEmbedder:
    return TfidfEmbedder(64).fit(many_units)


def test_a_series_is_fitted_like_a_list(small_corpus):
    import polars as pl

    texts = _units(small_corpus)
    a, b = TfidfEmbedder(64).fit(texts), TfidfEmbedder(64).fit(pl.Series(texts))
    assert a.vocab == b.vocab and np.array_equal(a.idf, b.idf) and np.array_equal(a.components, b.components)


def test_beyond_the_lsa_sample_vectors_are_those_of_the_whole_vocabulary(many_units, fitted_many):
    """The vocabulary is the sample's terms (found in ≥ 2 units of the whole corpus): a term no
    sample unit holds has a zero LSA column, so the vectors equal, to float rounding, those of
    the full vocabulary (recomputed here the way the embedder did before issue 18)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import normalize

    from provrag.embeddings.tfidf import lsa_sample

    texts, e = many_units, fitted_many
    assert len(texts) > 2000
    counts = CountVectorizer(token_pattern=r"(?u)\b\w\w+\b", stop_words="english", ngram_range=(1, 2),
                             dtype=np.float32).fit_transform(texts)
    df = np.asarray((counts > 0).sum(axis=0)).ravel()
    counts = counts[:, df >= 2].tocsr()
    assert counts.shape[1] > len(e.vocab)  # the full vocabulary is larger: the saved embedder is smaller
    counts.data = 1.0 + np.log(counts.data)
    weighted = normalize(counts.multiply((np.log((1 + len(texts)) / (1 + df[df >= 2])) + 1.0).astype(np.float32)).tocsr())
    sample = weighted[lsa_sample(len(texts))]
    vals, vecs = np.linalg.eigh((sample @ sample.T).toarray().astype(np.float64))
    top = np.argsort(vals)[::-1][:e.dim]
    projected = np.asarray(weighted @ ((sample.T @ vecs[:, top]).T / np.sqrt(vals[top])[:, None]).T)
    full, mine = normalize(projected), e.embed(texts)
    signs = np.sign((full * mine).sum(axis=0))  # each dimension's sign is fixed by a rule on its own basis row
    has_direction = np.linalg.norm(projected, axis=1) > 1e-6  # a unit of no sample term projects to ~0 in both
    assert has_direction.sum() > 2900
    assert np.allclose((full * signs)[has_direction], mine[has_direction], atol=1e-4)


def test_the_vocabulary_cap_keeps_the_most_frequent_terms(many_units, fitted_many):
    whole, capped = fitted_many, TfidfEmbedder(64, max_vocabulary=2000).fit(many_units)
    assert len(whole.vocab) > 2000 and len(capped.vocab) == 2000
    assert list(capped.vocab) == sorted(capped.vocab)  # alphabetical, as scikit-learn numbers them
    # idf falls as document frequency grows: every kept term is at least as frequent as every dropped one
    dropped = [whole.idf[j] for t, j in whole.vocab.items() if t not in capped.vocab]
    assert max(whole.idf[whole.vocab[t]] for t in capped.vocab) <= min(dropped)
    v = capped.embed(many_units[:100])
    assert v.shape == (100, capped.dim) and np.allclose(np.linalg.norm(v, axis=1)[np.abs(v).sum(1) > 0], 1, atol=1e-4)
