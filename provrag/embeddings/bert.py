"""all-MiniLM-L6-v2's encoder: its weights (read from the safetensors file, the vocabulary
table's rows read as asked) and its forward pass, on onnxruntime (minilm_onnx.py) or in numpy (the reference).

Apart from minilm.py, which turns texts into vectors with it: what a pass holds in memory is
decided here. The layers' float matrices are read on first use; a question's int8 passes
quantise them from the file a layer at a time and never hold them (Bert's docstring).
"""
from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

import numpy as np

from provrag.embeddings.tensors import TableRows, TensorFile
from provrag.usercache import stat_key

# a loaded model's float layers and encoders are made once (reentrant: the float encoder reads the layers)
_WEIGHTS = threading.RLock()


_FFN_ROWS = 256  # rows per feed-forward block
# erfc coefficients, Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution)
_AS_P = np.float32(0.3275911)
_AS_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU as BERT uses, not the tanh approximation.

    By hand because scipy.special.erf is ~3x slower here and was 40 % of the forward pass;
    numpy has no erf. x·Φ(x) with Φ from erfc(|x|/√2) = poly(t)·exp(-x²/2), t = 1/(1+p|x|/√2).
    """
    z = np.abs(x)
    z *= _INV_SQRT2
    t = z * _AS_P
    t += 1.0
    np.reciprocal(t, out=t)
    a1, a2, a3, a4, a5 = _AS_A
    poly = t * a5
    for a in (a4, a3, a2, a1):
        poly += a
        poly *= t
    z *= z
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z            # erfc(|x|/√2)
    poly *= x
    poly *= 0.5          # x·erfc/2: GELU for x < 0; x minus it for x ≥ 0
    return np.where(x >= 0, x - poly, poly)


class Bert:
    """BERT encoder forward pass (inference only: no dropout) over safetensors weights.

    The layers' float matrices (42 MB) are read on first use, not at load: a question's passes
    run the int8 graph ([search] meaning_int8), whose matrices are quantised from the file one
    layer at a time (layer_tensors), so a process that never runs a float pass never holds them
    (issue 30: a cold ask's peak RSS 327 -> 299 MB on the sample index,
    bench/results/question_speed-lazy-float-2026-11-30.md). An index's embeddings, the numpy
    reference pass and the float graph read them once and keep them (layers, onnx)."""

    def __init__(self, folder: Path):
        conf = json.loads((folder / "config.json").read_text())
        self.heads = int(conf["num_attention_heads"])
        self.hidden = int(conf["hidden_size"])
        self.eps = float(conf.get("layer_norm_eps", 1e-12))
        self.n_layers = int(conf["num_hidden_layers"])
        self.path = folder / "model.safetensors"
        self.file_id = stat_key(self.path)   # the file whose digest minilm.py checked: the layers read later must be its
        p = "embeddings."
        # The vocabulary table is half the weights (30,522 × 384 floats, 47 MB) and a pass reads
        # only its texts' word pieces' rows: those are read (tensors.TableRows), not the table. Every
        # other tensor is read one at a time (not the whole file at once), so loading peaks at the
        # weights kept, not twice that.
        self.word = TableRows(self.path, p + "word_embeddings.weight")
        weights = TensorFile(self.path)
        try:
            self.pos = weights[p + "position_embeddings.weight"]
            self.type0 = weights[p + "token_type_embeddings.weight"][0]  # single-sentence input: type id 0
            self.ln0 = (weights[p + "LayerNorm.weight"], weights[p + "LayerNorm.bias"])
        finally:
            weights.close()
        self._layers: list = []     # [the float layers], read on first use (layers)
        self._onnx: list = []       # [the float encoder or None], made on first use (onnx)
        self._int8: list = []       # [the int8 encoder or None], made on first use (int8_encoder)

    @property
    def layers(self) -> list[tuple]:
        """Each layer's tensors in float, read from the file on first use and kept."""
        if not self._layers:        # read: no lock on the hot path
            with _WEIGHTS:
                if not self._layers:
                    self._layers.append(list(self._read_layers()))
        return self._layers[0]

    def layer_tensors(self):
        """The layers one at a time: those kept, else read from the file and not kept (what the
        int8 encoder quantises)."""
        return iter(self._layers[0]) if self._layers else self._read_layers()

    def _read_layers(self):
        if stat_key(self.path) != self.file_id:
            raise RuntimeError(f"{self.path} changed since this process checked its digest: start it again")
        w = TensorFile(self.path)
        try:
            for i in range(self.n_layers):
                yield self._layer(w, i)
        finally:
            w.close()

    @property
    def onnx(self):
        """The float encoder (minilm_onnx.GRAPH) on every core, made on first use; None without
        onnxruntime or the graph (the numpy pass then)."""
        if not self._onnx:
            with _WEIGHTS:
                if not self._onnx:
                    from provrag.embeddings.minilm_onnx import encoder

                    self._onnx.append(encoder(self, threads=cpu_count()))   # a CLI call's passes: every core
        return self._onnx[0]

    def int8_encoder(self):
        """The int8 encoder (minilm_onnx.GRAPH_INT8), made on first use; None without it (float then)."""
        if self._int8:              # made: no lock on the hot path
            return self._int8[0]
        with _WEIGHTS:
            if not self._int8:
                from provrag.embeddings.minilm_onnx import encoder

                # one session, one thread: its passes read one text each, side by side, one per core (minilm._forward)
                self._int8.append(encoder(self, threads=1, int8=True))
            return self._int8[0]

    def runs_on_onnx(self, int8: bool = False) -> bool:
        """Whether a pass (int8 or not) runs on onnxruntime rather than the numpy reference."""
        return (int8 and self.int8_encoder() is not None) or self.onnx is not None

    @staticmethod
    def _layer(w: TensorFile, i: int) -> tuple:
        """Layer i's tensors, as matmuls want them."""
        q = f"encoder.layer.{i}."
        a = q + "attention."
        # torch Linear stores (out, in); transpose once so every matmul is x @ W
        qkv_w = np.concatenate([w[a + f"self.{n}.weight"] for n in ("query", "key", "value")]).T
        qkv_b = np.concatenate([w[a + f"self.{n}.bias"] for n in ("query", "key", "value")])
        return (
            np.ascontiguousarray(qkv_w), qkv_b,
            np.ascontiguousarray(w[a + "output.dense.weight"].T), w[a + "output.dense.bias"],
            (w[a + "output.LayerNorm.weight"], w[a + "output.LayerNorm.bias"]),
            np.ascontiguousarray(w[q + "intermediate.dense.weight"].T), w[q + "intermediate.dense.bias"],
            np.ascontiguousarray(w[q + "output.dense.weight"].T), w[q + "output.dense.bias"],
            (w[q + "output.LayerNorm.weight"], w[q + "output.LayerNorm.bias"]),
        )

    def _ln(self, x: np.ndarray, gb) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        x = x - mu
        var = np.mean(x * x, -1, keepdims=True)
        x *= 1.0 / np.sqrt(var + self.eps)
        x *= gb[0]
        x += gb[1]
        return x

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray, threads: int = 1, int8: bool = False) -> np.ndarray:
        """Last hidden states (B, L, H) of a padded (B, L) batch: on onnxruntime with `threads`
        threads when it runs the shipped graph (minilm_onnx.py; `int8`: the quantised one), else by numpy_pass."""
        x = self.word[ids] + self.pos[:ids.shape[1]] + self.type0            # (B, L, H)
        runner = (self.int8_encoder() if int8 else None) or self.onnx
        if runner is not None:
            return runner.hidden_states(x, mask, threads)
        return self.numpy_pass(x, mask)

    def numpy_pass(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The reference forward pass in numpy, from the summed embeddings x (B, L, H)."""
        b, n = mask.shape
        h, d = self.heads, self.hidden // self.heads
        x = self._ln(x.reshape(b * n, self.hidden), self.ln0)
        # additive attention mask over keys: padding gets float32 min, as transformers does
        bias = ((1.0 - mask) * np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(d))
        for qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2 in self.layers:
            qkv = (x @ qkv_w + qkv_b).reshape(b, n, 3, h, d).transpose(2, 0, 3, 1, 4)
            scores = (qkv[0] * scale) @ qkv[1].transpose(0, 1, 3, 2) + bias   # (B, h, L, L)
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(b * n, self.hidden)
            x = self._ln(x + (ctx @ o_w + o_b), ln1)
            ffn = np.empty_like(x)
            for r in range(0, x.shape[0], _FFN_ROWS):  # row blocks: the 1536-wide activations stay in cache
                ffn[r:r + _FFN_ROWS] = gelu(x[r:r + _FFN_ROWS] @ i_w + i_b) @ f_w
            ffn += f_b
            x = self._ln(x + ffn, ln2)
        return x.reshape(b, n, self.hidden)


def cpu_count() -> int:
    """The cores this process may run on (its affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
