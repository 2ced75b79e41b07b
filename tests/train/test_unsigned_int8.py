"""train/unsigned_int8.py: int8 weights stored as uint8 give the same numbers, and onnxruntime then
multiplies them exactly on any CPU; the shipped reader and MiniLM's int8 graph take them so.

Why it matters: with int8 weights, onnxruntime on a CPU without VNNI (AVX2) adds pairs of products
in 16 bits, which saturate, and the reader read some questions otherwise there (the module's
docstring has the measured cases). The case below saturates such a kernel: every activation 255,
every weight ±127 (255·127·2 > 32767)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import unsigned_int8

from provrag.embeddings import minilm_onnx
from provrag.learned import reader


def _matmul_integer(weights: np.ndarray, zero_points: np.ndarray):
    """A graph of one MatMulInteger: uint8 activations (zero point 0) times the given weights."""
    a = helper.make_tensor_value_info("a", TensorProto.UINT8, ["rows", weights.shape[0]])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, ["rows", weights.shape[1]])
    node = helper.make_node("MatMulInteger", ["a", "w", "a_zp", "w_zp"], ["y"])
    inits = [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(0, np.uint8), "a_zp"),
             numpy_helper.from_array(zero_points, "w_zp")]
    model = helper.make_model(helper.make_graph([node], "mm", [a], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _run(model, a: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]


def test_uint8_weights_are_the_same_numbers_and_multiply_exactly():
    rng = np.random.default_rng(7)
    signed = rng.choice(np.array([-127, 127], np.int8), size=(384, 64))
    signed[:, :8] = rng.integers(-127, 128, size=(384, 8), dtype=np.int8)   # and some ordinary columns
    model = _matmul_integer(signed, np.zeros(64, np.int8))
    assert unsigned_int8.unsigned_weights(model) == 2
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert inits["w"].dtype == np.uint8 and (inits["w_zp"] == 128).all()
    # the dequantised weights are the same numbers
    assert np.array_equal(inits["w"].astype(np.int32) - inits["w_zp"].astype(np.int32), signed.astype(np.int32))
    a = np.full((5, 384), 255, np.uint8)
    a[1] = rng.integers(0, 256, size=384, dtype=np.uint8)
    exact = a.astype(np.int64) @ signed.astype(np.int64)
    assert np.array_equal(_run(model, a), exact)
    assert unsigned_int8.unsigned_weights(model) == 0            # already uint8: nothing to do


def test_a_folder_is_rewritten_with_its_manifest(tmp_path):
    import json

    model = _matmul_integer(np.arange(-8, 8, dtype=np.int8).reshape(4, 4), np.zeros(4, np.int8))
    (tmp_path / "reader.onnx").write_bytes(model.SerializeToString())
    (tmp_path / "manifest.json").write_text(json.dumps({"weights": "reader.onnx", "sha256": "old", "bytes": 0}))
    assert unsigned_int8.rewrite_folder(tmp_path) == 2
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["sha256"] == reader._sha256(tmp_path / "reader.onnx")
    assert manifest["bytes"] == (tmp_path / "reader.onnx").stat().st_size
    assert "uint8" in manifest["quantisation"]


def _integer_weights(model) -> list[np.ndarray]:
    inits = {t.name: t for t in model.graph.initializer}
    return [inits[n.input[i]] for n in model.graph.node if n.op_type == "MatMulInteger" for i in (1, 3)
            if n.input[i] in inits]


def test_the_shipped_reader_and_minilm_int8_graph_take_uint8_weights():
    if not reader.available():
        pytest.skip("no reader weights")
    shipped = onnx.load(str(reader.folder() / "reader.onnx"))
    weights = _integer_weights(shipped)
    assert len(weights) == 2 * 39 and all(t.data_type == TensorProto.UINT8 for t in weights)
    assert "uint8" in json_manifest()["quantisation"]
    graph = onnx.load_from_string(minilm_onnx.GRAPH_INT8.read_bytes())
    kinds = {t.name[-3:]: t.data_type for t in graph.graph.initializer if t.name.endswith(("_w_q", "_zp"))}
    assert kinds == {"w_q": TensorProto.UINT8, "_zp": TensorProto.UINT8}


def json_manifest() -> dict:
    import json

    return json.loads((reader.folder() / reader.MANIFEST).read_text())


def test_quantise_stores_what_quantize_dynamic_makes_as_uint8(tmp_path):
    """train.py's export: the float graph quantised by onnxruntime (int8, per output channel), then
    the same numbers stored as uint8."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    w = np.random.default_rng(3).normal(size=(64, 32)).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", 32])
    model = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "f", [x], [y],
                                                [numpy_helper.from_array(w, "w")]),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "fp32.onnx")
    quantize_dynamic(str(tmp_path / "fp32.onnx"), str(tmp_path / "signed.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True)
    unsigned_int8.quantise(tmp_path / "fp32.onnx", tmp_path / "reader.onnx")
    signed, unsigned = (_integer_weights(onnx.load(str(tmp_path / f))) for f in ("signed.onnx", "reader.onnx"))
    assert [t.data_type for t in signed] == [TensorProto.INT8] * 2
    assert [t.data_type for t in unsigned] == [TensorProto.UINT8] * 2
    (q, zp), (uq, uzp) = ([numpy_helper.to_array(t).astype(np.int32) for t in ts] for ts in (signed, unsigned))
    assert np.array_equal(uq - uzp, q - zp) and np.abs(q).max() == 127
