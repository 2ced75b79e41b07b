"""The unit embeddings as an inverted-file (IVF) index, memory-mapped: dense retrieval that
reads a few lists of vectors per question, not all of embeddings.parquet.

Written at index time beside the postings (INDEX/retrieval/, store/postings.py):

    vectors.npy        float32 n × d, every unit's vector L2-normalised, stored list after list
    vector_rows.npy    int32, the unit (row of unit_ids.npy) of each stored vector
    vector_at.npy      int32, the stored place of each unit row (-1: no vector)
    centroids.npy      float32 lists × d, each list's unit-length centroid
    list_offsets.npy   int64, list l holds vectors[offsets[l]:offsets[l + 1]]
    vectors.json       format, dimension, units, lists, probes

Up to EXACT_BELOW units there is one list: every question compares against every vector (one
matrix-vector product over the mapped file, exact). Above, k-means (scikit-learn, on a sample)
splits the vectors into ~√n lists and a question reads the PROBES lists whose centroids are
nearest to it: at a million units, ~3 % of the vectors. Every score returned is the exact
cosine (what DuckDB's array_cosine_similarity gives), only the candidates are approximate;
bench/million.py measures their recall against the exact scan.

Why IVF in numpy rather than an HNSW library (faiss, hnswlib, usearch): the lists are slices of
one .npy file that the OS pages in on demand, so opening costs nothing and two processes share
the pages; building is one k-means plus one assignment pass (an HNSW graph over a million
vectors is tens of minutes on two cores); and no new dependency enters the wheel.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from provrag.store.postings import UNIT_IDS, folder_of, lookup, mapped, write_unit_ids

META = "vectors.json"
FORMAT = 1
EXACT_BELOW = 50_000   # units: up to this many, one list (an exact scan of ≤ 50,000 × d floats, a few ms)
PROBES = 32            # lists read per question above it (recall measured in bench/million.py)
_SAMPLE_PER_LIST = 16  # k-means is fitted on this many vectors per list (a sample, not all n)
_BLOCK = 65_536        # vectors assigned to their list at once (a block × lists matrix)
_SEED = 0


def _normalised(vecs: np.ndarray) -> np.ndarray:
    out = np.ascontiguousarray(vecs, dtype=np.float32).copy()
    norms = np.linalg.norm(out, axis=1)
    ok = norms > 0
    out[ok] /= norms[ok, None]
    out[~ok] = 0.0  # no direction: cosine 0 with everything, as the SQL's NaN → 0
    return out


def lists_for(n: int) -> int:
    return 1 if n <= EXACT_BELOW else int(round(math.sqrt(n)))


def _centroids(vecs: np.ndarray, lists: int) -> np.ndarray:
    """Unit-length k-means centroids of a seeded sample of the (normalised) vectors."""
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(_SEED)
    sample = vecs[np.sort(rng.choice(len(vecs), size=min(len(vecs), lists * _SAMPLE_PER_LIST), replace=False))]
    km = KMeans(n_clusters=lists, n_init=1, max_iter=10, random_state=_SEED).fit(sample)
    return _normalised(km.cluster_centers_)


def _assign(vecs: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    out = np.empty(len(vecs), np.int32)
    for s in range(0, len(vecs), _BLOCK):
        out[s:s + _BLOCK] = np.argmax(vecs[s:s + _BLOCK] @ centroids.T, axis=1)
    return out


def write_vectors(folder: Path, ids: list[str], vecs: np.ndarray) -> dict:
    """Write INDEX/retrieval/'s vector files for units `ids` (one row of `vecs` each); returns the meta."""
    out = folder_of(folder)
    sorted_ids = write_unit_ids(folder, ids)
    n = len(ids)
    dim = int(vecs.shape[1]) if n else 0
    normed = _normalised(vecs) if n else np.zeros((0, dim), np.float32)
    rows = np.searchsorted(sorted_ids, np.asarray([str(i).encode() for i in ids], dtype=bytes)).astype(np.int32) \
        if n else np.zeros(0, np.int32)
    lists = lists_for(n)
    if lists > 1:
        centroids = _centroids(normed, lists)
        where = _assign(normed, centroids)
    else:
        centroids = normed.mean(axis=0, keepdims=True) if n else np.zeros((1, dim), np.float32)
        where = np.zeros(n, np.int32)
    order = np.lexsort((rows, where))  # list by list, units in id order inside a list
    offsets = np.zeros(lists + 1, np.int64)
    np.cumsum(np.bincount(where, minlength=lists), out=offsets[1:])
    at = np.full(len(sorted_ids), -1, np.int32)
    at[rows[order]] = np.arange(n, dtype=np.int32)
    np.save(out / "vectors.npy", normed[order])
    np.save(out / "vector_rows.npy", rows[order])
    np.save(out / "vector_at.npy", at)
    np.save(out / "centroids.npy", centroids.astype(np.float32))
    np.save(out / "list_offsets.npy", offsets)
    meta = {"format": FORMAT, "dim": dim, "units": n, "lists": lists, "probes": min(PROBES, lists)}
    (out / META).write_text(json.dumps(meta))
    return meta


class Vectors:
    """One index's memory-mapped IVF (open with `opened`)."""

    def __init__(self, folder: Path, meta: dict):
        load = lambda name: np.load(folder / name, mmap_mode="r")  # noqa: E731
        self.meta = meta
        self.unit_ids, self.vectors, self.rows = load(UNIT_IDS), load("vectors.npy"), load("vector_rows.npy")
        self.at, self.centroids, self.offsets = load("vector_at.npy"), load("centroids.npy"), load("list_offsets.npy")

    @property
    def exact(self) -> bool:
        return int(self.meta["lists"]) <= 1

    def describe(self, probes: int | None = None) -> str:
        """What a question reads, for the trace."""
        if self.exact:
            return f"exact: all {self.meta['units']} vectors (memory-mapped)"
        return f"ivf: {min(probes or self.meta['probes'], self.meta['lists'])} of {self.meta['lists']} lists (memory-mapped)"

    def _places(self, unit_ids: list[str]) -> np.ndarray:
        at, ok = lookup(self.unit_ids, unit_ids)
        places = np.asarray(self.at[at[ok]])
        return np.unique(places[places >= 0])

    def vectors_of(self, unit_ids: list[str]) -> dict[str, np.ndarray]:
        """{unit id: its (unit-length) vector} of the units that have one."""
        places = self._places(unit_ids)
        return {self.unit_ids[r].decode(): np.array(self.vectors[p]) for p, r in zip(places, self.rows[places])}

    def search(self, vec, limit: int, unit_ids: list[str] | None = None,
               probes: int | None = None) -> list[tuple[str, float]]:
        """(unit id, cosine) best first, ties by id: the given units exactly, else the probed lists."""
        q = np.asarray(vec, dtype=np.float32)
        if not len(self.vectors):
            return []
        if q.shape != (int(self.meta["dim"]),):
            raise ValueError(f"the question's vector has {q.size} dimensions, the index's {self.meta['dim']}")
        norm = float(np.linalg.norm(q))
        if norm == 0:
            return []
        q = q / norm
        if unit_ids is not None:
            places = self._places(unit_ids)
            cand_rows, scores = np.asarray(self.rows[places]), np.asarray(self.vectors[places]) @ q
        elif self.exact:
            cand_rows, scores = np.asarray(self.rows), np.asarray(self.vectors) @ q
        else:
            k = min(int(probes or self.meta["probes"]), int(self.meta["lists"]))
            near = np.argpartition(-(np.asarray(self.centroids) @ q), k - 1)[:k]
            spans = [(int(self.offsets[i]), int(self.offsets[i + 1])) for i in np.sort(near)]
            cand_rows = np.concatenate([np.asarray(self.rows[a:b]) for a, b in spans])
            scores = np.concatenate([np.asarray(self.vectors[a:b]) @ q for a, b in spans])
        if limit < len(scores):
            cut = np.partition(-scores, limit - 1)[limit - 1]
            keep = np.flatnonzero(-scores <= cut)  # the last place's ties too, ordered by id below
            cand_rows, scores = cand_rows[keep], scores[keep]
        order = np.lexsort((cand_rows, -scores))[:limit]
        return [(self.unit_ids[cand_rows[j]].decode(), float(scores[j])) for j in order]


@lru_cache(maxsize=8)
def _open(folder: str, stamp: tuple) -> Vectors | None:
    try:
        meta = json.loads((Path(folder) / META).read_text())
        return Vectors(Path(folder), meta) if meta.get("format") == FORMAT else None
    except (OSError, ValueError, KeyError):
        return None


def opened(index_path) -> Vectors | None:
    """The index's IVF, memory-mapped once per process (a rebuilt index is opened anew), or None:
    an index written before it, a GraphRAG folder (retrieve.py then scans embeddings.parquet)."""
    return mapped(index_path, META, _open)
