"""MiniLM with int8 matmuls (embeddings/minilm_onnx.GRAPH_INT8, [search] meaning_int8): the graph
is what onnxruntime's own quantize_dynamic makes of the float graph (its weights stored as uint8),
its vectors stay close to the float pass's, and the two passes' vectors are never mixed up between
questions. (The graph is rebuilt byte for byte by train/encoder_graph.py: test_minilm_onnx.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from provrag.embeddings import minilm, minilm_onnx
from tests import components
from tests.embeddings.test_minilm_onnx import ROOT, real_texts


@pytest.fixture(scope="module")
def emb():
    components.minilm_weights()
    return minilm.MiniLMEmbedder(8)


def unsigned_int8():
    """train/unsigned_int8.py, the rewrite of int8 weights as uint8."""
    import importlib
    import sys

    sys.path.insert(0, str(ROOT / "train"))
    try:
        return importlib.import_module("unsigned_int8")
    finally:
        sys.path.remove(str(ROOT / "train"))


def batch(emb, texts):
    enc = [seq for seq, _ in emb.pieces(texts)]
    n = max(len(seq) for seq in enc)
    ids = np.zeros((len(enc), n), np.int64)
    mask = np.zeros((len(enc), n), np.float32)
    for row, seq in enumerate(enc):
        ids[row, :len(seq)] = seq
        mask[row, :len(seq)] = 1.0
    return emb._bert.word[ids] + emb._bert.pos[:n] + emb._bert.type0, mask


def test_the_int8_graph_computes_what_onnxruntime_quantize_dynamic_makes_of_the_float_graph(emb, tmp_path):
    onnx = pytest.importorskip("onnx", reason="the onnx package (test extra) builds the reference")
    import onnxruntime as ort
    from onnx import numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # the float graph with the weights baked in, quantised by onnxruntime itself
    feeds = minilm_onnx.weight_feeds(emb._bert)
    model = onnx.load_from_string(minilm_onnx.GRAPH.read_bytes())
    model.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in feeds.items())
    kept = [i for i in model.graph.input if i.name not in feeds]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    onnx.save(model, tmp_path / "float.onnx")
    quantize_dynamic(tmp_path / "float.onnx", tmp_path / "int8.onnx", weight_type=QuantType.QInt8, per_channel=True)
    quantised = onnx.load(tmp_path / "int8.onnx")
    assert unsigned_int8().unsigned_weights(quantised) == 2 * 4 * 6   # the same numbers as uint8 (weights, zero points)
    theirs = ort.InferenceSession(quantised.SerializeToString(), providers=["CPUExecutionProvider"])

    ours = minilm_onnx.encoder(emb._bert, 1, int8=True)
    assert ours is not None, "the shipped int8 graph did not load"
    x, mask = batch(emb, real_texts())
    bias = ((1.0 - mask) * np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
    want = theirs.run(["hidden"], {"embedded": x.astype(np.float32), "mask_bias": bias})[0]
    got = ours.hidden_states(x, mask, threads=1)
    on = mask.astype(bool)
    np.testing.assert_allclose(got[on], want[on], atol=1e-4)


def test_the_int8_weights_are_constants_of_the_session_and_give_what_they_gave_as_inputs(emb):
    """The int8 graph's weights are initializers handed over when the session is made (packed
    once), not inputs fed at every pass: a pass takes only the embedded tokens and the mask, and
    its hidden states are bit for bit those of the same graph fed the weights as inputs (how
    provrag ran it before), one text a pass as the meaning pass reads them."""
    onnx = pytest.importorskip("onnx", reason="the onnx package (test extra) builds the twin")
    import onnxruntime as ort
    from onnx import TensorProto, helper

    ours = minilm_onnx.encoder(emb._bert, 1, int8=True)
    assert ours is not None, "the shipped int8 graph did not load"
    assert {i.name for i in ours.session(1).get_inputs()} == {"embedded", "mask_bias"}
    assert ours.feeds == {}, "the quantised arrays were copied into onnxruntime: ours are let go"

    # the twin: the same graph with every external initializer turned back into an input
    model = onnx.load_from_string(minilm_onnx.GRAPH_INT8.read_bytes())
    external = [t for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    assert len(external) == 6 * 20 + 2   # 6 layers × (4 matrices × 3 arrays + 8 vectors) + the embeddings' norm
    for t in external:
        model.graph.initializer.remove(t)
        model.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    twin = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = minilm_onnx.quantised_feeds(emb._bert)
    for text in real_texts()[:6]:
        x, mask = batch(emb, [text])
        bias = ((1.0 - mask) * np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
        want = twin.run(["hidden"], dict(feeds, embedded=x.astype(np.float32), mask_bias=bias))[0]
        assert np.array_equal(ours.hidden_states(x, mask, threads=1), want)


def test_int8_vectors_stay_close_to_the_float_pass_and_keep_the_neighbours(emb):
    texts = real_texts()
    exact, exact_tokens = emb.embed_tokens(texts)
    quick_emb = minilm.MiniLMEmbedder(8, int8=True)
    quick, quick_tokens = quick_emb.embed_tokens(texts)
    same_text = (exact * quick).sum(1)
    assert not np.allclose(exact, quick, atol=1e-4)          # the int8 pass did run
    assert same_text.min() > 0.97 and same_text.mean() > 0.985, same_text
    # what the meaning score compares: cosines between texts move by ~0.01 at most on average
    moved = np.abs(exact @ exact.T - quick @ quick.T)
    assert moved.mean() < 0.015 and moved.max() < 0.06
    for (pieces_a, a), (pieces_b, b) in zip(exact_tokens, quick_tokens):
        assert pieces_a == pieces_b and (a * b).sum(1).mean() > 0.95


def test_a_float_reading_is_not_served_to_an_int8_reading(emb, monkeypatch):
    from provrag.embeddings import remembered
    from provrag.engines.offline.answer.selection import minilm_meaning

    monkeypatch.setattr(remembered, "STORE", remembered.Remembered())
    texts = real_texts()[:3]
    cands = [{"sentence": s} for s in texts[1:]]
    exact = minilm_meaning(texts[0], [dict(c) for c in cands], 0.5, 1.0)
    quick = minilm_meaning(texts[0], [dict(c) for c in cands], 0.5, 1.0, int8=True)
    assert remembered.STORE.hits == 0                         # the int8 reading went through its own pass
    assert exact != quick and np.allclose(exact, quick, atol=0.05)
    again = minilm_meaning(texts[0], [dict(c) for c in cands], 0.5, 1.0, int8=True)
    assert again == quick and remembered.STORE.hits == len(texts)


def test_ask_reads_meaning_with_the_int8_pass_unless_told_otherwise(sample_index, monkeypatch):
    """[search] meaning_int8 (true by default) reaches the answer's meaning pass; false gives the
    float pass. The README's first example is answered alike by both."""
    from provrag.config import load_config
    from provrag.embeddings import remembered
    from provrag.pipelines.ask import run_ask

    passes: list[bool] = []
    forward = minilm.MiniLMEmbedder._forward

    def spy(self, texts, tokens):
        passes.append(self.int8)
        return forward(self, texts, tokens)

    monkeypatch.setattr(minilm.MiniLMEmbedder, "_forward", spy)
    question = "Who leads the Halcyon commissioning team?"
    answers = {}
    for int8 in (True, False):
        monkeypatch.setattr(remembered, "STORE", remembered.Remembered())   # nothing kept from before
        passes.clear()
        cfg = load_config(None, None if int8 else {"search": {"meaning_int8": False}})
        res = run_ask(question, sample_index, cfg, save=False)
        assert passes and set(passes) == {int8}
        answers[int8] = res
    assert "Imogen Vale" in answers[True].answer and answers[True].answer == answers[False].answer
    assert abs(answers[True].confidence - answers[False].confidence) < 0.05


def test_an_int8_pass_never_reads_the_float_layers_and_computes_what_it_did_from_them(emb):
    """Issue 30 (a cold ask's peak RSS): a model loaded for int8 passes quantises its matrices from
    the file one layer at a time and never holds the 42 MB of float layers nor makes the float
    graph's session; its passes are bit for bit those of the int8 graph fed from float layers
    already held (the quantised matrices are the same)."""
    fresh = minilm.Bert(minilm.model_dir())
    x, mask = batch(emb, real_texts())
    ids = _ids(emb, real_texts())
    lazy = fresh.hidden_states(ids, mask, threads=1, int8=True)
    assert fresh._int8[0] is not None, "the int8 graph did not load"
    assert fresh._layers == [] and fresh._onnx == []          # no float matrix held, no float session
    assert fresh.runs_on_onnx(int8=True) and fresh._onnx == []
    _ = emb._bert.layers                                        # the float layers held, as an index's embedding holds them
    held = minilm_onnx.quantised_feeds(emb._bert)
    read = minilm_onnx.quantised_feeds(fresh)
    assert held.keys() == read.keys() and all(np.array_equal(held[k], read[k]) for k in held)
    assert fresh._layers == []
    from_held = minilm_onnx.encoder(emb._bert, 1, int8=True).hidden_states(x, mask, threads=1)
    assert np.array_equal(lazy, from_held)
    # a float pass later in the same process reads the layers then, once, and keeps them
    float_pass = fresh.hidden_states(ids, mask, threads=1)
    assert fresh._layers and fresh.layers is fresh.layers and fresh._onnx[0] is not None
    on = mask.astype(bool)
    assert np.allclose(float_pass[on], emb._bert.onnx.hidden_states(x, mask, 1)[on], atol=1e-5)
    assert not np.allclose(float_pass[on], lazy[on], atol=1e-4)   # that one was the float pass


def _ids(emb, texts):
    enc = [seq for seq, _ in emb.pieces(texts)]
    ids = np.zeros((len(enc), max(len(seq) for seq in enc)), np.int64)
    for row, seq in enumerate(enc):
        ids[row, :len(seq)] = seq
    return ids


def test_layers_read_later_come_only_from_the_file_whose_digest_was_checked(tmp_path):
    """The float layers are read after the model's digest was checked (minilm._loaded): a weights
    file replaced in between is refused, never read into a pass."""
    import shutil

    components.minilm_weights()
    folder = tmp_path / "model"
    shutil.copytree(minilm.model_dir(), folder)
    fresh = minilm.Bert(folder)
    shutil.copy(folder / "model.safetensors", tmp_path / "other")
    (tmp_path / "other").replace(folder / "model.safetensors")   # the same bytes, another file
    assert fresh.int8_encoder() is None and fresh._layers == []
    with pytest.raises(RuntimeError, match="changed since this process checked"):
        _ = fresh.layers


def test_an_int8_vector_is_a_function_of_its_text_whatever_is_read_beside_it():
    """int8 passes quantise their activations with one scale per pass: read in a batch, a text's
    vector moved with its batch-mates and their padding. Each text is read alone now, so the vector
    of a text is the same bit for bit in any company, in any order, on one core or two."""
    from unittest import mock

    texts = real_texts()
    quick = minilm.MiniLMEmbedder(8, int8=True)
    alone = np.stack([quick.embed([t])[0] for t in texts])
    together, tokens = quick.embed_tokens(texts[::-1])
    assert np.array_equal(together[::-1], alone)
    assert np.array_equal(quick.embed(texts[3:9] + texts[:2])[:6], alone[3:9])
    for (pieces, vecs), t in zip(tokens[::-1], texts):
        got = quick.embed_tokens([t])[1][0]
        assert pieces == got[0] and np.array_equal(vecs, got[1])
    with mock.patch("provrag.cores.cores_now", lambda n: (1, None)):
        assert np.array_equal(quick.embed(texts), alone)     # one core: the passes one after another


def test_a_served_answer_does_not_depend_on_the_questions_asked_before(sample_index, monkeypatch):
    """A server keeps MiniLM's vectors between questions (embeddings/remembered.py). When a text's
    int8 vector depended on its batch-mates, a question's confidence moved with what was asked
    before it (14 of 20 eval/texlive confidences, by up to 0.013). Asked first or after others,
    the answer, its confidence and its sources are the same."""
    from provrag.config import load_config
    from provrag.embeddings import remembered
    from provrag.pipelines.ask import run_ask
    from provrag.store.reader import open_index

    cfg = load_config()
    asked = ["Who leads the Halcyon commissioning team?", "Why was the coolant loop redesigned?"]
    before = ["What does the handbook say about safety reviews?", "Which decisions were taken in 2024?",
              "How are design decisions recorded?"]

    def ask_all(questions):
        monkeypatch.setattr(remembered, "STORE", remembered.Remembered())
        with open_index(sample_index) as reader:
            out = [run_ask(q, sample_index, cfg, save=False, reader=reader) for q in questions]
        return [(r.answer, r.confidence, r.abstained, [s.text_unit_id for s in r.sources]) for r in out[-len(asked):]]

    first = ask_all(asked)
    assert first == ask_all(before + asked) == ask_all(before[::-1] + asked[::-1])[::-1]
    assert remembered.STORE.hits > 0       # the later asks did read kept vectors
