"""MiniLM's encoder on onnxruntime (embeddings/minilm_onnx.py) computes what the numpy reference
pass computes, from a graph that train/encoder_graph.py rebuilds byte for byte."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from provrag.embeddings import minilm, minilm_onnx
from tests import components

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def emb():
    components.minilm_weights()
    return minilm.MiniLMEmbedder(8)


def real_texts() -> list[str]:
    """Sentences and paragraphs of the sample corpus, short and long (truncated at 256 pieces)."""
    text = (ROOT / "data" / "halcyon-design-decisions.md").read_text(encoding="utf-8")
    paragraphs = [p.strip() for p in text.split("\n\n") if len(p.split()) > 5]
    sentences = [s for p in paragraphs for s in re.split(r"(?<=[.!?])\s+", p) if len(s.split()) > 3]
    return sentences[:24] + paragraphs[:8] + [" ".join(paragraphs)]


def test_the_shipped_graph_runs_and_matches_the_numpy_pass(emb):
    bert = emb._bert
    assert bert.onnx is not None, "the shipped graph did not load: every question would take the slower numpy pass"
    texts = real_texts()
    enc = [seq for seq, _ in emb.pieces(texts)]
    n = max(len(seq) for seq in enc)
    assert n == minilm.MAX_SEQ_LENGTH          # the long text is truncated: the longest pass is checked
    ids = np.zeros((len(enc), n), np.int64)
    mask = np.zeros((len(enc), n), np.float32)
    for row, seq in enumerate(enc):
        ids[row, :len(seq)] = seq
        mask[row, :len(seq)] = 1.0
    x = bert.word[ids] + bert.pos[:n] + bert.type0
    fast = bert.onnx.hidden_states(x, mask, threads=1)
    reference = bert.numpy_pass(x.copy(), mask)
    on = mask.astype(bool)
    assert fast.shape == reference.shape
    np.testing.assert_allclose(fast[on], reference[on], atol=1e-5)
    # a server's request runs on its share of the cores: another session, the same numbers
    shared = bert.onnx.hidden_states(x, mask, threads=2)
    np.testing.assert_allclose(shared[on], fast[on], atol=1e-6)
    assert bert.onnx.session(2) is bert.onnx.session(2) is not bert.onnx.session(1)
    assert bert.onnx.session(64) is bert.onnx.session(minilm_onnx.MAX_THREADS)


def test_embeddings_and_token_vectors_match_the_reference_runtime(emb, monkeypatch):
    texts = real_texts()
    fast, fast_tokens = emb.embed_tokens(texts)
    monkeypatch.setattr(emb._bert, "_onnx", [None])  # what PROVRAG_MINILM_RUNTIME=numpy selects
    slow, slow_tokens = emb.embed_tokens(texts)
    np.testing.assert_allclose(fast, slow, atol=1e-6)
    assert [p for p, _ in fast_tokens] == [p for p, _ in slow_tokens]
    for (_, a), (_, b) in zip(fast_tokens, slow_tokens):
        np.testing.assert_allclose(a, b, atol=1e-5)
    # the same neighbours: in the order of the fast pass's cosines of every text to the first, the
    # reference's never rise by more than the tolerance (two texts whose cosines tie within it may
    # swap places from one CPU's arithmetic to another's, as they did on an AMD EPYC)
    order = np.argsort(-(fast @ fast[0]), kind="stable")
    rises = np.diff((slow @ slow[0])[order])
    assert rises.max() <= 1e-6, (rises.max(), np.sort(fast @ fast[0])[::-1][:5])


def test_loading_makes_only_the_session_a_cli_call_uses(emb):
    fresh = minilm_onnx.encoder(emb._bert, threads=2)
    assert list(fresh.sessions) == [2]      # not another one, made only to check the inputs


def test_numpy_runtime_is_chosen_by_the_environment_and_a_foreign_graph_is_refused(emb, monkeypatch, tmp_path):
    monkeypatch.setenv(minilm_onnx.ENV_RUNTIME, "numpy")
    assert minilm_onnx.encoder(emb._bert, 1) is None
    monkeypatch.delenv(minilm_onnx.ENV_RUNTIME)
    assert minilm_onnx.encoder(emb._bert, 1) is not None

    class FewerLayers:                      # weights of another shape than the graph's inputs
        ln0 = emb._bert.ln0
        layers = emb._bert.layers[:2]
    assert minilm_onnx.encoder(FewerLayers(), 1) is None
    monkeypatch.setattr(minilm_onnx, "GRAPH", tmp_path / "missing.onnx")
    assert minilm_onnx.encoder(emb._bert, 1) is None


@pytest.mark.parametrize("int8", [False, True])   # the float graph, and its int8 twin (test_minilm_int8.py)
def test_the_graph_is_rebuilt_byte_for_byte_by_its_script(int8):
    pytest.importorskip("onnx", reason="the onnx package (test extra) writes the graph")
    sys.path.insert(0, str(ROOT / "train"))
    try:
        import encoder_graph
    finally:
        sys.path.remove(str(ROOT / "train"))
    conf = json.loads((minilm.model_dir() / "config.json").read_text())
    assert encoder_graph.graph_bytes(conf, int8) == (minilm_onnx.GRAPH_INT8 if int8 else minilm_onnx.GRAPH).read_bytes()
