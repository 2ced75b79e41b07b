"""MiniLM's readings kept between questions: a text goes through the model once, what comes back
from the store is what the model gives it, and the store stays within its bound."""
from __future__ import annotations

import numpy as np
import pytest

from provrag.embeddings import minilm
from provrag.embeddings.remembered import Remembered, entry_bytes

try:
    minilm.model_dir()
    HAVE_MINILM = True
except minilm.MiniLMUnavailable:
    HAVE_MINILM = False

pytestmark = pytest.mark.skipif(not HAVE_MINILM, reason="all-MiniLM-L6-v2 package not installed")

# sentences and a paragraph of the R FAQ (../shared/corpora/small/R-FAQ.pdf)
SENTENCES = ["R is a system for statistical computation and graphics.",
             "R is being developed for the Unix-like, Windows and Mac families of operating systems.",
             "The current version of R is available from CRAN."]
PARAGRAPH = ("R is a system for statistical computation and graphics. It consists of a language plus a run-time "
             "environment with graphics, a debugger, access to certain system functions, and the ability to run "
             "programs stored in script files.")


@pytest.fixture()
def passes(monkeypatch):
    """The texts each model pass read."""
    seen: list[list[str]] = []
    forward = minilm.MiniLMEmbedder._forward

    def spy(self, texts, tokens):
        seen.append(list(texts))
        return forward(self, texts, tokens)

    monkeypatch.setattr(minilm.MiniLMEmbedder, "_forward", spy)
    return seen


def test_a_second_question_reads_only_itself_and_gets_what_a_fresh_pass_gives(monkeypatch, passes):
    from provrag.embeddings import remembered
    from provrag.engines.offline.answer.selection import minilm_meaning

    monkeypatch.setattr(remembered, "STORE", Remembered())
    cands = [{"sentence": s, "paragraph": PARAGRAPH} for s in SENTENCES]
    minilm_meaning("What is R?", cands, 0.5, 1.0, 1.0)
    passes.clear()
    again = [dict(c) for c in cands]
    meaning = minilm_meaning("Which systems does R run on?", again, 0.5, 1.0, 1.0)
    assert passes == [["Which systems does R run on?"]]          # the sentences and paragraph were kept

    monkeypatch.setattr(remembered, "STORE", Remembered())       # the same question, nothing kept
    fresh = [dict(c) for c in cands]
    assert np.allclose(meaning, minilm_meaning("Which systems does R run on?", fresh, 0.5, 1.0, 1.0), atol=1e-5)
    assert [c["maxsim"] for c in again] == [c["maxsim"] for c in fresh]
    assert [c["paragraph_cosine"] for c in again] == [c["paragraph_cosine"] for c in fresh]


def test_the_store_keeps_the_newest_within_its_bytes(passes):
    emb = minilm.MiniLMEmbedder()
    every = Remembered()
    every.embed_tokens(emb, SENTENCES)
    sizes = [entry_bytes(entry) for entry in every.kept.values()]
    store = Remembered(max_bytes=sizes[1] + sizes[2])
    store.embed_tokens(emb, SENTENCES)                   # three texts, room for the last two
    assert store.bytes <= store.max_bytes and len(store.kept) == 2
    passes.clear()
    vecs, toks = store.embed_tokens(emb, SENTENCES[1:])  # the newest two: no pass
    assert passes == [] and vecs.shape == (2, 384) and toks[0][0][:2] == ["r", "is"]
    store.embed(emb, SENTENCES[:1])                      # the oldest was let go; pooled only is a key of its own
    assert passes == [SENTENCES[:1]]


def test_a_paragraph_read_as_a_sentence_before_is_not_read_again(passes):
    """A one-sentence paragraph is also a candidate sentence: its pooled vector comes from the
    pass that read it with its token vectors."""
    emb = minilm.MiniLMEmbedder()
    store = Remembered()
    vecs, _ = store.embed_tokens(emb, SENTENCES)
    passes.clear()
    pooled = store.embed(emb, [SENTENCES[1], PARAGRAPH])
    assert passes == [[PARAGRAPH]]
    assert np.array_equal(pooled[0], vecs[1])
    np.testing.assert_allclose(pooled[0], emb.embed([SENTENCES[1]])[0], atol=1e-6)
    assert store.embed_tokens(emb, [SENTENCES[1]])[1][0][0][:2] == ["r", "is"]   # tokens still there
