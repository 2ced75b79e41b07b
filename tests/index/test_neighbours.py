"""The skeleton's cosine neighbours: exact up to [skeleton] ann_above units, NN-descent above.

Real text: every document of ../shared/corpora/small and the Operation Dulce novella, cut in
60-token units and taken as ONE document of ~1,400 units (the case the threshold is for: one
big document). The approximate path pays numba's JIT compilation once per process (~30–60 s),
hence the slow mark.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from provrag.config import load_config
from provrag.index.chunk import chunk_text
from provrag.index.load import load_folder
from provrag.index.neighbours import (
    ApproximateInChild,
    approximate_neighbours,
    cosine_neighbours,
    exact_neighbours,
)
from provrag.index.skeleton import document_vectors, keyword_matrix, skeleton_stage
from provrag.index.tables import frame
from provrag.store import schema

K = 3
RECALL_FLOOR = 0.80     # measured 0.84–0.91 on 10,000–100,000 TeX Live units (bench/ann_quality.py)
OVERLAP_FLOOR = 0.80    # share of the exact top-β units the approximate graph keeps in its top β


@pytest.fixture(scope="module")
def one_big_document(small_corpus, dulce) -> pl.DataFrame:
    texts = [d.text for d in load_folder(Path(small_corpus), load_config()) if d.text]
    texts.append((dulce / "source" / "Operation Dulce v2 1 1.md").read_text(encoding="utf-8"))
    rows = [u for text in texts for u in chunk_text(text, None, 60, 0)]
    for i, u in enumerate(rows):
        u[schema.ID], u[schema.HRID], u[schema.DOCUMENT_ID] = f"u{i:05d}", i, "one-document"
    return frame(schema.TEXT_UNITS, rows)


@pytest.fixture(scope="module")
def vectors(one_big_document):
    m, _ = keyword_matrix(one_big_document[schema.TEXT].to_list())
    return document_vectors(m)


def _by_unit(edges) -> dict[int, list[tuple[int, float]]]:
    out: dict[int, list[tuple[int, float]]] = {}
    for a, b, w in edges:
        out.setdefault(a, []).append((b, w))
    return out


def _true_kth(vectors) -> tuple[np.ndarray, np.ndarray]:
    """Brute force, dense: every pair's cosine (self excluded) and each unit's k-th best."""
    sims = (vectors @ vectors.T).toarray()
    np.fill_diagonal(sims, -np.inf)
    return sims, -np.sort(-sims, axis=1)[:, K - 1]


def test_below_the_threshold_the_neighbours_are_exact(vectors):
    n = vectors.shape[0]
    assert n > 1000
    edges = cosine_neighbours(vectors, K, ann_above=n)  # n units, not above n: exact
    assert edges == exact_neighbours(vectors, K)
    sims, kth = _true_kth(vectors)
    for a, found in _by_unit(edges).items():
        assert len(found) == K
        # each neighbour is among the true top k (ties at the k-th value allowed) with its true cosine
        assert all(sims[a, b] >= kth[a] - 1e-6 and abs(w - sims[a, b]) < 1e-5 for b, w in found)


@pytest.mark.slow
def test_above_the_threshold_recall_and_exact_weights(vectors):
    n = vectors.shape[0]
    approx = cosine_neighbours(vectors, K, ann_above=n - 1)
    assert approx != exact_neighbours(vectors, K), "above the threshold the approximate path ran"
    sims, kth = _true_kth(vectors)
    found = _by_unit(approx)
    assert len(found) == n and all(len(v) == K for v in found.values())
    hits = sum(sims[a, b] >= kth[a] - 1e-6 for a, v in found.items() for b, _ in v)
    assert hits / (K * n) >= RECALL_FLOOR
    # every edge carries the exact cosine of its pair, whichever path found it
    assert all(abs(w - sims[a, b]) < 1e-5 and a != b for a, v in found.items() for b, w in v)


@pytest.mark.slow
def test_approximate_path_is_deterministic(vectors, one_big_document):
    in_process = approximate_neighbours(vectors, K)
    assert in_process == approximate_neighbours(vectors, K)
    approx_cfg = load_config(overrides={"skeleton": {"ann_above": 1}})
    # the skeleton stage runs NN-descent in a child process (numba's ~300 MB leave with it): same edges
    with ApproximateInChild() as child:
        assert child(vectors, K) == in_process
        first, kw1 = skeleton_stage(one_big_document, None, approx_cfg, approximate=child)
        again, kw2 = skeleton_stage(one_big_document, None, approx_cfg, approximate=child)
    assert child._pool is None  # the block ended it
    assert first.equals(again) and kw1.equals(kw2)
    # and close to the exact skeleton: most of its top-β units stay
    exact, kw_exact = skeleton_stage(one_big_document, None, load_config(overrides={"skeleton": {"ann_above": 0}}))
    kept = set(first.filter(pl.col("is_skeleton"))["id"]) & set(exact.filter(pl.col("is_skeleton"))["id"])
    assert len(kept) / exact["is_skeleton"].sum() >= OVERLAP_FLOOR
    assert kw1.equals(kw_exact), "the keyword graph does not depend on the neighbour path"


def test_default_threshold_keeps_ordinary_documents_exact(one_big_document):
    """The shipped ann_above leaves a document of ~1,400 units on the exact path: same tables as
    ann_above = 0 (always exact)."""
    assert load_config().skeleton.ann_above > one_big_document.height
    default, _ = skeleton_stage(one_big_document, None, load_config())
    exact, _ = skeleton_stage(one_big_document, None, load_config(overrides={"skeleton": {"ann_above": 0}}))
    assert default.equals(exact)
