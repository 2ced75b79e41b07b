"""Stores an int8 ONNX graph's weights as uint8 (each value + 128, zero point + 128), so every CPU
computes its integer matmuls exactly.

    python train/unsigned_int8.py provrag/learned/weights     # rewrites reader.onnx and its manifest

Why: onnxruntime's dynamic quantisation multiplies uint8 activations by the weights. With int8
weights (u8s8) on an x86 CPU without VNNI (AVX2 only, as AMD EPYC before Zen 4), its kernel adds
pairs of products in 16 bits (vpmaddubsw), which saturate: the same question got another reading
there than on a CPU with VNNI, which adds in 32 bits. Measured on an AVX2 machine, the reader
read "R was initially written by … at the University of Toronto" against the R FAQ's "…
University of Auckland" as SUPPORTED 0.43 / CONTRADICTED 0.49 with int8 weights and 0.62 / 0.32
with these (the exact products, which a CPU with VNNI computes too); the President's opening passage on foreign relations
scored 0.48 for relevance against 0.55, and the question was declined. With uint8 weights (u8u8)
onnxruntime uses kernels that add in 32 bits on every CPU. The dequantised weights are the same
numbers ((q + 128) - (zp + 128) = q - zp), so a VNNI CPU's results do not change. onnxruntime's
own documentation names u8u8 as the format without saturation. Cost: the reader's passes took 1.19x
as long on an AVX2 CPU (bench/results/exact-int8-2026-12-01.md; none crossed 0.5 there, but the
logits moved by up to 0.75, enough for the two decisions above).

Why by hand: quantize_dynamic(weight_type=QUInt8) makes asymmetric uint8 weights, which are other
numbers than the int8 weights the reader was measured with; this rewrite keeps them.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

QUANTISATION = ("onnxruntime dynamic int8, per output channel (weights), stored as uint8 with zero point "
                "128 (train/unsigned_int8.py: exact integer matmuls on every CPU)")


def unsigned_weights(model) -> int:
    """Rewrites, in place, the int8 weights and weight zero points of every MatMulInteger node of an
    onnx.ModelProto as uint8 (+128); returns how many tensors it rewrote. The activations (input A)
    are uint8 already (DynamicQuantizeLinear)."""
    import numpy as np
    from onnx import numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    done: set[str] = set()
    for node in model.graph.node:
        if node.op_type != "MatMulInteger" or len(node.input) < 4:
            continue
        for name in (node.input[1], node.input[3]):
            if name in done or name not in inits:
                continue
            values = numpy_helper.to_array(inits[name])
            if values.dtype != np.int8:
                continue
            inits[name].CopyFrom(numpy_helper.from_array((values.astype(np.int16) + 128).astype(np.uint8), name))
            done.add(name)
    return len(done)


def quantise(fp32: Path, out: Path) -> None:
    """The float graph's weights quantised to int8 (onnxruntime's quantize_dynamic, per output channel:
    on the first reader's held-out pairs it kept fp32's answer AUC, 0.7665 vs 0.7666, where one scale
    per tensor lost 0.011, at the same size, 23 MB), then stored as uint8 (rewrite_file)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)
    rewrite_file(out)


def rewrite_file(weights: Path) -> int:
    """The ONNX file rewritten in place by unsigned_weights; returns how many tensors it rewrote."""
    import onnx

    model = onnx.load(str(weights))
    n = unsigned_weights(model)
    weights.write_bytes(model.SerializeToString(deterministic=True))
    return n


def rewrite_folder(folder: Path) -> int:
    """reader.onnx in `folder` rewritten by unsigned_weights, and manifest.json's sha256, bytes and
    quantisation updated to match."""
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    weights = folder / manifest["weights"]
    n = rewrite_file(weights)
    data = weights.read_bytes()
    manifest.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), quantisation=QUANTISATION)
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return n


def main() -> int:
    if len(sys.argv) != 2 or not (Path(sys.argv[1]) / "manifest.json").is_file():
        print("usage: python train/unsigned_int8.py WEIGHTS_FOLDER   (the folder of reader.onnx and manifest.json)",
              file=sys.stderr)
        return 2
    n = rewrite_folder(Path(sys.argv[1]))
    print(f"rewrote {n} tensors as uint8" if n else "nothing to rewrite: already uint8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
