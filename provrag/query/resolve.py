"""Citation → text units → document + page + quote, ranked by support for the citing sentence.

The chain is CONTRACT.md §4. A Report expands to every text unit of its community — dozens
to thousands, most irrelevant to the sentence that cited it (GraphRAG #1988) — so the
candidates of each cited sentence are ranked by how well they support that sentence:

    score = 0.6 · lexical(sentence, unit) + 0.4 · lexical(sentence, best span)           (no vectors)
    score = 0.45 · lexical(unit) + 0.25 · lexical(best span) + 0.30 · max(0, cosine)  (provrag index)

and the top k are listed with their document, pages, the best span as the quote, and the
route that reached them (`Report 4 → community 4 → text unit 12`). A report cited together
with units of its own community (`[Data: Reports (4); Sources (12)]`, a finding and the unit
it quotes) resolves to those units only: the report says where the statement sits, the unit
which page says it.

Speed on a million units comes from DuckDB and from batching: every lookup is one SQL query
over the parquet views with the ids inlined as an IN list (pushed into the scan); all cited
sentences of an answer are resolved together (one query per citation kind, two for the
candidate units: ids → row positions, then the rows at those positions, so the text column
is decoded only where a candidate sits); only candidate rows reach Python, where a cheap
substring pass narrows each sentence's candidates before the real scoring. A sentence with
more than `MAX_CANDIDATES` candidates (a huge community) is pre-ranked inside DuckDB first.
Cited ids become candidate units in provrag/query/expand.py (with the lookup tables a reader
that resolves again builds); unit rows come from provrag/store/units.py; every source is a
`provrag.results.Source` built by `Source.of_unit`. bench/resolve_speed.py measures all of it
on a synthetic million-unit index against the pandas recipe.

GraphRAG before v2.6 numbered `Sources (n)` by the unit's row position, not by
human_readable_id (GraphRAG #1871): for graphrag-v1/v2 indexes both readings are candidates
and the claim-aware ranking decides; the id is unresolved only if neither exists.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from provrag.query.citations import KINDS, ParseResult, Ref, parse_citations
from provrag.query.expand import Lookups, expand, lookups, prefilter
from provrag.results import Citation, ResolveResult, Source, Unresolved
from provrag.store.units import UnitRow, fetch_units, sql_in
from provrag.text.similarity import best_span, content_words, lexical_score

MAX_CANDIDATES = 2000    # candidate units per sentence whose text is fetched into Python
# the ranking passes look at max(top_k × factor, floor) candidates, so the top result does
# not depend on how many results were asked for
_SCORE_POOL = (8, 24)    # full lexical score on this many (by stem-substring count)
_SPAN_POOL = (2, 8)      # best_span (the quote) on this many (by lexical score)


# ---- candidate rows and their vectors -------------------------------------------------------

def unit_vectors(reader, unit_ids: list[str]) -> dict:
    """{unit id: its stored embedding (numpy)} for the units that have one ({} without embeddings)."""
    if reader.tables.get("embeddings") is None or not unit_ids:
        return {}
    import numpy as np

    from provrag.store.vectors import opened

    ann = opened(getattr(reader, "path", None))
    if ann is not None:  # the memory-mapped vectors (store/vectors.py): no scan of embeddings.parquet
        return ann.vectors_of(list(unit_ids))

    rows = reader.con.execute(
        f"SELECT id, vector FROM embeddings WHERE {sql_in(reader.con, 'id', unit_ids, 'vec')}").fetchall()
    return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows if r[1] is not None}


# ---- ranking ---------------------------------------------------------------------------------

def _rank(sentence: str, cands: "OrderedDict[str, list[str]]", units: dict[str, UnitRow], qvec, vecs: dict,
          top_k: int, sentence_index, lowered: dict[str, str]) -> list[Source]:
    """Top-k sources for one sentence. Three passes, each on fewer units: a substring count
    of the sentence's word stems in every candidate (C-speed `in`, no tokenising), then the
    full lexical score on the best `_SCORE_POOL`, then best_span (the quote) on the best few.
    `lowered`: the candidates' lower-cased text, shared by all sentences of one resolution."""
    from provrag.text.words import stem as fold

    words = sorted(set(content_words(sentence))) if sentence else []
    keys = [(w, fold(w)) for w in words]
    pre = []
    for order, uid in enumerate(cands):
        u = units.get(uid)
        if u is None:
            continue
        low = lowered.get(uid)
        if low is None:
            low = lowered[uid] = u.text.lower()
        hits = sum(1 for w, st in keys if st in low or w in low) / len(keys) if keys else 0.0
        cos = None
        if qvec is not None and uid in vecs and vecs[uid].shape == qvec.shape:
            cos = max(0.0, float(vecs[uid] @ qvec))
        # ties go to the lower human_readable_id: the same order whichever way the ids came
        order = (u.human_readable_id if u.human_readable_id is not None else 1 << 62, order)
        pre.append(((hits if cos is None else 0.6 * hits + 0.4 * cos), order, uid, cos))
    pre.sort(key=lambda x: (-x[0], x[1]))
    scored = []
    for _, order, uid, cos in pre[: max(top_k * _SCORE_POOL[0], _SCORE_POOL[1])]:
        lex = lexical_score(sentence, units[uid].text) if sentence else 0.0
        scored.append(((lex if cos is None else 0.6 * lex + 0.4 * cos), order, uid, lex, cos))
    scored.sort(key=lambda x: (-x[0], x[1]))
    out = []
    for _, order, uid, lex, cos in scored[: max(top_k * _SPAN_POOL[0], _SPAN_POOL[1])]:
        u = units[uid]
        if sentence:
            q, q0, q1, span = best_span(sentence, u.text)
        else:
            q, q0, q1, span = _opening(u.text)
        score = (0.6 * lex + 0.4 * span) if cos is None else (0.45 * lex + 0.25 * span + 0.30 * cos)
        src = Source.of_unit(u, q, q0 if q else None, q1 if q else None, via=_join_vias(cands[uid], u.human_readable_id),
                             score=round(float(score), 4), sentence_index=sentence_index)
        out.append((score, order, src))
    out.sort(key=lambda x: (-x[0], x[1]))
    if sentence:
        out = _join_seams(sentence, out, units)
    return [s for _, _, s in out[:top_k]]


_SEAM_CHARS = 600   # text taken from each side of a unit boundary when a quote may cross it


def _join_seams(sentence: str, ranked: list[tuple], units: dict[str, UnitRow]) -> list[tuple]:
    """Two ranked units that follow each other in one document, where the sentence is quoted
    best by a span crossing their boundary (a sentence cut by a page break or by the chunker),
    become one source over both pages with that span as the quote: "which page says that"
    is then "pages 7–8", not whichever half matched better."""
    merged: set[int] = set()
    for i, (score, order, a) in enumerate(ranked):
        if i in merged:
            continue
        ua = units[a.text_unit_id]
        for j, (score_b, _, b) in enumerate(ranked):
            if j == i or j in merged:
                continue
            ub = units[b.text_unit_id]
            seam = seam_text(ua, ub)
            if seam is None:
                continue
            text, cut, a_off, b_off = seam
            q, q0, q1, lex = best_span(sentence, text)
            if not (q0 < cut < q1):
                continue
            if lex < max(lexical_score(sentence, a.quote or ""), lexical_score(sentence, b.quote or "")):
                continue  # one side alone quotes it better: a one-page source says it
            joined = replace(a, page_start=min(ua.page_start or 0, ub.page_start or 0) or ua.page_start,
                             page_end=max(ua.page_end or 0, ub.page_end or 0) or ub.page_end,
                             quote=q, text_unit_ids=[ua.id, ub.id], via=f"{a.via}; {b.via}",
                             ocr_pages=sorted(set(ua.ocr_pages or []) | set(ub.ocr_pages or [])),
                             score=round(max(float(a.score), float(b.score)), 4),
                             char_start=a_off + q0 if a_off is not None else None,
                             char_end=b_off + (q1 - cut) if b_off is not None else None)
            ranked[i] = (max(score, score_b), order, joined)
            merged.add(j)
            break
    return [r for k, r in enumerate(ranked) if k not in merged]


def seam_text(a: UnitRow, b: UnitRow) -> tuple[str, int, int, int] | None:
    """(text, cut, doc offset of text[0], doc offset of text[cut]) around the boundary where
    unit b follows unit a in one document, or None when they are not neighbours. Overlapping
    units (the chunker's overlap) contribute the overlap once; a gap of a few characters
    between them (a page break) is whitespace in the document and is kept as newlines.
    verify judges a claim cut by a page break on this text too (provrag/verify/evidence.py)."""
    if a.document_id != b.document_id or None in (a.char_start, b.char_start):
        return None
    ta, tb = a.text, b.text
    a0, b0 = int(a.char_start), int(b.char_start)
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

def _resolve_groups(reader, groups: list[tuple[int | None, str, list[Ref]]], top_k: int):
    """Resolve many (sentence_index, sentence, refs) at once: shared queries, per-sentence ranking."""
    wanted: dict[str, set[int]] = {k: set() for k in KINDS}
    for _, _, refs in groups:
        for r in refs:
            if r.kind in wanted:
                wanted[r.kind].update(r.ids)
    lk = lookups(reader)
    found, missing = expand(reader, wanted, lk)

    # candidate units per sentence, in citation order, with every route that reached them
    per_sentence = []
    all_ids: set[str] = set()
    for n, (idx, sentence, refs) in enumerate(groups):
        cands: OrderedDict[str, list[str]] = OrderedDict()
        # a report cited with the text units it quotes ("[Data: Reports (4); Sources (12)]": report
        # 4's finding, quoted from unit 12) resolves to those units, not to its whole community
        quoted = {uid for r in refs if r.kind == "Sources" for i in r.ids for uid, _ in found.get(("Sources", i), [])}
        for r in refs:
            for i in r.ids:
                routes = found.get((r.kind, i), [])
                if r.kind == "Reports" and quoted and any(uid in quoted for uid, _ in routes):
                    routes = [(uid, via) for uid, via in routes if uid in quoted]
                for uid, via in routes:
                    cands.setdefault(uid, []).append(via)
        if len(cands) > MAX_CANDIDATES:
            keep = set(prefilter(reader, list(cands), sentence, MAX_CANDIDATES, f"p{n}"))
            cands = OrderedDict((k, v) for k, v in cands.items() if k in keep)
        per_sentence.append(cands)
        all_ids.update(cands)

    ids = sorted(all_ids)
    units = fetch_units(reader, ids, positions=Lookups.UNITS if lk else "text_units")
    qvecs, vecs = [None] * len(groups), {}
    emb = reader.embedder() if ids else None
    if emb is not None:
        try:
            vecs = unit_vectors(reader, ids)
            texts = [s or " " for _, s, _ in groups]
            m = emb.embed(texts)
            qvecs = [m[i] for i in range(len(groups))]
        except Exception:  # embeddings are a bonus: lexical ranking stands on its own
            qvecs, vecs = [None] * len(groups), {}

    sources: list[Source] = []
    unresolved: list[Unresolved] = []
    dead_ends: list[dict] = []
    lowered: dict[str, str] = {}
    for (idx, sentence, refs), cands, qvec in zip(groups, per_sentence, qvecs):
        sources.extend(_rank(sentence, cands, units, qvec, vecs, top_k, idx, lowered))
        seen = set()
        for r in refs:
            for i in r.ids:
                if (r.kind, i) in seen:
                    continue
                seen.add((r.kind, i))
                if (r.kind, i) in missing:
                    unresolved.append(Unresolved(r.kind, i, idx, _why_missing(reader, r.kind, i)))
                elif not any(uid in units for uid, _ in found.get((r.kind, i), [])):
                    dead_ends.append({"kind": r.kind, "id": i, "sentence_index": idx})
    return sources, unresolved, dead_ends


def _why_missing(reader, kind: str, number: int) -> str:
    """Why a cited number resolves to nothing: no such table, an id retired by a later run of
    the index (its content is gone: never another unit's text), or no such id at all."""
    from provrag.query.since import id_history

    table = {"Reports": "community_reports", "Entities": "entities", "Relationships": "relationships",
             "Claims": "covariates", "Sources": "text_units"}[kind]
    if reader.tables.get(table) is None:
        return f"this index has no {table} table"
    history = id_history(reader)
    retired = history.retired_reason(kind, number) if history is not None else None
    return retired or f"no such id in {table}"


def resolve_refs(reader, refs: list[Ref], sentence: str, top_k: int = 3,
                 sentence_index: int | None = None) -> tuple[list[Source], list[Unresolved]]:
    """Sources (best first, at most top_k) and unresolved ids for one cited sentence."""
    sources, unresolved, _ = _resolve_groups(reader, [(sentence_index, sentence or "", list(refs))],
                                             max(1, int(top_k)))
    return sources, unresolved


def resolve_each(reader, refs: list[Ref], sentence: str, top_k: int = 3) -> list[tuple[list[Source], list[Unresolved]]]:
    """`resolve_refs(reader, [ref], sentence, top_k)` for each ref on its own, in order, in one
    resolution: the ids' routes, their units and the sentence's vector are read once for all of
    them (verify resolves a claim's citations one id at a time, ~3 ids a claim)."""
    groups = [(n, sentence or "", [ref]) for n, ref in enumerate(refs)]
    sources, unresolved, _ = _resolve_groups(reader, groups, max(1, int(top_k)))
    out: list[tuple[list[Source], list[Unresolved]]] = [([], []) for _ in refs]
    for src in sources:
        out[src.sentence_index][0].append(replace(src, sentence_index=None))
    for u in unresolved:
        out[u.sentence_index][1].append(replace(u, sentence_index=None))
    return out


def resolve_answer(reader, answer_text: str, top_k: int = 3, parsed: ParseResult | None = None) -> ResolveResult:
    """Every citation of the answer with its sources (CONTRACT.md §5's shape without
    question/trace_id/method), plus the parser's problems and ids that exist but lead to no
    text unit (`dead_ends`)."""
    answer_text = answer_text if isinstance(answer_text, str) else ("" if answer_text is None else str(answer_text))
    parsed = parsed or parse_citations(answer_text)
    citations: list[Citation] = []
    groups: OrderedDict[int, tuple[str, list[Ref]]] = OrderedDict()
    for b in parsed.blocks:
        g = groups.setdefault(b.sentence_index, (b.sentence, []))
        for r in b.refs:
            citations.append(Citation(r.kind, list(r.ids), r.more, b.sentence, b.sentence_index))
            g[1].append(r)
    sources, unresolved, dead_ends = _resolve_groups(
        reader, [(i, s, refs) for i, (s, refs) in groups.items()], max(1, int(top_k)))
    return ResolveResult(answer=answer_text, citations=citations, sources=sources, unresolved=unresolved,
                         dead_ends=dead_ends, problems=[p.to_dict() for p in parsed.problems],
                         index={"path": str(reader.path), "kind": reader.kind, "has_pages": reader.has_pages})
