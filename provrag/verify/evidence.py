"""One claim against an index: evidence by two routes, one verdict per unit.

- *cited* evidence: the text units the claim's own `[Data: …]` citations reach (CONTRACT.md §4,
  through provrag/query/resolve.py), resolved one citation id at a time so each id's
  contribution is known (ALCE's citation precision needs it), the best `top_k_cited` per id by
  claim-aware ranking;
- *retrieved* evidence: the top `top_k_retrieved` units of the whole index by hybrid retrieval
  (provrag/query/retrieve.py: BM25 + embeddings), so a true claim with a wrong citation — or
  none — is still found;
- *seams*: a claim made of a sentence that runs from one page onto the next lies whole in
  neither unit, so the text around the boundary of two neighbouring units is judged too, and
  kept where it supports the claim better than either unit alone.

Every unit is judged on its own (its best span; never one joined premise, which would lose the
page); provrag/verify/verdicts.py turns the verdicts into the claim's.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from provrag.config import Config
from provrag.results import ClaimCheck, Evidence, Verdict
from provrag.store.units import UnitRow, fetch_units
from provrag.text.tables import ReadingCopy, reading_copy
from provrag.verify.claims import Claim
from provrag.verify.verdicts import Judge, claim_verdict, rank_evidence

NOT_RETRIEVED = 1 << 30   # the rank of a seam part that retrieval did not find


@dataclass
class Seam:
    """The text around the boundary of two units that follow each other in one document, as
    a unit row of its own: the first unit's row (its id, document and first page) with the
    joined text, that text's offset in the document, and the second unit's last page."""

    key: str                    # "a+b": the seam's name among the claim's units
    row: UnitRow
    parts: tuple[str, str]      # the two unit ids, in document order
    cut: int                    # where in row.text the second unit begins


def seam_units(units: dict[str, UnitRow]) -> list[Seam]:
    """A seam for each pair of the given units that follow each other in one document
    (resolve.seam_text: the overlap once, a page break kept as the whitespace it is)."""
    from provrag.query.resolve import seam_text

    by_doc: dict = {}
    for u in units.values():
        if u.char_start is not None and u.document_id is not None:
            by_doc.setdefault(u.document_id, []).append(u)
    out = []
    for us in by_doc.values():
        us.sort(key=lambda u: u.char_start)
        for a, b in zip(us, us[1:]):
            seam = seam_text(a, b)
            if seam is None:
                continue
            text, cut, offset, _ = seam
            row = replace(a, text=text, char_start=offset, char_end=offset + len(text), page_end=b.page_end,
                          ocr_pages=sorted(set(a.ocr_pages or []) | set(b.ocr_pages or [])))
            out.append(Seam(f"{a.id}+{b.id}", row, (a.id, b.id), cut))
    return out


def judged_text(row: UnitRow, copy: ReadingCopy | None = None) -> tuple[str, int]:
    """The text the judge reads for a unit: its pages' running heads on a line above its own
    text (its tables read row by row under their headers, text/tables.reading_copy), and where
    that text starts in it. A reader reads a page under its running head
    ("Debian Policy Manual, Release 4.6.2.0"), and so did the judge while the heads stood in the
    text. Taken out of it ([load] running_heads), they took the page's subject from the judge:
    Policy's "The single line synopsis of a Debian package should be kept brief…" was no longer
    supported by p. 26, which names "the package" and never "Debian" (tests/verify/
    test_running_heads_judged.py; bench/results/running-heads-2026-11-30.md)."""
    head, body = row.running_head, (copy or reading_copy(row.text)).text
    return (f"{head}\n{body}", len(head) + 1) if head else (body, 0)


def judge_rows(judge: Judge, claim: Claim, rows: dict[str, UnitRow]) -> dict[str, Verdict]:
    """The judge's verdict on the claim of each row, read under its running heads (judged_text),
    each span an offset into the row's own text (a span inside the heads alone names none of it).

    A table is read row by row under its header: read as one run of cells, "Dana Whitlock's phone
    number is 0555 0101" was supported by a contacts table where 0555 0101 is Helga Marsh's."""
    copies = {key: reading_copy(row.text) for key, row in rows.items()}
    texts = {key: judged_text(row, copies[key]) for key, row in rows.items()}
    verdicts = judge(claim, {key: text for key, (text, _) in texts.items()})
    out = {}
    for key, v in verdicts.items():
        shift = texts[key][1]
        if v.span is not None and (shift or copies[key].rows):
            a, b = copies[key].original_span(*(max(0, x - shift) for x in v.span))
            v = replace(v, span=(a, b) if b > a else (0, 0))
        out[key] = v
    return out


def retrieve(reader, query: str, cfg: Config, k: int) -> tuple[list[tuple[str, float]], list[dict]]:
    """Top-k (unit id, score) by hybrid retrieval, and why each ranks there (query/why.py: one
    record per unit). When the fused scores are not numbers (a query whose words are all
    outside the embedder's vocabulary embeds to a zero vector, and a zero vector's cosine is
    NaN, which breaks the ranking) the BM25 channel alone ranks, and no why is kept."""
    import math

    from provrag.query.retrieve import retrieve_units
    from provrag.store import terms as lexical

    try:
        r = retrieve_units(reader, query, cfg, k=k)
        out = [(c["text_unit_id"], float(c.get("score") if c.get("score") is not None else 0.0)) for c in r.candidates]
        why = [{"text_unit_id": c["text_unit_id"], "id": c["human_readable_id"], "document": c["document"],
                "page_start": c["page_start"], "page_end": c["page_end"], "why": c.get("why")} for c in r.candidates]
    except Exception:  # no term table and no embeddings: cited evidence still stands
        out, why = [], []
    if any(not math.isfinite(s) for _, s in out):
        why = []
        try:
            stats = lexical.ensure_terms(reader.con, getattr(reader, "path", None))
            terms, _ = lexical.match_terms(reader.con, query)
            out = [(u, float(s)) for u, s in lexical.bm25(reader.con, stats, terms, limit=k)]
        except Exception:
            out = [(u, s) for u, s in out if math.isfinite(s)]
    return out, why


def cited_units(reader, claim: Claim, k: int) -> tuple[list[tuple[str, int, list[tuple[str, str]]]], list[dict]]:
    """The claim's citations, each id resolved on its own (all in one pass):
    [(kind, id, [(unit id, via)])] — the units each id reaches, best `k` first — and the ids the
    index does not hold."""
    from provrag.query.citations import Ref
    from provrag.query.resolve import resolve_each

    one_each = [Ref(ref.kind, [i]) for ref in claim.refs for i in dict.fromkeys(ref.ids)]
    try:
        resolved = resolve_each(reader, one_each, claim.text, top_k=k)
    except Exception:  # a broken table must not take the whole check down: one id at a time says which
        resolved = [_resolve_alone(reader, ref, claim.text, k) for ref in one_each]
    per_citation: list[tuple[str, int, list[tuple[str, str]]]] = []
    unresolved: list[dict] = []
    for ref, (sources, unres) in zip(one_each, resolved):
        unresolved.extend({"kind": u.kind, "id": u.id, "sentence_index": u.sentence_index, "reason": u.reason}
                          for u in unres)
        per_citation.append((ref.kind, ref.ids[0], [(s.text_unit_id, s.via or "") for s in sources]))
    return per_citation, unresolved


def _resolve_alone(reader, ref, text: str, k: int) -> tuple[list, list]:
    """One id's sources, or none with the error as its unresolved reason."""
    from provrag.query.resolve import resolve_refs
    from provrag.results import Unresolved

    try:
        return resolve_refs(reader, [ref], text, top_k=k)
    except Exception as e:
        return [], [Unresolved(ref.kind, ref.ids[0], None, str(e).splitlines()[0][:120])]


def evidence_of(row: UnitRow, verdict: Verdict, via: str, route: str, parts: tuple[str, str] | None = None) -> Evidence:
    """A judged unit (or seam) as evidence: its best span as the quote, shown on one line."""
    from provrag.text.sentences import display_quote

    a, b = verdict.span
    # one line, as shown; a page number inside a quote across two pages reads as the break it is
    quote = display_quote(row.text[a:b] if b > a else row.text[:300], row.page_end not in (None, row.page_start))
    return Evidence.of_unit(row, quote, a if b > a else None, b if b > a else None, via=via, score=verdict.score,
                            label=verdict.label, reason=verdict.reason, route=route,
                            # a seam (a quote across two units) names the unit it starts in, and lists both
                            text_unit_ids=list(parts) if parts else None)


def check_claim(reader, claim: Claim, judge: Judge, cfg: Config, retrievals: list | None = None,
                cited_only: bool = False, cited: tuple | None = None) -> ClaimCheck:
    """One claim → its verdict, cited and retrieved evidence, and per-citation support.
    `retrievals`: where to append what retrieval did for the claim (its query and each
    retrieved unit's why), for the verify trace. `cited_only`: judge the claim against the
    sources it cites alone (ask's answer check: what the answer shows must be what its
    citations hold), no retrieval. `cited`: cited_units' answer for the claim, when the caller
    has it already."""
    vcfg = cfg.verify
    per_citation, unresolved = cited if cited is not None else cited_units(reader, claim, int(vcfg.top_k_cited))
    query = claim.text if not claim.focus else f"{claim.text} {claim.focus}"
    retrieved, why = ([], []) if cited_only else retrieve(reader, query, cfg, int(vcfg.top_k_retrieved))
    if retrievals is not None:
        retrievals.append({"claim": claim.text, "query": query, "candidates": why})

    ids = [uid for _, _, us in per_citation for uid, _ in us] + [uid for uid, _ in retrieved]
    rows = fetch_units(reader, ids)
    order = [uid for uid in dict.fromkeys(ids) if uid in rows]
    verdicts = judge_rows(judge, claim, {uid: rows[uid] for uid in order})

    cited_vias: dict[str, list[str]] = {}
    for _, _, us in per_citation:
        for uid, via in us:
            if uid in rows:
                cited_vias.setdefault(uid, []).append(via)
    retrieved_rank = {uid: n + 1 for n, (uid, _) in enumerate(retrieved) if uid in rows}

    # a claim cut by a page break is whole only across two neighbouring units: judge the seam,
    # and keep it where it supports the claim better than either unit alone
    seams = seam_units(rows)
    seam_verdicts = judge_rows(judge, claim, {s.key: s.row for s in seams})
    seam_parts: dict[str, tuple[str, str]] = {}
    seam_support: set[str] = set()   # units whose seam with a neighbour supports the claim
    for s in seams:
        v = seam_verdicts[s.key]
        if v.label != "supported" or not v.span[0] < s.cut < v.span[1] \
                or any(verdicts[p].label == "supported" and verdicts[p].score >= v.score for p in s.parts):
            continue  # not supported, not across the boundary, or one unit says it as well
        rows[s.key], verdicts[s.key], seam_parts[s.key] = s.row, v, s.parts
        order.append(s.key)
        a, b = s.parts
        if a in cited_vias or b in cited_vias:
            cited_vias[s.key] = cited_vias.get(a, []) + cited_vias.get(b, [])
        if a in retrieved_rank or b in retrieved_rank:
            retrieved_rank[s.key] = min(retrieved_rank.get(a, NOT_RETRIEVED), retrieved_rank.get(b, NOT_RETRIEVED))
        seam_support.update(s.parts)  # the citations of either part take part in the support

    def evidence(key: str, via: str, route: str) -> Evidence:
        return evidence_of(rows[key], verdicts[key], via, route, seam_parts.get(key))

    cited = rank_evidence([evidence(u, "; ".join(dict.fromkeys(v))[:300], "cited") for u, v in cited_vias.items()])
    found = []
    for u in order:
        route = "both" if u in cited_vias and u in retrieved_rank else ("cited" if u in cited_vias else "retrieved")
        via = "; ".join(dict.fromkeys(cited_vias.get(u, [])))[:300]
        if u in retrieved_rank:
            via = (via + "; " if via else "") + f"retrieved #{retrieved_rank[u]} (hybrid search)"
        found.append(evidence(u, via, route))

    # "from_paragraph": the claim carries no block of its own; the one closing its paragraph backs it
    citations = [{"kind": kind, "id": i,
                  "supports": any(uid in seam_support or (uid in verdicts and verdicts[uid].label == "supported")
                                  for uid, _ in us),
                  "from_paragraph": claim.from_paragraph}
                 for kind, i, us in per_citation]
    return ClaimCheck(
        text=claim.text,
        verdict=claim_verdict([e.label for e in cited], [verdicts[u].label for u in order]),
        score=max((v.score for v in verdicts.values()), default=0.0),
        method=judge.method,
        cited=cited,
        evidence=rank_evidence(found),
        cited_supports=any(e.label == "supported" for e in cited),
        citations=citations,
        unresolved=unresolved,
        focus=claim.focus,
        span=tuple(claim.span),
    )
