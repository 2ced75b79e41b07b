"""Hybrid retrieval of text units: BM25 over the term table + cosine over unit embeddings.

Both channels read INDEX/retrieval/, written at index time and memory-mapped here: BM25 from
the postings of the question's terms (store/postings.py), the dense channel from an IVF of the
unit vectors (store/vectors.py; exact up to 50,000 units), with the query embedded by the index's
own embedder — so a question's cost follows its terms and a few lists, not the number of units.
An index written before them (or a GraphRAG folder) is answered by the scans they replace, in
DuckDB: one SQL query over the term table (store/terms.py) and `array_cosine_similarity` over
embeddings.parquet; the trace's channels say which (`index`). Each channel returns its top `pool` units; the union is then
scored exactly in both channels and fused as

    score = w · bm25 / max(bm25) + (1 − w) · max(cos, 0) / max(cos)

with w = [search] lexical_weight. A linear fusion of normalised scores (rather than
reciprocal-rank fusion) keeps the margin information: a unit that matches every rare term
of the question stays far ahead of one that merely shares its topic. GraphRAG folders have
no unit embeddings: retrieval is then BM25 alone, and the trace says so. Every candidate
carries its `why` (provrag/query/why.py): rank, the score's parts, and the question's words
that drove it in each channel.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from provrag.config import Config
from provrag.query.literal import literal_channel, option_channel
from provrag.query.why import explain_units
from provrag.store import terms as lexical
from provrag.store.neighbours import neighbours_by_row, next_head, previous_tail
from provrag.store.units import fetch_units


@dataclass
class Retrieval:
    """Ranked candidates (dicts, best first) and how they were found (for the trace)."""

    candidates: list[dict]
    channels: dict = field(default_factory=dict)
    timings_ms: dict = field(default_factory=dict)
    query_terms: dict = field(default_factory=dict)   # index terms of the question (spelling-fixed)
    idf: dict = field(default_factory=dict)           # their BM25 idf, for sentence scoring
    said: list = field(default_factory=list)          # those that named the documents read (query/named.py)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)


def _has_view(con, name: str) -> bool:
    """Whether `con` has a view or table `name` (one of the index's: asked once per connection)."""
    from provrag.store.facts import remembered

    def ask() -> bool:
        rows = con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name]).fetchall()
        return bool(rows[0][0]) or bool(con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]).fetchall()[0][0])

    return remembered(con, ("has view", name), ask)


def embed_query(reader, question: str):
    """The question's vector from the index's embedder, or None (GraphRAG index, failure)."""
    try:
        emb = reader.embedder()
    except Exception:  # a broken embedder folder must not break ask: BM25 still works
        return None, None
    if emb is None:
        return None, None
    try:
        vec = emb.embed([question])[0]
    except Exception:
        return None, emb
    return vec, emb


def dense(con, vec, limit: int = 200, unit_ids: list[str] | None = None) -> list[tuple[str, float]]:
    """(text_unit_id, cosine) best first, over the embeddings view."""
    dim = int(len(vec))
    if dim == 0:
        return []
    params: list = [[float(x) for x in vec]]
    where = ""
    if unit_ids is not None:
        if not unit_ids:
            return []
        where = "WHERE id IN (SELECT unnest(?::VARCHAR[]))"
        params.append(list(unit_ids))
    sql = f"""
        SELECT id, s FROM (
            SELECT id, array_cosine_similarity(vector::FLOAT[{dim}], ?::FLOAT[{dim}]) AS s0,
                   CASE WHEN s0 IS NULL OR isnan(s0) THEN 0.0 ELSE s0 END AS s
            FROM embeddings {where})
        ORDER BY s DESC, id LIMIT {int(limit)}
    """
    return [(r[0], _finite(r[1])) for r in con.execute(sql, params).fetchall()]


def dense_channel(reader, vec, limit: int, unit_ids: list[str] | None, note: dict) -> list[tuple[str, float]]:
    """`dense` from the index's memory-mapped IVF (store/vectors.py) when it has one, else the
    scan of embeddings.parquet (an index written before it, a GraphRAG folder); `note["index"]`
    says which, for the trace."""
    from provrag.store.vectors import opened

    ann = opened(getattr(reader, "path", None))
    if ann is None:
        note["index"] = "embeddings.parquet scan (the index has no retrieval/vectors.npy)"
        return dense(reader.con, vec, limit, unit_ids)
    note["index"] = ann.describe()
    return ann.search(vec, limit, unit_ids)


def _finite(x) -> float:
    """A similarity as a float, NULL and NaN (a zero vector has no direction) as 0."""
    if x is None:
        return 0.0
    x = float(x)
    return x if math.isfinite(x) else 0.0


def neighbours(reader, ids: list[str], chars: int = 600) -> tuple[dict[str, dict], dict[str, dict]]:
    """(continuations, antecedents) of the units (see both). Each unit's next and previous unit in
    its document are found by one window over their documents: that window is most of the cost (a
    900-page manual's thousands of units), and a lookup for each side made it twice. A reader that
    keeps unit rows (store/units.KeptUnits: an ask's, a server's) keeps these too, so ask's wider
    retries and a server's next questions look up only units not seen before; and where it kept
    the units' rows, their documents are known without a scan of text_units.
    Only provrag indexes (char offsets known); ({}, {}) for GraphRAG folders."""
    ids = list(dict.fromkeys(i for i in ids if i))
    kept = getattr(reader, "kept_units", None)
    found = kept.neighbours_of(ids, chars) if kept is not None and ids else {}
    todo = [i for i in ids if i not in found]
    if todo:
        fresh = _look_up_neighbours(reader, todo, chars, kept)
        if kept is not None:
            kept.keep_neighbours(fresh, chars)
        found.update(fresh)
    nxt = {i: found[i][0] for i in ids if found[i][0] is not None}
    prv = {i: found[i][1] for i in ids if found[i][1] is not None}
    return nxt, prv


def _look_up_neighbours(reader, ids: list[str], chars: int, kept) -> dict[str, tuple]:
    """{unit id: (continuation or None, antecedent or None)} for each of `ids`, from the index:
    from the rows it wrote down (store/neighbours.py), else by a window in SQL (an older index)."""
    by_row = neighbours_by_row(getattr(reader, "path", None), ids, chars)
    if by_row is not None:
        return by_row
    rows_kept = kept.get(ids) if kept is not None else {}
    if len(rows_kept) == len(ids):   # their documents known: no scan of text_units to find them
        docs = "SELECT unnest(?::VARCHAR[])"
        first = sorted({r.document_id for r in rows_kept.values() if r.document_id is not None})
    else:
        docs = "SELECT document_id FROM text_units WHERE id IN (SELECT unnest(?::VARCHAR[]))"
        first = ids
    rows = reader.con.execute(f"""
        WITH o AS (SELECT id, char_start, char_end, lead(id) OVER w AS next_id, lag(id) OVER w AS previous_id
                   FROM text_units WHERE char_start IS NOT NULL AND document_id IN ({docs})
                   WINDOW w AS (PARTITION BY document_id ORDER BY char_start, human_readable_id))
        SELECT id, char_start, char_end, next_id, previous_id FROM o WHERE id IN (SELECT unnest(?::VARCHAR[]))
    """, [first, ids]).fetchall()
    # the neighbours' text in a second query, by id: a join in the first decoded the text of
    # every unit of those documents
    want = sorted({x for r in rows for x in r[3:] if x is not None})
    text_of = {r[0]: r[1:] for r in reader.con.execute(
        "SELECT id, human_readable_id, char_start, text FROM text_units WHERE id IN (SELECT unnest(?::VARCHAR[]))",
        [want]).fetchall()} if want else {}
    out: dict[str, tuple] = {i: (None, None) for i in ids}
    for uid, start, end, next_id, previous_id in rows:
        n, p = text_of.get(next_id), text_of.get(previous_id)
        text = next_head(end, n[1], n[2], chars) if n is not None else None
        head = previous_tail(start, p[1], p[2], chars) if p is not None else None
        out[uid] = ({"human_readable_id": n[0], "text": text} if text is not None else None,
                    {"human_readable_id": p[0], "text": head} if head is not None else None)
    return out


def continuations(reader, ids: list[str], chars: int = 600) -> dict[str, dict]:
    """For each unit, the text that follows it in its document (the next unit's head, minus any
    overlap): a unit closed at a page break can end mid-sentence, and an answer must not."""
    return neighbours(reader, ids, chars)[0]


def antecedents(reader, ids: list[str], chars: int = 600) -> dict[str, dict]:
    """For each unit, the text that precedes it in its document (the previous unit's text up
    to where this unit starts, at most `chars` of it): a unit opened inside a sentence (the
    chunker cuts by tokens) starts with a fragment that only the previous unit completes."""
    return neighbours(reader, ids, chars)[1]


def fusion_parts(lex: dict[str, float], den: dict[str, float], weight: float) -> dict[str, tuple[float, float]]:
    """Each unit's (lexical, embedding) part of the linear fusion (see the module docstring)."""
    mb = max(lex.values(), default=0.0)
    md = max((max(v, 0.0) for v in den.values()), default=0.0)
    if mb <= 0:
        weight = 0.0
    if md <= 0:
        weight = 1.0 if mb > 0 else weight
    ids = set(lex) | set(den)
    return {i: (weight * (lex.get(i, 0.0) / mb if mb else 0.0),
                (1 - weight) * (max(den.get(i, 0.0), 0.0) / md if md else 0.0)) for i in ids}


def retrieve_units(reader, question: str, cfg: Config, k: int | None = None, pool: int = 100,
                   restrict: list[str] | None = None, boost: dict[str, float] | None = None,
                   said=()) -> Retrieval:
    """Top-k text units for the question, fused from BM25 and embedding similarity.

    restrict: only these unit ids (the documents a question names, the section around a page);
    boost: extra score per unit id added after fusion (local search's entity matches); said:
    the question's terms that named the documents `restrict` holds, kept on the result for
    the answer's sentence scoring (query/context.py), not used to rank units here.
    """
    scfg = cfg.search
    k = int(k or scfg.top_k_units)
    weight = float(scfg.lexical_weight)
    con = reader.con
    timings: dict[str, float] = {}
    channels: dict = {}

    t0 = time.perf_counter()
    stats = lexical.ensure_terms(con, getattr(reader, "path", None))
    timings["terms"] = _ms(t0)
    qterms, fixes = lexical.match_terms(con, question)
    channels["bm25"] = {"source": stats.get("source"), "n_units": stats.get("n_units"),
                        "index": "postings (memory-mapped)" if stats.get("postings") else "term table scan (SQL)",
                        "query_terms": qterms, "spelling": fixes}

    t0 = time.perf_counter()
    lex = dict(lexical.bm25(con, stats, qterms, limit=pool, unit_ids=restrict))
    timings["bm25"] = _ms(t0)
    t0 = time.perf_counter()
    literal, seen = literal_channel(con, question, len(qterms), pool, restrict)
    if literal:  # the question's own words where the term table has too few: added to BM25's part
        channels["literal"] = seen
        timings["literal"] = _ms(t0)
        for uid, sc in literal.items():
            lex[uid] = lex.get(uid, 0.0) + sc
    t0 = time.perf_counter()
    entries, seen = option_channel(con, question, pool, restrict)
    if seen:  # the entry of the option the question names ("-K"), which no term finds
        channels["option"] = seen
        timings["option"] = _ms(t0)
        for uid, sc in entries.items():
            lex[uid] = lex.get(uid, 0.0) + sc

    den: dict[str, float] = {}
    dense_note: dict = {}
    t0 = time.perf_counter()
    vec, emb = (None, None)
    if _has_view(con, "embeddings"):
        vec, emb = embed_query(reader, question)
    timings["embed_query"] = _ms(t0)
    if vec is not None and not any(float(x) != 0.0 for x in vec):
        vec = None  # no word of the question is in the embedder's vocabulary: no direction to compare
        channels["dense_note"] = "the question's vector is zero (no known words)"
    if vec is not None:
        t0 = time.perf_counter()
        try:
            den = dict(dense_channel(reader, vec, pool, restrict, dense_note))
        except Exception as e:  # dimension mismatch, unreadable vectors: fall back to BM25, say why
            channels["dense_error"] = str(e).splitlines()[0][:200]
            den = {}
        timings["dense"] = _ms(t0)
    channels["dense"] = {"embedder": getattr(emb, "name", None), "used": bool(den)} | dense_note
    if not den:
        weight = 1.0
    channels["lexical_weight"] = weight

    # score the union exactly in both channels (a unit in one top list may be just below the other's)
    t0 = time.perf_counter()
    union = sorted(set(lex) | set(den))
    miss_lex = [i for i in union if i not in lex]
    if miss_lex and lex and qterms:
        lex.update(dict(lexical.bm25(con, stats, qterms, limit=len(miss_lex), unit_ids=miss_lex)))
    miss_den = [i for i in union if i not in den]
    if miss_den and den and vec is not None:
        den.update(dict(dense_channel(reader, vec, len(miss_den), miss_den, {})))
    parts = fusion_parts(lex, den, weight)
    fused = {i: a + b for i, (a, b) in parts.items()}
    if boost:  # only units either channel found: an entity seen in 1,000 units must not flood the ranking
        for i in fused:
            fused[i] += boost.get(i, 0.0)
    timings["fuse"] = _ms(t0)

    ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    t0 = time.perf_counter()
    rows = fetch_units(reader, [i for i, _ in ranked])
    timings["fetch"] = _ms(t0)
    cands = []
    for rank, (uid, s) in enumerate(ranked):
        u = rows.get(uid)
        if u is None:  # a term/embedding row whose unit is gone: skip rather than cite nothing
            continue
        cands.append({"text_unit_id": u.id, "human_readable_id": u.human_readable_id, "text": u.text,
                      "document_id": u.document_id, "page_start": u.page_start, "page_end": u.page_end,
                      "document": u.document, "path": u.path, "score": round(s, 6),
                      "bm25": round(lex.get(uid, 0.0), 6), "cosine": round(den.get(uid, 0.0), 6), "rank": rank})
    channels["pool"] = {"bm25": len(lex), "dense": len(den), "union": len(union)}
    t0 = time.perf_counter()  # why each candidate ranks where it does (query/why.py), for the trace
    explain_units(reader, cands, question, qterms, fixes, stats, parts, boost, emb if den else None)
    timings["why"] = _ms(t0)
    idf = lexical.idf_of(con, stats, qterms)
    return Retrieval(cands, channels, timings, qterms, idf, [t for t in said if t in qterms])
