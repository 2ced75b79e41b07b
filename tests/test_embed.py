"""The TF-IDF+LSA embedder: deterministic, saved without pickles, retrieves the right unit."""
import numpy as np

from provrag.chunk import chunk_text
from provrag.embed import TfidfEmbedder, load_embedder
from tests.conftest import SMALL


def _units():
    text = (SMALL / "sotu-1863-lincoln.txt").read_text()
    return [u["text"] for u in chunk_text(text, None, 200, 0)]


def test_vectors_are_normalised_and_deterministic():
    texts = _units()
    a = TfidfEmbedder(64).fit(texts).embed(texts)
    b = TfidfEmbedder(64).fit(texts).embed(texts)
    assert a.dtype == np.float32 and a.shape[0] == len(texts)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)
    assert np.array_equal(a, b)


def test_save_load_roundtrip_and_query(tmp_path):
    texts = _units()
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
