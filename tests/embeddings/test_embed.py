"""The TF-IDF+LSA embedder: deterministic, saved without pickles, retrieves the right unit."""
import numpy as np

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
