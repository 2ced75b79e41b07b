"""Citation → text units → document + page + quote, ranked by support for the citing sentence.

The chain is CONTRACT.md §4. A Report expands to every text unit of its community — dozens
to thousands, most irrelevant to the sentence that cited it (GraphRAG #1988) — so the
candidates of each cited sentence are ranked by how well they support that sentence:

    score = 0.6 · lexical(sentence, unit) + 0.4 · lexical(sentence, best span)           (no vectors)
    score = 0.45 · lexical(unit) + 0.25 · lexical(best span) + 0.30 · max(0, cosine)  (provrag index)

and the top k are listed with their document, pages, the best span as the quote, and the
route that reached them (`Report 4 → community 4 → text unit 12`).

Speed on a million units comes from DuckDB and from batching: every lookup is one SQL query
over the parquet views with the ids inlined as an IN list (pushed into the scan); all cited
sentences of an answer are resolved together (one query per citation kind, two for the
candidate units: ids → row positions, then the rows at those positions, so the text column
is decoded only where a candidate sits); only candidate rows reach Python, where a cheap
substring pass narrows each sentence's candidates before the real scoring. A sentence with
more than `MAX_CANDIDATES` candidates (a huge community) is pre-ranked inside DuckDB first.
A reader that resolves a second time builds two in-memory lookup tables (`_Lookups`) so
repeated resolutions skip the two scans parquet cannot prune. bench/resolve_speed.py
measures all of it on a synthetic million-unit index against the pandas recipe.

GraphRAG before v2.6 numbered `Sources (n)` by the unit's row position in the loaded table,
not by human_readable_id (GraphRAG #1871; in v1/v2 tables human_readable_id starts at 1, so
the two differ by one). For graphrag-v1/v2 indexes both readings are candidates, each with its
route spelled out, and the claim-aware ranking decides; the id is unresolved only if neither
exists. v3 and provrag indexes use human_readable_id only.
"""
from __future__ import annotations

from collections import OrderedDict

from provrag.query.citations import KINDS, ParseResult, Ref, parse_citations
from provrag.text.similarity import best_span, content_words, lexical_score

MAX_CANDIDATES = 2000    # candidate units per sentence whose text is fetched into Python
# the ranking passes look at max(top_k × factor, floor) candidates, so the top result does
# not depend on how many results were asked for
_SCORE_POOL = (8, 24)    # full lexical score on this many (by stem-substring count)
_SPAN_POOL = (2, 8)      # best_span (the quote) on this many (by lexical score)
_INLINE_MAX = 5000       # longer id lists are registered as a table instead of inlined
_OLD_SOURCES = ("graphrag-v1", "graphrag-v2")


# ---- SQL helpers ------------------------------------------------------------------------

def _ints(ids) -> str:
    return ", ".join(str(int(i)) for i in ids)


def _strs(ids) -> str:
    return ", ".join("'" + str(i).replace("'", "''") + "'" for i in ids)


def _in(con, col: str, ids: list[str], tag: str) -> str:
    """`col IN (...)` for string ids; very long lists go through a registered Arrow table."""
    if len(ids) <= _INLINE_MAX:
        return f"{col} IN ({_strs(ids)})"
    import pyarrow as pa

    name = f"_ids_{tag}"
    con.register(name, pa.table({"v": pa.array(list(ids), pa.string())}))
    return f"{col} IN (SELECT v FROM {name})"


# ---- lookup tables for a reader that is used again -------------------------------------

_CACHE_MIN_UNITS = 50_000   # below this, direct parquet lookups take a few ms already


class _Lookups:
    """Two small TEMP tables that turn the costly lookups into in-memory ones.

    On a large index the two costs of a resolution are decoding communities.text_unit_ids
    (a parquet list column is decoded whole, whatever the filter) and scanning
    text_units.id (random hashes: no min/max pruning). A one-shot `provrag resolve` pays each
    once, batched for the whole answer. A reader that resolves again (ask/verify loops, a
    notebook, a server) builds these once instead, in DuckDB's memory (~16 bytes per
    community-unit pair, ~80 bytes per unit): unit id → row position, and community → row
    positions of its units, sorted so DuckDB's zone maps find a community without a scan.
    """

    def __init__(self, reader):
        con = reader.con
        con.execute("CREATE OR REPLACE TEMP TABLE _prv_units AS SELECT id, human_readable_id AS hrid, "
                    "row_position FROM text_units ORDER BY row_position")
        con.execute("CREATE OR REPLACE TEMP TABLE _prv_comm AS SELECT c.community, u.row_position "
                    "FROM (SELECT community, unnest(text_unit_ids) AS tu FROM communities) c "
                    "JOIN _prv_units u ON u.id = c.tu ORDER BY c.community, u.row_position")


def _lookups(reader) -> "_Lookups | None":
    """The reader's lookup tables: built on its second resolution, if the index is large."""
    st = reader.__dict__.setdefault("_prv_resolve", {"calls": 0, "lookups": None, "units": None})
    st["calls"] += 1
    if st["lookups"] is None and st["calls"] >= 2:
        if st["units"] is None:
            st["units"] = reader.count("text_units")
        if st["units"] >= _CACHE_MIN_UNITS:
            st["lookups"] = _Lookups(reader)
    return st["lookups"]


# ---- step 1: cited ids → candidate unit ids with routes ---------------------------------

def _expand(reader, wanted: dict[str, set[int]], lk: _Lookups | None = None) -> tuple[dict, set]:
    """{(kind, id): [(unit_id, via)]} for the ids that exist, and the set of missing ones."""
    con = reader.con
    units = "_prv_units" if lk else "text_units"
    hrid = "hrid" if lk else "human_readable_id"
    found: dict[tuple[str, int], list] = {}
    for kind, ids in wanted.items():
        if not ids:
            continue
        lst = _ints(sorted(ids))
        if kind == "Reports":
            rows = con.execute(
                f"SELECT DISTINCT community FROM community_reports WHERE community IN ({lst})").fetchall()
            exist = {int(r[0]) for r in rows}
            for c in exist:
                found[(kind, c)] = []
            if exist and lk:
                for c, tu in con.execute(
                        f"SELECT c.community, u.id FROM _prv_comm c JOIN _prv_units u USING (row_position) "
                        f"WHERE c.community IN ({_ints(exist)}) ORDER BY c.community, u.row_position").fetchall():
                    found[(kind, int(c))].append((tu, f"Report {c} → community {c}"))
            elif exist:
                for c, tus in con.execute(
                        f"SELECT community, text_unit_ids FROM communities WHERE community IN ({_ints(exist)})").fetchall():
                    for tu in tus or []:
                        found[(kind, int(c))].append((tu, f"Report {c} → community {c}"))
        elif kind in ("Entities", "Relationships"):
            table, label = ("entities", "title") if kind == "Entities" else \
                ("relationships", "source || ' – ' || target")
            rows = con.execute(
                f"SELECT human_readable_id, {label}, text_unit_ids FROM {table} "
                f"WHERE human_readable_id IN ({lst})").fetchall()
            word = "Entity" if kind == "Entities" else "Relationship"
            for h, name, tus in rows:
                routes = found.setdefault((kind, int(h)), [])
                via = f"{word} {h}" + (f" ({name})" if name else "")
                routes.extend((tu, via) for tu in (tus or []))
        elif kind == "Claims":
            rows = con.execute(
                f"SELECT human_readable_id, text_unit_id FROM covariates WHERE human_readable_id IN ({lst})").fetchall()
            for h, tu in rows:
                routes = found.setdefault((kind, int(h)), [])
                if tu:
                    routes.append((tu, f"Claim {h}"))
        elif kind == "Sources":
            rows = con.execute(f"SELECT {hrid}, id FROM {units} WHERE {hrid} IN ({lst})").fetchall()
            for h, tu in rows:
                found.setdefault((kind, int(h)), []).append((tu, f"Source {h}"))
            if reader.kind in _OLD_SOURCES:
                rows = con.execute(f"SELECT row_position, id FROM {units} WHERE row_position IN ({lst})").fetchall()
                for pos, tu in rows:
                    found.setdefault((kind, int(pos)), []).append(
                        (tu, f"Source {pos} → row {pos} (GraphRAG < 2.6 numbering, #1871)"))
    missing = {(k, i) for k, ids in wanted.items() for i in ids if (k, i) not in found}
    return found, missing


# ---- step 2: candidate unit rows ----------------------------------------------------------

_UNIT_COLS = ("id", "human_readable_id", "text", "page_start", "page_end", "char_start", "char_end",
              "document_id", "title", "path", "page_labels")


def _prefilter(reader, unit_ids: list[str], sentence: str, limit: int, tag: str) -> list[str]:
    """The `limit` candidates whose text holds most of the sentence's content words (in DuckDB)."""
    words = sorted(set(content_words(sentence)), key=len, reverse=True)[:24]
    if words:
        hits = " + ".join(f"CAST(contains(lower(text), {_strs([w])}) AS INTEGER)" for w in words)
    else:
        hits = "0"
    sql = (f"SELECT id FROM text_units WHERE {_in(reader.con, 'id', unit_ids, tag)} "
           f"ORDER BY {hits} DESC, human_readable_id LIMIT {int(limit)}")
    return [r[0] for r in reader.con.execute(sql).fetchall()]


def _fetch_units(reader, unit_ids: list[str], lk: _Lookups | None = None) -> dict[str, dict]:
    """Candidate rows with their document, in two passes: ids → row positions (reads only
    the id column), then the rows at those positions (DuckDB skips every 2,048-row vector
    without one, so the text column is decoded only where a candidate sits). One pass with
    `id IN (…)` decodes the text of all rows: 3–4× slower on a million units."""
    if not unit_ids:
        return {}
    con = reader.con
    src = "_prv_units" if lk else "text_units"
    pos = [r[0] for r in con.execute(
        f"SELECT row_position FROM {src} WHERE {_in(con, 'id', unit_ids, 'fetch')}").fetchall()]
    if not pos:
        return {}
    sql = (f"SELECT t.id, t.human_readable_id, t.text, t.page_start, t.page_end, t.char_start, t.char_end, "
           f"t.document_id, d.title, d.path, d.page_labels "
           f"FROM (SELECT * FROM text_units WHERE row_position IN ({_ints(sorted(pos))})) t "
           f"LEFT JOIN documents d ON d.id = t.document_id")
    return {r[0]: dict(zip(_UNIT_COLS, r)) for r in con.execute(sql).fetchall()}


def _vectors(reader, unit_ids: list[str]) -> dict:
    if reader.tables.get("embeddings") is None or not unit_ids:
        return {}
    import numpy as np

    rows = reader.con.execute(
        f"SELECT id, vector FROM embeddings WHERE {_in(reader.con, 'id', unit_ids, 'vec')}").fetchall()
    return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows if r[1] is not None}


# ---- step 3: ranking ------------------------------------------------------------------------

def _page_label(labels, page):
    if labels and page and 1 <= int(page) <= len(labels):
        return labels[int(page) - 1]
    return None


def _source(u: dict, via: str, score: float, quote: tuple, sentence_index: int | None) -> dict:
    q, q0, q1 = quote
    cs = u["char_start"]
    return {
        "document": u["title"] or u["path"] or u["document_id"] or "(unknown document)",
        "path": u["path"],
        "page_start": u["page_start"],
        "page_end": u["page_end"],
        "page_label": _page_label(u["page_labels"], u["page_start"]),
        "text_unit_id": u["id"],
        "text_unit": u["human_readable_id"],
        "quote": q,
        "char_start": cs + q0 if cs is not None and q else None,  # the quote, in documents.text
        "char_end": cs + q1 if cs is not None and q else None,
        "via": via,
        "score": round(float(score), 4),
        "sentence_index": sentence_index,
    }


def _rank(sentence: str, cands: "OrderedDict[str, list[str]]", units: dict, qvec, vecs: dict,
          top_k: int, sentence_index) -> list[dict]:
    """Top-k sources for one sentence. Three passes, each on fewer units: a substring count
    of the sentence's word stems in every candidate (C-speed `in`, no tokenising), then the
    full lexical score on the best `_SCORE_POOL`, then best_span (the quote) on the best few."""
    from provrag.text.words import stem as fold

    words = sorted(set(content_words(sentence))) if sentence else []
    keys = [(w, fold(w)) for w in words]
    pre = []
    for order, uid in enumerate(cands):
        u = units.get(uid)
        if u is None:
            continue
        low = u.setdefault("_low", (u["text"] or "").lower())
        hits = sum(1 for w, st in keys if st in low or w in low) / len(keys) if keys else 0.0
        cos = None
        if qvec is not None and uid in vecs and vecs[uid].shape == qvec.shape:
            cos = max(0.0, float(vecs[uid] @ qvec))
        # ties go to the lower human_readable_id: the same order whichever way the ids came
        order = (u["human_readable_id"] if u["human_readable_id"] is not None else 1 << 62, order)
        pre.append(((hits if cos is None else 0.6 * hits + 0.4 * cos), order, uid, cos))
    pre.sort(key=lambda x: (-x[0], x[1]))
    scored = []
    for _, order, uid, cos in pre[: max(top_k * _SCORE_POOL[0], _SCORE_POOL[1])]:
        lex = lexical_score(sentence, units[uid]["text"] or "") if sentence else 0.0
        scored.append(((lex if cos is None else 0.6 * lex + 0.4 * cos), order, uid, lex, cos))
    scored.sort(key=lambda x: (-x[0], x[1]))
    out = []
    for _, order, uid, lex, cos in scored[: max(top_k * _SPAN_POOL[0], _SPAN_POOL[1])]:
        u = units[uid]
        text = u["text"] or ""
        if sentence:
            q, q0, q1, span = best_span(sentence, text)
        else:
            q, q0, q1, span = _opening(text)
        score = (0.6 * lex + 0.4 * span) if cos is None else (0.45 * lex + 0.25 * span + 0.30 * cos)
        via = _join_vias(cands[uid], u["human_readable_id"])
        out.append((score, order, _source(u, via, score, (q, q0, q1), sentence_index)))
    out.sort(key=lambda x: (-x[0], x[1]))
    if sentence:
        out = _join_seams(sentence, out, units)
    return [s for _, _, s in out[:top_k]]


_SEAM_CHARS = 600   # text taken from each side of a unit boundary when a quote may cross it


def _join_seams(sentence: str, ranked: list[tuple], units: dict) -> list[tuple]:
    """Two ranked units that follow each other in one document, where the sentence is quoted
    best by a span crossing their boundary (a sentence cut by a page break or by the chunker),
    become one source over both pages with that span as the quote: "which page says that"
    is then "pages 7–8", not whichever half matched better."""
    from provrag.text.similarity import best_span

    merged: set[int] = set()
    for i, (score, order, a) in enumerate(ranked):
        if i in merged:
            continue
        ua = units[a["text_unit_id"]]
        for j, (score_b, _, b) in enumerate(ranked):
            if j == i or j in merged:
                continue
            ub = units[b["text_unit_id"]]
            seam = seam_text(ua, ub)
            if seam is None:
                continue
            text, cut, a_off, b_off = seam
            q, q0, q1, lex = best_span(sentence, text)
            if not (q0 < cut < q1):
                continue
            if lex < max(_quote_lex(sentence, a), _quote_lex(sentence, b)):
                continue  # one side alone quotes it better: a one-page source says it
            joined = dict(a, page_start=min(ua["page_start"] or 0, ub["page_start"] or 0) or ua["page_start"],
                          page_end=max(ua["page_end"] or 0, ub["page_end"] or 0) or ub["page_end"],
                          quote=q, text_unit_ids=[ua["id"], ub["id"]], via=f"{a['via']}; {b['via']}",
                          score=round(max(float(a["score"]), float(b["score"])), 4),
                          char_start=a_off + q0 if a_off is not None else None,
                          char_end=b_off + (q1 - cut) if b_off is not None else None)
            ranked[i] = (max(score, score_b), order, joined)
            merged.add(j)
            break
    return [r for k, r in enumerate(ranked) if k not in merged]


def _quote_lex(sentence: str, source: dict) -> float:
    from provrag.text.similarity import lexical_score

    return lexical_score(sentence, source.get("quote") or "")


def seam_text(a: dict, b: dict):
    """(text, cut, doc offset of text[0], doc offset of text[cut]) around the boundary where
    unit b follows unit a in one document, or None when they are not neighbours. Overlapping
    units (the chunker's overlap) contribute the overlap once; a gap of a few characters
    between them (a page break) is whitespace in the document and is kept as newlines."""
    if a["document_id"] != b["document_id"] or None in (a["char_start"], b["char_start"]):
        return None
    ta, tb = a["text"] or "", b["text"] or ""
    a0, b0 = int(a["char_start"]), int(b["char_start"])
    a1 = a0 + len(ta)
    if not (a0 < b0 <= a1 + 4 and b0 + len(tb) > a1):
        return None
    head = ta[max(0, len(ta) - _SEAM_CHARS):]
    skip = max(0, a1 - b0)                     # b's copy of the overlap
    gap = "\n" * max(0, b0 - a1)
    tail = tb[skip:skip + _SEAM_CHARS]
    text = head + gap + tail
    cut = len(head) + len(gap)
    return text, cut, a1 - len(head), b0 + skip


def _opening(text: str) -> tuple[str, int, int, float]:
    """No sentence to match (a bare citation): quote the unit's first sentence-ish span."""
    from provrag.text.similarity import spans

    sp = spans(text)
    if not sp:
        return "", 0, 0, 0.0
    s0, s1 = sp[0]
    return text[s0:s1], s0, s1, 0.0


def _join_vias(vias: list[str], hrid) -> str:
    parts = list(OrderedDict.fromkeys(f"{v} → text unit {hrid}" for v in vias))
    return "; ".join(parts[:3]) + (f"; +{len(parts) - 3} more routes" if len(parts) > 3 else "")


# ---- entry points -------------------------------------------------------------------------

def _resolve_groups(reader, groups: list[tuple[int, str, list[Ref]]], top_k: int):
    """Resolve many (sentence_index, sentence, refs) at once: shared queries, per-sentence ranking."""
    wanted: dict[str, set[int]] = {k: set() for k in KINDS}
    for _, _, refs in groups:
        for r in refs:
            if r.kind in wanted:
                wanted[r.kind].update(r.ids)
    lk = _lookups(reader)
    found, missing = _expand(reader, wanted, lk)

    # candidate units per sentence, in citation order, with every route that reached them
    per_sentence = []
    all_ids: set[str] = set()
    for n, (idx, sentence, refs) in enumerate(groups):
        cands: OrderedDict[str, list[str]] = OrderedDict()
        for r in refs:
            for i in r.ids:
                for uid, via in found.get((r.kind, i), []):
                    cands.setdefault(uid, []).append(via)
        if len(cands) > MAX_CANDIDATES:
            keep = set(_prefilter(reader, list(cands), sentence, MAX_CANDIDATES, f"p{n}"))
            cands = OrderedDict((k, v) for k, v in cands.items() if k in keep)
        per_sentence.append(cands)
        all_ids.update(cands)

    ids = sorted(all_ids)
    units = _fetch_units(reader, ids, lk)
    qvecs, vecs = [None] * len(groups), {}
    emb = reader.embedder() if ids else None
    if emb is not None:
        try:
            vecs = _vectors(reader, ids)
            texts = [s or " " for _, s, _ in groups]
            m = emb.embed(texts)
            qvecs = [m[i] for i in range(len(groups))]
        except Exception:  # embeddings are a bonus: lexical ranking stands on its own
            qvecs, vecs = [None] * len(groups), {}

    sources, unresolved, dead_ends = [], [], []
    for (idx, sentence, refs), cands, qvec in zip(groups, per_sentence, qvecs):
        sources.extend(_rank(sentence, cands, units, qvec, vecs, top_k, idx))
        seen = set()
        for r in refs:
            for i in r.ids:
                if (r.kind, i) in seen:
                    continue
                seen.add((r.kind, i))
                if (r.kind, i) in missing:
                    unresolved.append({"kind": r.kind, "id": i, "sentence_index": idx,
                                       "reason": _why_missing(reader, r.kind)})
                elif not any(uid in units for uid, _ in found.get((r.kind, i), [])):
                    dead_ends.append({"kind": r.kind, "id": i, "sentence_index": idx})
    return sources, unresolved, dead_ends


def _why_missing(reader, kind: str) -> str:
    table = {"Reports": "community_reports", "Entities": "entities", "Relationships": "relationships",
             "Claims": "covariates", "Sources": "text_units"}[kind]
    if reader.tables.get(table) is None:
        return f"this index has no {table} table"
    return f"no such id in {table}"


def resolve_refs(reader, refs: list[Ref], sentence: str, top_k: int = 3,
                 sentence_index: int | None = None) -> tuple[list[dict], list[dict]]:
    """Sources (best first, at most top_k) and unresolved ids for one cited sentence."""
    sources, unresolved, _ = _resolve_groups(reader, [(sentence_index, sentence or "", list(refs))],
                                             max(1, int(top_k)))
    return sources, unresolved


def resolve_answer(reader, answer_text: str, top_k: int = 3, parsed: ParseResult | None = None) -> dict:
    """The `ask --json` shape (CONTRACT.md §5) without question/trace_id/method, plus the
    parser's problems and ids that exist but lead to no text unit (`dead_ends`)."""
    answer_text = answer_text if isinstance(answer_text, str) else ("" if answer_text is None else str(answer_text))
    parsed = parsed or parse_citations(answer_text)
    citations, groups = [], OrderedDict()
    for b in parsed.blocks:
        g = groups.setdefault(b.sentence_index, (b.sentence, []))
        for r in b.refs:
            citations.append({"kind": r.kind, "ids": list(r.ids), "more": r.more,
                              "sentence": b.sentence, "sentence_index": b.sentence_index})
            g[1].append(r)
    sources, unresolved, dead_ends = _resolve_groups(
        reader, [(i, s, refs) for i, (s, refs) in groups.items()], max(1, int(top_k)))
    return {
        "answer": answer_text,
        "citations": citations,
        "sources": sources,
        "unresolved": unresolved,
        "dead_ends": dead_ends,
        "problems": [p.to_dict() for p in parsed.problems],
        "index": {"path": str(reader.path), "kind": reader.kind, "has_pages": reader.has_pages},
    }
