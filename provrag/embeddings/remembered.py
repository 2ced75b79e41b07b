"""MiniLM's readings of texts seen before, kept between questions (one store per process).

The offline answerer reads each candidate sentence and its paragraph with all-MiniLM-L6-v2 for
every question (answer/selection.minilm_meaning): most of a warm ask's time on two cores. What
MiniLM gives for a text does not depend on the question (each text is encoded on its own: the
question only meets the vectors in the cosine and MaxSim afterwards), and a server's questions
meet the same paragraphs again and again (the same manual's section answers many questions). So
the vectors are kept, by text, in a store bounded by bytes (least recently used out first), and
only texts not seen before go through the model. What is served from the store is the vector the
model gave that text earlier: equal to a fresh pass, bit for bit for the int8 pass (each text is
read alone: embeddings/minilm.py), up to float rounding for the float pass's batches (~1e-7, the
same spread a pass shows between one and two BLAS threads).

Paragraphs are known before any question: `provrag index` writes their pooled vectors beside the
index (index/passages.py, store/passages.py). While an ask reads an index (`reading_index`), a
pooled text the store lacks is looked up there before the model runs.

Hand-written rather than functools.lru_cache: the bound is in bytes (a paragraph's token vectors
weigh 100× a sentence's pooled vector) and a batch of misses goes through one model pass.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

# the stored paragraph vectors (store/passages.StoredPassages) of the index this ask reads
INDEX_PASSAGES: ContextVar = ContextVar("provrag_index_passages", default=None)
MAX_BYTES = 64 << 20     # vectors kept: ~1,500 sentences with their token vectors, or ~40,000 pooled vectors


class Remembered:
    """Pooled vectors and (word pieces, token vectors) of texts, by text; thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        self.kept: OrderedDict[tuple[str, bool], tuple] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = self.stored = 0

    def embed(self, embedder, texts: list[str]) -> np.ndarray:
        """embedder.embed(texts), each text through the model only once."""
        return self._read(embedder, texts, False)[0]

    def embed_tokens(self, embedder, texts: list[str]) -> tuple[np.ndarray, list]:
        """embedder.embed_tokens(texts), each text through the model only once."""
        return self._read(embedder, texts, True)

    def _read(self, embedder, texts: list[str], with_tokens: bool):
        key_of = [(embedder.vectors_key, t, with_tokens) for t in texts]
        found: dict = {}
        with self.lock:
            for k in key_of:
                # a pooled vector is also in a pass that kept the text's token vectors (a
                # one-sentence paragraph is a candidate sentence too: ~a third of the paragraphs
                # a question reads); the pooled vector is the same computation in both passes
                for have in (k, (k[0], k[1], True)):
                    if have in self.kept:
                        self.kept.move_to_end(have)
                        found[k] = self.kept[have] if have == k else (self.kept[have][0], None)
                        break
            self.hits += sum(1 for k in key_of if k in found)
        todo = list(dict.fromkeys(k for k in key_of if k not in found))
        stored = INDEX_PASSAGES.get() if todo and not with_tokens else None
        # the index's own vectors of its paragraphs (written at index time by the float pass: an
        # int8 reading takes them too, the closer of the two to the model's)
        if stored is not None:
            have = stored.find([k[1] for k in todo], embedder.weights_sha256)
            for k in todo:
                if k[1] in have:
                    found[k] = (have[k[1]], None)
            todo = [k for k in todo if k not in found]
            with self.lock:
                self.stored += len(have)
        if todo:
            fresh_texts = [k[1] for k in todo]
            if with_tokens:
                vecs, toks = embedder.embed_tokens(fresh_texts)
            else:
                vecs, toks = embedder.embed(fresh_texts), [None] * len(fresh_texts)
            with self.lock:
                self.misses += len(todo)
                for k, v, tk in zip(todo, vecs, toks):
                    entry = (np.array(v), tk)
                    found[k] = entry
                    self._keep(k, entry)
        vecs = np.stack([found[k][0] for k in key_of]) if key_of else np.zeros((0, embedder.dim), np.float32)
        return vecs, [found[k][1] for k in key_of]

    def _keep(self, key, entry) -> None:
        if key in self.kept:
            return
        self.kept[key] = entry
        self.bytes += entry_bytes(entry)
        while self.bytes > self.max_bytes and self.kept:
            _, old = self.kept.popitem(last=False)
            self.bytes -= entry_bytes(old)


def entry_bytes(entry) -> int:
    vec, toks = entry
    return vec.nbytes + (toks[1].nbytes + 60 * len(toks[0]) if toks is not None else 0) + 200


@contextmanager
def reading_index(index):
    """Within it, pooled reads take the vectors `index` stores (store/passages.py), if any."""
    from provrag.store.passages import stored_passages

    token = INDEX_PASSAGES.set(stored_passages(index))
    try:
        yield
    finally:
        INDEX_PASSAGES.reset(token)


STORE = Remembered()     # the process's: MiniLM is the same model for every index it serves
