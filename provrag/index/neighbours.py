"""Cosine nearest neighbours of one document's units: the embedding half of the skeleton's KNN graph.

Exact neighbours multiply every block of rows by all rows: time grows with the square of the
units in one document (measured: 10,000 TF-IDF units ~3 s, 100,000 ~400 s, 1,000,000 would
be hours) and each block holds a dense block × n matrix (≤ 32 MB). Above `[skeleton] ann_above` units
the graph comes from an approximate index instead.

Why pynndescent (NN-descent): measured on the TeX Live units (bench/ann_quality.py and the
issue-18 report), it is the one candidate that searches the skeleton's rows in their own
metric — sparse TF-IDF cosine. hnswlib, faiss and usearch take dense vectors only: through a
random projection (or LSA) and an exact re-rank of 30 candidates they found 77 % of the true
3 neighbours on 10,000 real units where NN-descent with a pool of 10 found 90 %, and at
100,000 units they took 73–160 s to its 38 s (exact: ~400 s). It also builds the all-pairs KNN
graph directly (the HNSW libraries build an index, then query every unit against it). On all
39,000 TeX Live units as one document: recall@3 0.84 and 93 % of the exact skeleton's top-β
units kept. Its cost is numba: ~10 s of import and ~30–80 s of JIT compilation in the first call
of a process, which is why documents stay exact up to config.toml's ann_above (where exact
neighbours cost what NN-descent and its JIT cost, in one run of bench/ann_quality.py).

Deterministic: a fixed seed and one thread give the same graph on every run (numba's parallel
reductions would not), and every candidate's weight is re-computed exactly here, so an edge
carries the same cosine whichever path found it, and ties break by unit order.
"""
from __future__ import annotations

import numpy as np

from provrag.errors import UsageError

_BLOCK = 2048            # rows per exact block: a dense 2,048 × n float32 matrix at a time …
_BLOCK_CELLS = 1 << 23   # … and at most 8 M cells (32 MB) of it, however many units the document has
_PAIRS = 1 << 17         # candidate pairs re-scored at once (bounded memory)
_SEED = 0


class NeighbourIndexMissing(UsageError):
    """The approximate path was asked for but its library is not installed."""


def exact_neighbours(vecs, k: int) -> list[tuple[int, int, float]]:
    """Top-k cosine neighbours of every unit (L2-normalised rows, dense or sparse), computed block by
    block (exact, bounded memory)."""
    n = vecs.shape[0]
    k = min(k, n - 1)
    edges: list[tuple[int, int, float]] = []
    if k <= 0:
        return edges
    block = max(1, min(_BLOCK, _BLOCK_CELLS // n))  # a 43,000-unit document: 195 rows (~34 MB), not 2,048 (~360 MB)
    for s in range(0, n, block):
        sims = vecs[s:s + block] @ vecs.T
        if hasattr(sims, "toarray"):  # sparse TF-IDF rows: one dense block at a time
            sims = sims.toarray()
        for r in range(sims.shape[0]):
            sims[r, s + r] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r in range(sims.shape[0]):
            for c in top[r]:
                edges.append((s + r, int(c), float(sims[r, c])))
    return edges


def candidate_pool(k: int) -> int:
    """Neighbours NN-descent keeps per unit before the exact re-rank picks k: 10 for the default
    k = 3 (measured recall 0.90 on real units; 15 gave 0.92–0.96 for 1.6× the time)."""
    return max(10, 3 * k)


def _nn_descent(vecs, pool: int) -> np.ndarray:
    """Candidate neighbours (n × pool unit indices, -1 where fewer were found) by NN-descent."""
    try:
        from pynndescent import NNDescent
    except ImportError as e:
        raise NeighbourIndexMissing("documents above [skeleton] ann_above units need pynndescent "
                                    "(pip install pynndescent), or raise ann_above") from e
    graph = NNDescent(vecs, metric="cosine", n_neighbors=pool, random_state=_SEED, n_jobs=1,
                      low_memory=True, verbose=False).neighbor_graph
    return np.asarray(graph[0], dtype=np.int64)


def _pair_cosines(vecs, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Cosine of each (rows[i], cols[i]) pair of L2-normalised sparse rows, exactly."""
    return np.asarray(vecs[rows].multiply(vecs[cols]).sum(axis=1), dtype=np.float64).ravel()


def rerank(vecs, candidates: np.ndarray, k: int) -> list[tuple[int, int, float]]:
    """The k candidates of each unit with the highest exact cosine (ties: lower unit index), the
    unit itself and missing candidates (-1) left out."""
    n, pool = candidates.shape
    per = max(1, _PAIRS // pool)
    edges: list[tuple[int, int, float]] = []
    for s in range(0, n, per):
        cand = candidates[s:s + per]
        rows = np.repeat(np.arange(s, s + cand.shape[0]), pool)
        cols = cand.ravel()
        valid = (cols >= 0) & (cols != rows)
        sims = np.full(cols.shape, -np.inf)
        sims[valid] = _pair_cosines(vecs, rows[valid], cols[valid])
        sims, cand = sims.reshape(cand.shape), np.where(cand >= 0, cand, n)
        order = np.lexsort((cand, -sims), axis=1)[:, :k]
        for r in range(cand.shape[0]):
            for j in order[r]:
                if sims[r, j] > -np.inf:
                    edges.append((s + r, int(cand[r, j]), float(sims[r, j])))
    return edges


def approximate_neighbours(vecs, k: int) -> list[tuple[int, int, float]]:
    """Top-k cosine neighbours of every unit from an NN-descent graph re-ranked exactly. A document
    too small for the pool gets the exact answer (NN-descent needs more units than neighbours)."""
    n = vecs.shape[0]
    k = min(k, n - 1)
    pool = candidate_pool(k)
    if k <= 0 or n <= 2 * pool:
        return exact_neighbours(vecs, k)
    import scipy.sparse as sp

    vecs = sp.csr_matrix(vecs, dtype=np.float32)  # the skeleton's rows are sparse; dense ones work too
    vecs.sort_indices()
    return rerank(vecs, _nn_descent(vecs, pool + 1), k)  # +1: NN-descent lists the unit itself


def cosine_neighbours(vecs, k: int, ann_above: int, approximate=approximate_neighbours) -> list[tuple[int, int, float]]:
    """The skeleton's embedding neighbours: exact up to `ann_above` units (0 = always exact),
    approximate above (by `approximate`: in this process, or an `ApproximateInChild`)."""
    if ann_above and vecs.shape[0] > ann_above:
        return approximate(vecs, k)
    return exact_neighbours(vecs, k)


class ApproximateInChild:
    """`approximate_neighbours` in one spawned child process, started at the first document that
    needs it and ended with the `with` block (the skeleton stage).

    Why a process: numba's import, its JIT and the compiled code stay in a process for good —
    ~300 MB measured here — and the index run has four stages left to go after the skeleton's.
    In a child they leave when it exits; the matrix goes there and the edges come back by pickle
    (tens of MB for a 43,000-unit document). Same code, same seed: the same edges as in-process."""

    def __init__(self):
        self._pool = None

    def __call__(self, vecs, k: int) -> list[tuple[int, int, float]]:
        from concurrent.futures.process import BrokenProcessPool

        if self._pool is None:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
        try:
            return self._pool.submit(approximate_neighbours, vecs, k).result()
        except BrokenProcessPool:  # the child was killed (OOM killer, a signal): the work is still owed
            self.close()
            return approximate_neighbours(vecs, k)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
