"""all-MiniLM-L6-v2's encoder run by onnxruntime: the graph provrag ships (data/minilm-encoder.onnx,
written by train/encoder_graph.py, no weights in it) fed the official weights minilm.py loads.

Why: the numpy pass (bert.Bert.numpy_pass) is the reference, checked against published
sentence-transformers outputs; onnxruntime computes the same thing (to 1e-5 here,
tests/embeddings/test_minilm_onnx.py) 1.3-2x faster on two cores (fused kernels, no Python-level
temporaries), and MiniLM's passes are most of a question's time (issue 30) and of an index's
embedding stage. onnxruntime is already a dependency (the learned reader). The weights are graph
inputs, not initialisers: onnxruntime reads the arrays minilm.py holds in place (no second copy of
the 45 MB), and the graph stays a few kB in the wheel.

int8 (data/minilm-encoder-int8.onnx, `encoder(..., int8=True)`): each weight matrix is quantised
when the encoder is made (quantised_feeds: per output column, symmetric, ~10 ms; a layer at a time
read from the file, so a process whose passes are all int8 never holds the float layers, ~42 MB
of a cold ask's peak RSS) and the activations at each pass, so the matmuls run on the CPU's
integer units (the weights stored as uint8, so that a CPU without VNNI computes the same:
train/unsigned_int8.py): ~2x faster than the float graph on two cores, its vectors within
~0.01 cosine of the float pass's (bench/minilm_runtime.py; tests/embeddings/test_minilm_int8.py
holds it to what onnxruntime's own quantize_dynamic makes of the float graph). The quantised
weights are the graph's initializers, handed over when a session is made, so onnxruntime packs
them once: as inputs they were packed again at every pass, ~1.2 ms of each (a 32-piece sentence's
pass 4.3 → 2.8 ms; a question's 32 sentences 96 → 67 ms, the same vectors bit for bit:
bench/results/minilm-int8-constants-2026-11-30.md). Not the
reference: used where a question's texts are only compared with each other ([search]
meaning_int8), never for vectors an index stores.

If the session cannot be made (onnxruntime or the graph file missing, or a graph whose inputs are
not these weights) `encoder()` returns None and minilm.py keeps the numpy pass (for int8: the
float pass).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

GRAPH = Path(__file__).resolve().parent / "data" / "minilm-encoder.onnx"
GRAPH_INT8 = Path(__file__).resolve().parent / "data" / "minilm-encoder-int8.onnx"
MAX_THREADS = 4                          # intra-op threads of a pass at most (as the reader's session)
ENV_RUNTIME = "PROVRAG_MINILM_RUNTIME"   # "numpy": the reference pass (the bench's base, a debugging aid)


def weight_feeds(bert) -> dict[str, np.ndarray]:
    """The encoder's weights by their graph input names, as bert.Bert keeps them (x @ W layout)."""
    return dict(_named(bert.ln0, bert.layers))


LAYER_NAMES = ("qkv_w", "qkv_b", "o_w", "o_b", "ln1_g", "ln1_b", "i_w", "i_b", "f_w", "f_b", "ln2_g", "ln2_b")


def _named(ln0, layers):
    """(graph input name, float32 array) of the embeddings' LayerNorm, then of each layer in turn.
    A layer read from the file (quantised_feeds) is let go before the next is read: this
    generator keeps no reference to what it has given (two layers at once were ~7 MB more of a
    cold ask's peak)."""
    yield from (("ln0_g", _f32(ln0[0])), ("ln0_b", _f32(ln0[1])))
    for i, layer in enumerate(layers):
        qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2 = layer
        arrays = [qkv_w, qkv_b, o_w, o_b, ln1[0], ln1[1], i_w, i_b, f_w, f_b, ln2[0], ln2[1]]
        del layer, qkv_w, qkv_b, o_w, o_b, ln1, i_w, i_b, f_w, f_b, ln2
        for name in LAYER_NAMES:
            yield f"l{i}_{name}", _f32(arrays.pop(0))


def _f32(v) -> np.ndarray:
    return np.ascontiguousarray(v, dtype=np.float32)


def quantised_feeds(bert) -> dict[str, np.ndarray]:
    """weight_feeds with each matrix W as the int8 graph takes it: round(W / W_s) in [-127, 127],
    W_s = max |W| of each output column / 127, zero point 0 (symmetric), the values onnxruntime's
    quantize_dynamic(per_channel=True) computes for the same matrix, stored + 128 as uint8 (W_q,
    W_zp = 128) so that every CPU multiplies them exactly (train/unsigned_int8.py says why). The layers
    come one at a time (bert.Bert.layer_tensors): read from the file when the float ones are
    not held, so only the quantised matrices stay."""
    out = {}
    for name, w in _named(bert.ln0, bert.layer_tensors()):
        if not name.endswith("_w"):
            out[name] = w
            continue
        scale = np.maximum(w.max(0), -w.min(0)) / np.float32(127.0)
        scale[scale == 0] = 1.0
        q = w / scale                     # divided, as onnxruntime does: the same roundings
        del w                             # a matrix read from the file: let go before the next is read
        np.rint(q, out=q)
        np.clip(q, -127, 127, out=q)
        q += 128                          # stored as uint8, zero point 128: the same numbers (train/unsigned_int8.py)
        out[name + "_q"] = q.astype(np.uint8)
        out[name + "_s"] = scale
        out[name + "_zp"] = np.full(q.shape[1], 128, np.uint8)
        del q
    return out


class Encoder:
    """hidden_states(embedded, mask, threads) on onnxruntime: one session per thread count asked
    for (a session holds no weights, so another costs only its threads), each without a memory
    arena, its intra-op threads not spinning as the reader's do (learned/reader.session_options
    says why). minilm._forward runs its batches one after another, each pass on the cores the
    question may use (provrag/cores.py: all of them for a CLI call, its share in a server).
    Measured on two cores against a batch per thread with one intra-op thread each: alike on
    sentences, ~1.5x faster on paragraphs, whose few long batches left a thread idle
    (bench/results/minilm-onnx-2026-11-27.md)."""

    def __init__(self, bert, threads: int, int8: bool = False):
        """`threads`: the count a pass of this process uses when it has every core (a CLI call's);
        its session is made now, and checked against the weights. `int8`: the graph whose matmuls
        are quantised (GRAPH_INT8), given quantised_feeds as its initializers when a session is
        made (the float graph takes its weights as inputs at every pass)."""
        self.graph = (GRAPH_INT8 if int8 else GRAPH).read_bytes()
        self.int8 = int8
        self.feeds = quantised_feeds(bert) if int8 else weight_feeds(bert)
        self.sessions: dict[int, object] = {}
        self._lock = threading.Lock()
        # int8: onnxruntime checks each initializer's name, shape and type against the graph's, and
        # fails on one the graph wants and is not given (it would look for its "external" file)
        wanted = {i.name for i in self.session(threads).get_inputs()} - {"embedded", "mask_bias"}
        expected = set() if int8 else set(self.feeds)
        if wanted != expected:   # int8: the feeds were handed over, the graph must want no weight as input
            raise ValueError(f"{(GRAPH_INT8 if int8 else GRAPH).name} wants inputs {sorted(wanted ^ expected)[:4]} this model has not")

    def session(self, threads: int):
        """The session whose passes use `threads` intra-op threads (1 to 4), made on first use.
        int8: the one session made with the encoder, whatever `threads` (its passes read one text
        each, on one thread: minilm._forward); the weights then live in onnxruntime alone."""
        threads = max(1, min(int(threads), MAX_THREADS))
        with self._lock:
            if self.int8 and self.sessions:
                return next(iter(self.sessions.values()))
            if threads not in self.sessions:
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = threads
                opts.inter_op_num_threads = 1
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                # no arena: a pass's activations (up to ~50 MB for a batch of paragraphs) go back to
                # the allocator when it ends rather than staying held; the same speed, ~50 MB lower peak
                opts.enable_cpu_mem_arena = False
                if self.int8:
                    # the weights as constants: onnxruntime copies them in and packs each matrix once
                    # for its integer matmuls (given as inputs, they were packed at every pass; the
                    # vectors are the same, bit for bit: tests/embeddings/test_minilm_int8.py)
                    names = list(self.feeds)
                    opts.add_external_initializers(names, [ort.OrtValue.ortvalue_from_numpy(self.feeds[n]) for n in names])
                self.sessions[threads] = ort.InferenceSession(self.graph, opts, providers=["CPUExecutionProvider"])
                if self.int8:   # copied in (onnxruntime's AddExternalInitializers): ours may go, ~11 MB
                    self.feeds = {}
            return self.sessions[threads]

    def hidden_states(self, embedded: np.ndarray, mask: np.ndarray, threads: int = 1) -> np.ndarray:
        """Last hidden states (B, L, H) from the summed embeddings (B, L, H) and the 0/1 mask (B, L)."""
        bias = ((1.0 - mask) * np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
        feeds = dict({} if self.int8 else self.feeds, embedded=np.ascontiguousarray(embedded, dtype=np.float32),
                     mask_bias=bias)
        return self.session(threads).run(["hidden"], feeds)[0]


def encoder(bert, threads: int, int8: bool = False) -> Encoder | None:
    """The onnxruntime encoder for these weights, its session for `threads` made, or None (the
    numpy pass is used): see the module doc."""
    graph = GRAPH_INT8 if int8 else GRAPH
    if os.environ.get(ENV_RUNTIME, "").strip().lower() == "numpy" or not graph.is_file():
        return None
    try:
        return Encoder(bert, threads, int8)
    except Exception:   # onnxruntime missing or refusing the graph: the reference pass still answers
        return None
