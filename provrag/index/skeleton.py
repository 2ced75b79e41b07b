"""KET-RAG's skeleton: which text units are worth full (expensive) graph extraction.

A KNN graph joins every unit to its nearest neighbours by TF-IDF cosine and to the units
sharing most of its salient words (KET-RAG uses an embedding graph and a keyword graph);
PageRank on that graph finds the units the rest of the text points at, and the top β of them
form the skeleton. β defaults to 0.25, not KET-RAG's code default 0.8: the point of the
skeleton here is cost — with an LLM engine extraction is ~75 % of indexing spend (GraphRAG's
docs) — and the paper's sweep shows quality close to full extraction well below β = 0.5
because the keyword graph (built for every unit, below) covers what the skeleton leaves out.

Where KET-RAG ranks the whole corpus at once, provrag ranks each document's units among
themselves (its own graph, its own word statistics) and takes the top β of every document:
- an index update then re-extracts only the documents that changed. Ranked corpus-wide, any
  change moved the PageRank of every unit and pulled units of untouched files into the
  skeleton: on the Debian manuals, deleting CAD.pdf still sent 12 extraction requests, all
  for units of other files (bench/update_speed.py with the `openai` engine);
- no document is starved: corpus-wide, a short manual among long ones could get no skeleton
  unit at all, and so no entity a question could find it by.
The `vecs` argument (the index's embeddings) is not used for the graph for the same reason:
a corpus-fitted embedder changes every vector when one file changes.
Exact cosine neighbours cost the square of one document's units; above `[skeleton] ann_above`
units they come from an approximate NN-descent graph instead (provrag/index/neighbours.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from provrag.config import Config
from provrag.index.neighbours import ApproximateInChild, cosine_neighbours
from provrag.index.progress import stage
from provrag.index.tables import frame
from provrag.store import schema

if TYPE_CHECKING:
    import polars as pl

_TOKEN_PATTERN = r"(?u)\b[^\W\d_][^\W\d_]+\b"  # words of 2+ letters (keywords are words, not numbers)
_OVERLAP_PAIRS = 4_000_000  # unit pairs of the lexical overlap held at once (~50 MB)


def keyword_matrix(texts: list[str]):
    """Word counts of every unit (rows) and the words (columns): the keyword graph's input and,
    weighted per document, its KNN graph's (None, [] when no unit has a word)."""
    from sklearn.feature_extraction.text import CountVectorizer

    cv = CountVectorizer(token_pattern=_TOKEN_PATTERN, lowercase=True, stop_words="english", binary=False)
    try:
        m = cv.fit_transform(texts).tocsr()
    except ValueError:
        return None, []
    return m, cv.get_feature_names_out().tolist()


def _lexical_neighbours(m, k: int, salient: int = 10) -> list[tuple[int, int, float]]:
    """Units sharing most of each other's `salient` most frequent non-stop words (KET-RAG's overlap)."""
    import scipy.sparse as sp

    n = m.shape[0]
    if m is None or n < 2 or k <= 0:
        return []
    df = np.asarray((m > 0).sum(axis=0)).ravel()
    rows, cols = [], []
    for r in range(n):
        a, b = m.indptr[r], m.indptr[r + 1]
        idx, cnt = m.indices[a:b], m.data[a:b]
        # frequent in the unit, not everywhere in the corpus (a word in > 20 % of units joins nothing)
        ok = df[idx] <= max(2, 0.2 * n)
        idx, cnt = idx[ok], cnt[ok]
        if idx.size:
            top = idx[np.lexsort((idx, -cnt))[:salient]]
            rows.extend([r] * len(top))
            cols.extend(top.tolist())
    if not rows:
        return []
    b = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=m.shape)
    bt = b.T.tocsr()
    edges = []
    for s, e in _row_blocks(b @ (b > 0).sum(axis=0).A1.astype(np.float64), _OVERLAP_PAIRS):
        # one block of rows at a time: the whole unit × unit overlap of a 43,000-unit document
        # held ~900 MB at once (a word can sit in 20 % of the units, and every pair of them overlaps)
        overlap = (b[s:e] @ bt).tocsr()
        for r in range(e - s):
            a, z = overlap.indptr[r], overlap.indptr[r + 1]
            idx, val = overlap.indices[a:z], overlap.data[a:z]
            keep = idx != s + r  # not the unit itself
            idx, val = idx[keep], val[keep]
            for j in np.lexsort((idx, -val))[:k]:
                edges.append((s + r, int(idx[j]), float(val[j]) / salient))
    return edges


def _row_blocks(row_costs: np.ndarray, budget: float) -> list[tuple[int, int]]:
    """Consecutive row ranges whose summed cost stays within `budget` (a row costing more gets a
    block of its own)."""
    blocks, start, total = [], 0, 0.0
    for r, c in enumerate(row_costs.tolist()):
        if r > start and total + c > budget:
            blocks.append((start, r))
            start, total = r, 0.0
        total += c
    if start < len(row_costs):
        blocks.append((start, len(row_costs)))
    return blocks


def document_vectors(m):
    """One document's units as L2-normalised TF-IDF rows (sparse, idf within the document): the
    vectors of its KNN graph."""
    from sklearn.feature_extraction.text import TfidfTransformer

    return TfidfTransformer(sublinear_tf=True).fit_transform(m).astype(np.float32)


def _document_scores(m, sk, approximate) -> dict[int, float]:
    """PageRank of one document's units (rows of the keyword count matrix `m`) over its own
    KNN graph: TF-IDF cosine neighbours (idf within the document) and salient-word overlap."""
    n = m.shape[0]
    if n == 1:
        return {0: 1.0}
    edges = cosine_neighbours(document_vectors(m), sk.knn_k, sk.ann_above, approximate)
    edges += _lexical_neighbours(m, sk.lexical_k)
    return dict(enumerate(pagerank(n, edges, sk.damping).tolist()))


def pagerank(n: int, edges: list[tuple[int, int, float]], alpha: float, max_iter: int = 100,
             tol: float = 1e-6) -> np.ndarray:
    """PageRank of nodes 0..n-1 over weighted directed edges (a repeated edge adds its weights;
    edges of weight ≤ 0 are left out): networkx's power iteration (`nx.pagerank`, its scipy
    path, same defaults and stopping rule), run on a sparse matrix built from the edge arrays.

    Written here because networkx wants a graph object first: ~300 bytes of Python dicts per
    edge, ~100 MB for a 43,000-unit document, freed into a fragmented heap. After `max_iter`
    rounds without convergence the last vector is returned (networkx raises): it ranks all the same."""
    import scipy.sparse as sp

    e = np.asarray(edges, dtype=np.float64).reshape(-1, 3)
    e = e[e[:, 2] > 0]
    a = sp.csr_matrix((e[:, 2], (e[:, 0].astype(np.int64), e[:, 1].astype(np.int64))), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out != 0)
    a = sp.diags(inv).tocsr() @ a  # each row: the node's out-weights as probabilities
    dangling = np.flatnonzero(out == 0)
    p = np.repeat(1.0 / n, n)
    x = p
    for _ in range(max_iter):
        last = x
        x = alpha * (x @ a + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * tol:
            break
    return x


def skeleton_stage(text_units: pl.DataFrame, vecs: np.ndarray | None, cfg: Config,
                   progress=None, approximate=None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """text_units with is_skeleton/skeleton_score filled (the unit's PageRank within its
    document), and the keywords frame (every unit). Documents above `[skeleton] ann_above` units
    get their neighbours from `approximate` (default: a child process of this stage's own)."""
    import polars as pl

    sk = cfg.skeleton
    n = text_units.height
    ids, texts = text_units[schema.ID].to_list(), text_units[schema.TEXT].to_list()
    m, vocab = keyword_matrix(texts)
    rows_of: dict[str | None, list[int]] = {}
    for i, doc in enumerate(text_units[schema.DOCUMENT_ID].to_list()):
        rows_of.setdefault(doc, []).append(i)
    scores = [0.0] * n
    chosen: set[int] = set()
    with stage(progress, "skeleton", len(rows_of)) as task, ApproximateInChild() as own_child:
        approximate = approximate or own_child  # a child started only if a document needs it
        for rows in rows_of.values():
            if m is not None:
                local = _document_scores(m[rows], sk, approximate)
            else:  # no word at all (only numbers or stop words): uniform
                local = {j: 1.0 / len(rows) for j in range(len(rows))}
            for j, r in enumerate(rows):
                scores[r] = float(local.get(j, 0.0))
            n_sk = min(len(rows), max(1, round(sk.beta * len(rows))))
            order = sorted(rows, key=lambda r: (-scores[r], ids[r]))
            chosen.update(order[:n_sk])
            task.advance()
    text_units = text_units.with_columns(
        pl.Series("is_skeleton", [i in chosen for i in range(n)], dtype=pl.Boolean),
        pl.Series("skeleton_score", scores, dtype=pl.Float64))

    return text_units, keywords_frame(m, vocab, text_units[schema.ID])


def keywords_frame(m, vocab: list[str], unit_ids: pl.Series) -> pl.DataFrame:
    """The keywords table: every word of the count matrix `m` (columns), the units it occurs in
    (ids sorted) and its count. Built column by column in Arrow from the matrix's arrays: its
    text_unit_ids hold one 64-character id per (word, unit) pair — 3.6 million on a 50 MB text —
    which as Python strings in row dicts cost ~1 GB on the way and fragmented the heap."""
    import polars as pl
    import pyarrow as pa

    if m is None:
        return frame(schema.KEYWORDS, [])
    mc = m.tocsc()
    n_units = len(unit_ids)
    rank = np.empty(n_units, np.int64)  # each unit's place in id order: lists are sorted by id
    rank[np.argsort(np.asarray(unit_ids.to_list(), dtype=object), kind="stable")] = np.arange(n_units)
    word_of = np.repeat(np.arange(len(vocab)), np.diff(mc.indptr))
    rows = mc.indices[np.lexsort((rank[mc.indices], word_of))]
    lists = pa.ListArray.from_arrays(pa.array(mc.indptr.astype(np.int32)),
                                     unit_ids.to_arrow().cast(pa.string()).take(pa.array(rows)))
    table = pa.table({schema.ID: [schema.content_id("keyword", w) for w in vocab],
                      schema.HRID: np.arange(len(vocab), dtype=np.int64), "keyword": vocab,
                      schema.TEXT_UNIT_IDS: lists,
                      "frequency": np.asarray(mc.sum(axis=0), dtype=np.int64).ravel()},
                     schema=schema.SCHEMAS[schema.KEYWORDS])
    return pl.from_arrow(table)
