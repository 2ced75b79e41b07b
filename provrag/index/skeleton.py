"""KET-RAG's skeleton: which text units are worth full (expensive) graph extraction.

A KNN graph joins every unit to its nearest embedding neighbours and to the units sharing
most of its salient words (KET-RAG uses both); PageRank on that graph finds the units the
rest of the corpus points at, and the top β of them form the skeleton. β defaults to 0.25,
not KET-RAG's code default 0.8: the point of the skeleton here is cost — with an LLM engine
extraction is ~75 % of indexing spend (GraphRAG's docs) — and the paper's sweep shows
quality close to full extraction well below β = 0.5 because the keyword graph (built for
every unit, below) covers what the skeleton leaves out.
"""
from __future__ import annotations

import numpy as np

from provrag.config import Config
from provrag.store.schema import content_id

_TOKEN_PATTERN = r"(?u)\b[^\W\d_][^\W\d_]+\b"  # words of 2+ letters (keywords are words, not numbers)
_BLOCK = 2048


def _embedding_neighbours(vecs: np.ndarray, k: int) -> list[tuple[int, int, float]]:
    """Top-k cosine neighbours of every unit, computed block by block (exact, bounded memory)."""
    n = vecs.shape[0]
    k = min(k, n - 1)
    edges: list[tuple[int, int, float]] = []
    if k <= 0:
        return edges
    for s in range(0, n, _BLOCK):
        sims = vecs[s:s + _BLOCK] @ vecs.T
        for r in range(sims.shape[0]):
            sims[r, s + r] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r in range(sims.shape[0]):
            for c in top[r]:
                edges.append((s + r, int(c), float(sims[r, c])))
    return edges


def _keyword_matrix(texts: list[str]):
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
    overlap = (b @ b.T).tocsr()
    overlap.setdiag(0)
    overlap.eliminate_zeros()
    edges = []
    for r in range(n):
        a, e = overlap.indptr[r], overlap.indptr[r + 1]
        if a == e:
            continue
        idx, val = overlap.indices[a:e], overlap.data[a:e]
        for j in np.lexsort((idx, -val))[:k]:
            edges.append((r, int(idx[j]), float(val[j]) / salient))
    return edges


def skeleton_stage(units: list[dict], vecs: np.ndarray, cfg: Config, progress=None) -> tuple[list[dict], list[dict]]:
    """Mark is_skeleton/skeleton_score on units; return them and the keyword table rows."""
    import networkx as nx

    sk = cfg.skeleton
    n = len(units)
    texts = [u["text"] for u in units]
    m, vocab = _keyword_matrix(texts)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for a, b, w in _embedding_neighbours(vecs, sk.knn_k) + (_lexical_neighbours(m, sk.lexical_k) if m is not None else []):
        if w > 0:
            prev = g.get_edge_data(a, b, {}).get("weight", 0.0)
            g.add_edge(a, b, weight=prev + w)
    scores = nx.pagerank(g, alpha=sk.damping, weight="weight") if n else {}
    n_sk = min(n, max(1 if n else 0, round(sk.beta * n)))
    order = sorted(range(n), key=lambda i: (-scores.get(i, 0.0), units[i]["id"]))
    chosen = set(order[:n_sk])
    for i, u in enumerate(units):
        u["skeleton_score"] = float(scores.get(i, 0.0))
        u["is_skeleton"] = i in chosen

    keywords: list[dict] = []
    if m is not None:
        mc = m.tocsc()
        for j, word in enumerate(vocab):
            a, b = mc.indptr[j], mc.indptr[j + 1]
            rows = mc.indices[a:b]
            keywords.append({"id": content_id("keyword", word), "keyword": word,
                             "text_unit_ids": sorted(units[r]["id"] for r in rows),
                             "frequency": int(mc.data[a:b].sum())})
        for i, k in enumerate(keywords):
            k["human_readable_id"] = i
    if progress:
        with progress.stage("skeleton", total=1) as t:
            t.advance()
    return units, keywords
