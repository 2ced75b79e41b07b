"""What a MiniLM pass costs, never what it gives: with numpy every core gets a forward pass of its
own (one BLAS thread each), on onnxruntime a pass gets the question's cores; a text's vectors are
those of a pass of its own, float rounding aside.
Timings: bench/question_speed.py."""
from __future__ import annotations

import numpy as np
import pytest

from provrag import cores
from provrag.embeddings import minilm
from tests import components

# sentences of the R FAQ (../shared/corpora/small/R-FAQ.pdf, section 2.1), as a question's candidates are
SENTENCES = ["R is a system for statistical computation and graphics.",
             "It consists of a language plus a run-time environment with graphics, a debugger, access to certain "
             "system functions, and the ability to run programs stored in script files.",
             "The design of R has been heavily influenced by two existing languages: Becker, Chambers & Wilks' S "
             "and Sussman's Scheme.",
             "R was initially written by Ross Ihaka and Robert Gentleman at the Department of Statistics of the "
             "University of Auckland in Auckland, New Zealand.",
             "The current version of R is available from CRAN.",
             "R is being developed for the Unix-like, Windows and Mac families of operating systems."]


@pytest.fixture(scope="module")
def emb():
    components.minilm_weights()
    return minilm.MiniLMEmbedder()


def test_a_pass_that_fits_one_batch_is_cut_in_one_per_core():
    lengths = np.array([24, 30, 28, 33, 20, 19])   # one batch of six by the token budget alone
    assert [len(b) for b in minilm.plan_batches(lengths, 64, 1)] == [6]
    two = minilm.plan_batches(lengths, 64, 2)
    assert len(two) == 2
    assert sorted(int(i) for b in two for i in b) == list(range(6))
    assert [int(lengths[b[0]]) for b in two] == [33, 24]          # still longest first within each
    # never more passes than texts, and a lone text stays one pass
    assert len(minilm.plan_batches(np.array([40]), 64, 2)) == 1
    assert len(minilm.plan_batches(lengths, 64, 8)) == 6


def test_cutting_splits_the_costliest_pass(emb):
    # a long paragraph alone, then six short sentences together: the six are cut, not the one
    lengths = np.array([250] + [20] * 6)
    passes = minilm.plan_batches(lengths, 64, 2)
    assert [len(b) for b in passes] == [1, 6]
    passes = minilm.plan_batches(lengths, 64, 3)
    assert [len(b) for b in passes] == [1, 3, 3]


@pytest.mark.parametrize("runtime", ["numpy", "onnxruntime"])
def test_each_core_runs_a_pass_and_the_vectors_are_each_texts_own(emb, monkeypatch, runtime):
    """numpy: a pass per core, each on one BLAS thread; onnxruntime: one pass on the question's
    share of the cores (its own threads share it). Either way a text's vectors are its own."""
    if runtime == "numpy":
        monkeypatch.setattr(emb._bert, "_onnx", [None])   # no float graph: the numpy pass
    else:
        assert emb._bert.onnx is not None
    passes: list[tuple[tuple[int, int], int]] = []
    hidden = emb._bert.hidden_states

    def spy(ids, mask, threads=1, **kw):
        passes.append((ids.shape, threads))
        return hidden(ids, mask, threads, **kw)

    monkeypatch.setattr(emb._bert, "hidden_states", spy)
    token = cores.share.set(lambda: 2)
    try:
        vecs, toks = emb.embed_tokens(SENTENCES)
    finally:
        cores.share.reset(token)
    assert sum(shape[0] for shape, _ in passes) == len(SENTENCES)
    if runtime == "numpy":
        assert len(passes) == 2
    else:   # passes cut by length alone (no cut per core), each on the share's two threads
        assert len(passes) == len(minilm.plan_batches(np.array(emb.token_counts(SENTENCES)), emb.batch_size, 1))
        assert {threads for _, threads in passes} == {2}
    for i, s in enumerate(SENTENCES):
        alone, alone_toks = emb.embed_tokens([s])
        np.testing.assert_allclose(vecs[i], alone[0], atol=1e-6)
        assert toks[i][0] == alone_toks[0][0]
        np.testing.assert_allclose(toks[i][1], alone_toks[0][1], atol=1e-5)
