"""Paragraph vectors written at index time (index/passages.py, store/passages.py): `provrag index`
writes MiniLM's vector of every paragraph the offline answerer may read, an ask reads them instead
of running the model on its paragraphs (the same answer either way), an index without them is
answered as before, and an update embeds only the paragraphs it did not hold."""
from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from provrag.config import load_config

ON = {"embeddings": {"passage_vectors": True}}   # off by default: it costs index time (config.toml)
from provrag.embeddings import minilm
from tests import components

QUESTION = "What did Lincoln say about the Emancipation Proclamation?"


@pytest.fixture(scope="module")
def lincoln(tmp_path_factory, small_corpus):
    """An offline index (default settings) of the 1863 State of the Union, and its documents folder."""
    from provrag.pipelines.index import run_index

    components.minilm_weights()  # no model package: skipped (in CI: fails)
    base = tmp_path_factory.mktemp("passages")
    docs = base / "docs"
    docs.mkdir()
    shutil.copy(small_corpus / "sotu-1863-lincoln.txt", docs)
    run_index(docs, base / "idx", load_config(None, ON))
    return docs, base / "idx"


@pytest.fixture()
def pooled(monkeypatch):
    """The texts each pooled MiniLM pass read (token passes left out), and a fresh store of
    remembered vectors (nothing a test before read counts)."""
    from provrag.embeddings import remembered

    monkeypatch.setattr(remembered, "STORE", remembered.Remembered())
    seen: list[str] = []
    forward = minilm.MiniLMEmbedder._forward

    def spy(self, texts, tokens):
        if tokens is None:
            seen.extend(texts)
        return forward(self, texts, tokens)

    monkeypatch.setattr(minilm.MiniLMEmbedder, "_forward", spy)
    return seen


def _answer(index, int8: bool = True):
    from provrag.pipelines.ask import run_ask

    cfg = load_config(None, {**ON, "search": {"meaning_int8": int8}})
    r = run_ask(QUESTION, index, cfg, save=False).to_json()
    return r["answer"], r["citations"], None if r["confidence"] is None else round(r["confidence"], 3)


def test_the_index_holds_every_paragraph_the_answerer_cuts(lincoln):
    from provrag.index.passages import paragraph_texts
    from provrag.store.passages import digest, stored_passages

    _, idx = lincoln
    texts = paragraph_texts(pl.read_parquet(idx / "text_units.parquet"))
    stored = stored_passages(idx)
    assert stored is not None and len(stored) == len(texts) > 20
    # what is stored is what the model gives the text
    fresh = minilm.MiniLMEmbedder().embed(texts[:3])
    got = stored.find(texts[:3], minilm.MiniLMEmbedder().weights_sha256)
    assert np.allclose(np.stack([got[t] for t in texts[:3]]), fresh, atol=1e-5)
    assert sorted(bytes(k) for k in stored.keys) == sorted(digest(t) for t in texts)


@pytest.mark.parametrize("int8", [False, True])
def test_an_ask_reads_its_paragraphs_from_the_index_not_the_model(lincoln, pooled, tmp_path, int8):
    """The index holds the float pass's vectors: a float meaning pass gets the same answer from them
    as from the model to the last digit; the int8 pass ([search] meaning_int8, the default) reads
    them too, and its own vectors of the paragraphs move the confidence by less than 0.01."""
    from provrag.embeddings import remembered
    from provrag.engines.offline.answer import reading

    _, idx = lincoln
    reading._MEMO.readings = None
    with_vectors = _answer(idx, int8)
    assert remembered.STORE.stored > 0          # paragraphs served by the index
    assert pooled == []                         # and no pooled model pass at all
    # the same index without the vectors (as one written before them): the model reads them, same answer
    bare = tmp_path / "idx"
    shutil.copytree(idx, bare)
    for f in (bare / "retrieval").glob("passages*"):
        f.unlink()
    remembered.STORE = remembered.Remembered()
    reading._MEMO.readings = None               # the reader's per-question memo: read this question afresh
    without = _answer(bare, int8)
    if int8:
        assert without[:2] == with_vectors[:2] and abs(without[2] - with_vectors[2]) < 0.01
    else:
        assert without == with_vectors
    assert remembered.STORE.stored == 0 and len(pooled) > 0


def test_an_update_embeds_only_new_paragraphs(lincoln, small_corpus, pooled, tmp_path):
    from provrag.index.passages import paragraph_texts
    from provrag.pipelines.index import run_index
    from provrag.store.passages import stored_passages

    docs, idx = lincoln
    new_docs, out = tmp_path / "docs", tmp_path / "idx"
    shutil.copytree(docs, new_docs)
    shutil.copytree(idx, out)
    before = set(paragraph_texts(pl.read_parquet(out / "text_units.parquet")))
    shutil.copy(small_corpus / "debian-developers-reference-scope.html", new_docs)
    run_index(new_docs, out, load_config(None, ON))
    after = paragraph_texts(pl.read_parquet(out / "text_units.parquet"))
    assert len(stored_passages(out)) == len(after)
    new = [t for t in after if t not in before]
    assert new and sorted(set(pooled) & set(after)) == sorted(new)   # the model read the new paragraphs only


def test_off_writes_nothing(small_corpus, tmp_path):
    from provrag.pipelines.index import run_index

    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(small_corpus / "debian-developers-reference-scope.html", docs)
    run_index(docs, tmp_path / "idx", load_config(None, {"embeddings": {"passage_vectors": False}}))
    assert not list((tmp_path / "idx" / "retrieval").glob("passages*"))
