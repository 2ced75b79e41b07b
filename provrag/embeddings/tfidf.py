"""The default offline embedder: TF-IDF + LSA, saved inside the index.

The default is TF-IDF + LSA (scikit-learn): no weights to ship, deterministic, and strong
on the lexical questions users ask of manuals. The fitted model is stored as plain arrays
(vocabulary JSON, idf and SVD components as .npy) rather than a pickle: an auditor opening
somebody else's index must not execute code from it. `minilm` (provrag/embeddings/minilm.py) runs the
shipped all-MiniLM-L6-v2 weights with numpy; `openai` uses /v1/embeddings.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from provrag.embeddings.base import Embedder, normalise
from provrag.text.words import ENGLISH_STOP_WORDS

_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_TOKEN_RE = re.compile(_TOKEN_PATTERN)

# at most this many texts per embed() call go through the numpy-only transform (queries,
# claims); larger batches (indexing) use scikit-learn's vectoriser, which is already imported then
_NUMPY_MAX_TEXTS = 32


_LSA_SAMPLE = 2000
_FIT_BATCH = 2048  # texts analysed at a time while counting document frequencies (memory, not results)


def lsa_sample(n: int) -> np.ndarray:
    """Rows of the LSA sample: at most 2,000 evenly spaced units (all of them up to 2,000)."""
    if not n:
        return np.zeros(0, int)
    return np.unique(np.linspace(0, n - 1, num=min(n, _LSA_SAMPLE)).round().astype(int))


def _lsa_components(x, k: int) -> np.ndarray:
    """Top-k right singular vectors of the sample's TF-IDF matrix `x` (the LSA projection).

    Computed exactly from the Gram matrix of the sample (lsa_sample): eigh of an n×n matrix
    is far cheaper than a randomized SVD over the (large) vocabulary here, and fitting on a
    bounded sample keeps the cost flat as the corpus grows (transforming all units stays linear).
    """
    k = min(k, x.shape[0] - 1, x.shape[1] - 1)
    if k < 2:  # too little text for LSA: the identity keeps raw TF-IDF
        return np.eye(x.shape[1], dtype=np.float32)
    gram = (x @ x.T).toarray().astype(np.float64)
    vals, vecs = np.linalg.eigh(gram)
    order = np.argsort(vals)[::-1][:k]
    vals, vecs = vals[order], vecs[:, order]
    keep = vals > 1e-9
    vals, vecs = vals[keep], vecs[:, keep]
    comps = np.asarray(x.T @ vecs).T  # k × vocabulary, float64: scaled in place (one copy, not three)
    comps /= np.sqrt(vals)[:, None]
    # fix each component's sign (largest loading positive) so runs are bit-for-bit repeatable
    signs = np.sign([row[np.abs(row).argmax()] for row in comps])  # row by row: no copy of the whole basis
    signs[signs == 0] = 1
    comps *= signs[:, None]
    return np.ascontiguousarray(comps, dtype=np.float32)


def _kept_terms(df: np.ndarray, n_units: int, max_vocabulary: int) -> np.ndarray:
    """Columns kept, ascending (so the vocabulary stays in alphabetical order): terms in ≥ 2
    units when the corpus has ≥ 50 (hapaxes only add noise to LSA), then at most
    `max_vocabulary` of them, the most frequent by document frequency (ties: alphabetical)."""
    keep = np.arange(df.size)
    if n_units >= 50 and np.any(df >= 2):
        keep = np.flatnonzero(df >= 2)
    if max_vocabulary and keep.size > max_vocabulary:
        top = np.lexsort((keep, -df[keep]))[:max_vocabulary]
        keep = np.sort(keep[top])
    return keep


class TfidfEmbedder(Embedder):
    """Sublinear TF-IDF over unigrams and bigrams, reduced by truncated SVD (LSA).

    The vocabulary is the terms of the LSA sample (lsa_sample) that pass `_kept_terms` over
    the whole corpus: a term no sample unit contains gets an all-zero column in the LSA
    basis, so it cannot move any vector (the final normalisation cancels its share of a
    row's TF-IDF norm) and only made the saved embedder big (1.3 GB for a 50 MB text file).
    Up to 2,000 units the sample is the corpus and nothing changes. Fitting streams over the
    texts in batches: memory is the sample's vocabulary and one batch, whatever the corpus.
    """

    name = "tfidf"
    corpus_fitted = True

    def __init__(self, dimensions: int = 256, max_vocabulary: int = 0):
        self.dimensions = int(dimensions)
        self.max_vocabulary = int(max_vocabulary)  # 0 = no cap
        self.vocab: dict[str, int] | None = None
        self.idf: np.ndarray | None = None
        self.components: np.ndarray | None = None
        self.dim = 0
        self._vectoriser = None  # the vocabulary's CountVectorizer, built once (it validates the vocabulary)

    def _counter(self, vocabulary=None):
        from sklearn.feature_extraction.text import CountVectorizer

        return CountVectorizer(token_pattern=_TOKEN_PATTERN, lowercase=True, stop_words="english",
                               ngram_range=(1, 2), vocabulary=vocabulary, dtype=np.float32)

    def _weigh(self, counts):
        from sklearn.preprocessing import normalize

        counts = counts.tocsr(copy=True)
        np.log(counts.data, out=counts.data)
        counts.data += 1.0  # sublinear tf: 1 + log(tf)
        counts = counts.multiply(self.idf).tocsr()
        return normalize(counts)

    def fit(self, texts: Sequence[str]) -> "TfidfEmbedder":
        """Vocabulary, idf and LSA basis of `texts` (a list, or any sequence that slices, such
        as a polars Series: it is read a batch at a time)."""
        n = len(texts)
        rows = lsa_sample(n)
        self._vectoriser = None
        counter = self._counter()
        try:  # the sample's vocabulary (alphabetical, as scikit-learn sorts it) and counts
            sample_counts = counter.fit_transform([texts[int(i)] for i in rows])
        except ValueError:  # empty vocabulary (only stop words or no text)
            self.vocab, self.idf, self.components, self.dim = {}, np.zeros(0, np.float32), np.zeros((1, 0), np.float32), 1
            return self
        terms = counter.get_feature_names_out()
        # document frequencies: a CSR row holds each of its terms once; the units outside the
        # sample are read a batch at a time, and only the sample's terms are counted
        df = np.bincount(sample_counts.indices, minlength=len(terms)).astype(np.int64)
        in_sample = np.zeros(n, bool)
        in_sample[rows] = True
        for start in range(0, n if rows.size < n else 0, _FIT_BATCH):
            batch = [t for t, s in zip(texts[start:start + _FIT_BATCH], in_sample[start:start + _FIT_BATCH]) if not s]
            if batch:
                df += np.bincount(counter.transform(batch).indices, minlength=len(terms))
        keep = _kept_terms(df, n, self.max_vocabulary)
        self.vocab = {str(terms[i]): j for j, i in enumerate(keep)}
        self.idf = (np.log((1 + n) / (1 + df[keep])) + 1.0).astype(np.float32)
        self.components = _lsa_components(self._weigh(sample_counts[:, keep]), self.dimensions)
        self.dim = int(self.components.shape[0])
        return self

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.vocab is None:
            raise RuntimeError("TfidfEmbedder.embed before fit/load")
        if not self.vocab:
            return np.zeros((len(texts), self.dim), np.float32)
        if len(texts) <= _NUMPY_MAX_TEXTS:
            return self.embed_numpy(texts)
        if self._vectoriser is None:
            self._vectoriser = self._counter(self.vocab)
        counts = self._vectoriser.transform(texts)
        return normalise(self._weigh(counts) @ self.components.T)

    def _analyse(self, text: str) -> list[str]:
        """CountVectorizer's analyzer, re-done in plain Python: lowercase, token_pattern words,
        English stop words dropped, then unigrams and bigrams of the remaining words."""
        words = [w for w in _TOKEN_RE.findall(text.lower()) if w not in ENGLISH_STOP_WORDS]
        return words + [f"{a} {b}" for a, b in zip(words, words[1:])]

    def embed_numpy(self, texts: list[str]) -> np.ndarray:
        """The fit-time transform (counts → 1 + log tf → · idf → L2 → LSA → L2) with numpy
        only: no scikit-learn import, so a query is embedded in milliseconds at start-up.
        Equal to the scikit-learn path to float32 rounding (tests/test_embed.py)."""
        if self.vocab is None:
            raise RuntimeError("TfidfEmbedder.embed before fit/load")
        out = np.zeros((len(texts), self.dim), np.float32)
        if not self.vocab:
            return out
        for row, text in enumerate(texts):
            counts = Counter(t for t in self._analyse(text or "") if t in self.vocab)
            if not counts:
                continue
            cols = np.fromiter((self.vocab[t] for t in counts), dtype=np.int64, count=len(counts))
            tf = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
            w = (np.log(tf) + np.float32(1.0)) * self.idf[cols]
            norm = np.sqrt(np.dot(w, w))
            if norm > 0:
                w = w / norm
            out[row] = self.components[:, cols] @ w
        return normalise(out)

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "embedder.json").write_text(json.dumps({"name": self.name, "dimensions": self.dimensions, "dim": self.dim}))
        (folder / "vocabulary.json").write_text(json.dumps(self.vocab, ensure_ascii=False))
        np.save(folder / "idf.npy", self.idf)
        np.save(folder / "components.npy", self.components)

    @classmethod
    def load(cls, folder: Path) -> "TfidfEmbedder":
        folder = Path(folder)
        meta = json.loads((folder / "embedder.json").read_text())
        e = cls(meta["dimensions"])
        e.vocab = json.loads((folder / "vocabulary.json").read_text())
        e.idf = np.load(folder / "idf.npy", allow_pickle=False)
        e.components = np.load(folder / "components.npy", allow_pickle=False)
        e.dim = int(meta["dim"])
        return e
