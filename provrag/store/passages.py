"""MiniLM's pooled vectors of the index's paragraphs, written at index time (INDEX/retrieval/).

The offline answerer reads each candidate sentence's paragraph with all-MiniLM-L6-v2 at every
question (answer/selection.minilm_meaning: the cosine of the question to the paragraph). A
paragraph's vector does not depend on the question, and its text is known when the index is
written (index/passages.py cuts every unit's paragraphs as the answerer does), so `provrag index`
embeds them once and a question reads them here instead of running the model on them.

Files: `passages_keys.npy` (the 16-byte BLAKE2b digest of each paragraph's text, sorted: a
question's paragraphs are found by binary search), `passages_vectors.npy` (float32, one row per
key: 1,536 bytes a paragraph — float16 would halve it but moves a cosine in the 4th decimal) and
`passages.json` (the weights' sha256: vectors of other weights are never used). Memory-mapped,
opened once per process and index version. An index without them (written before, or with
[embeddings] passage_vectors = false) is answered as before: the model reads the paragraphs.
"""
from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import numpy as np

FOLDER = "retrieval"
KEYS, VECTORS, META = "passages_keys.npy", "passages_vectors.npy", "passages.json"
KEY_BYTES = 16


def digest(text: str) -> bytes:
    """The key of a text: its BLAKE2b digest (16 bytes; a collision among a million texts has
    odds of ~1e-27)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


def write_passages(index: Path, keys: list[bytes], vectors: np.ndarray, weights_sha256: str) -> int:
    """The vectors (one row per key, keys distinct) into INDEX/retrieval/, sorted by key; returns the count."""
    folder = Path(index) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    karr = np.array(keys, dtype=f"S{KEY_BYTES}")
    order = np.argsort(karr, kind="stable")
    np.save(folder / KEYS, karr[order])
    np.save(folder / VECTORS, np.ascontiguousarray(np.asarray(vectors, np.float32)[order]))
    (folder / META).write_text(json.dumps({"model": "all-MiniLM-L6-v2", "weights_sha256": weights_sha256,
                                           "count": int(len(karr)), "dim": int(vectors.shape[1]) if len(karr) else 0}))
    return int(len(karr))


class StoredPassages:
    """The mapped vectors of one index's paragraphs, looked up by text."""

    def __init__(self, folder: Path):
        meta = json.loads((folder / META).read_text())
        self.weights_sha256 = meta.get("weights_sha256")
        self.keys = np.load(folder / KEYS, mmap_mode="r")
        self.vectors = np.load(folder / VECTORS, mmap_mode="r")
        if len(self.keys) != len(self.vectors):
            raise ValueError(f"{folder}: {len(self.keys)} keys but {len(self.vectors)} vectors")

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, texts: list[str], weights_sha256: str) -> dict[str, np.ndarray]:
        """text → its stored vector (a copy), for the texts the index holds; {} when the vectors
        were made by other weights than the embedder's."""
        if not texts or not len(self.keys) or weights_sha256 != self.weights_sha256:
            return {}
        wanted = np.array([digest(t) for t in texts], dtype=f"S{KEY_BYTES}")
        at = np.searchsorted(self.keys, wanted)
        at_ok = np.minimum(at, len(self.keys) - 1)
        hit = self.keys[at_ok] == wanted
        return {t: np.array(self.vectors[at_ok[i]], np.float32) for i, t in enumerate(texts) if hit[i]}


# folder → (stat of its keys file, what was opened): the current version of each index's files only
# (a rebuilt index's old mapping is let go when a question first meets the new one)
_OPEN: dict[str, tuple[tuple, StoredPassages | None]] = {}
_LOCK = threading.Lock()


def stored_passages(index) -> StoredPassages | None:
    """The index's stored paragraph vectors (opened once per process and version of the files),
    or None when it has none or they cannot be read (the model reads the paragraphs then)."""
    if index is None:
        return None
    folder = Path(index) / FOLDER
    try:
        stamp = (folder / KEYS).stat()
    except OSError:
        return None
    where, version = str(folder.resolve()), (stamp.st_mtime_ns, stamp.st_ino, stamp.st_size)
    with _LOCK:
        have = _OPEN.get(where)
        if have is None or have[0] != version:
            try:
                have = (version, StoredPassages(folder))
            except (OSError, ValueError):
                have = (version, None)
            _OPEN[where] = have
        return have[1]
