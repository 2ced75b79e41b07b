"""The web app's view models: the service's typed results (their `to_json()` dicts) arranged for
the templates — never a figure computed again, only placed.

- `answer_segments`: the answer cut into plain text, claims (each with the verdict verify gave
  it, where a verify result is there) and citation chips. A chip names one source a citation
  block reached (document and page), and opens it; a run of consecutive blocks citing the same
  ids shows its chips once, after the run (views/citing.py, the same rule as the terminal).
- `confidence_words`: ask's confidence (the estimate that the best passage answers the
  question, query/answerable.py) said in words beside the number.
- `source_facts`, `evidence_href`: how a source is named (document, physical page, printed
  label, OCR) and the URL of the evidence view that shows it.

Text is never turned into HTML here: the templates escape every value (autoescape), so text
from a document, an answer or a trace reaches the page as text.
"""
from __future__ import annotations

from urllib.parse import urlencode

from provrag.audit.answer import claim_spans
from provrag.audit.markup import as_text, verdict_of
from provrag.results import listed_not_cited
from provrag.store.provenance import routes_of
from provrag.views.citing import repeated_blocks

CHIPS_SHOWN = 4          # chips per citation block; the rest are counted ("+3 more")
VERDICT_WORDS = {"supported": ("✓", "supported", "its sources say this"),
                 "contradicted": ("✗", "contradicted", "its sources say otherwise"),
                 "unsupported": ("!", "not supported", "no source found says this")}


def page_words(src: dict) -> str:
    """"page 48 (printed 44)", "pages 3–4", "page 2 (text read by OCR)", or "" (no pages)."""
    p0, p1, label = src.get("page_start"), src.get("page_end"), src.get("page_label")
    if p0 is None:
        return ""
    s = f"page {p0}" if p1 in (None, p0) else f"pages {p0}–{p1}"
    if label not in (None, "", str(p0)):
        s += f" (printed {label})"
    return s + (" (text read by OCR)" if src.get("ocr") else "")


def chip_label(src: dict) -> str:
    """A chip's text: the document and where in it ("R-FAQ p. 48", "notes unit 12")."""
    doc = as_text(src.get("document") or src.get("path") or "?")
    p0, p1 = src.get("page_start"), src.get("page_end")
    if p0 is None:
        return f"{doc} unit {src.get('text_unit')}" if src.get("text_unit") is not None else doc
    return f"{doc} p. {p0}" if p1 in (None, p0) else f"{doc} pp. {p0}–{p1}"


def evidence_href(src: dict, page: int | None = None) -> str:
    """The evidence view of a source: its page (or `page`) with its quote highlighted."""
    params = {"unit": as_text(src.get("text_unit_id"))}
    p = page if page is not None else src.get("page_start")
    if p is not None:
        params["page"] = str(p)
    if src.get("quote"):
        params["quote"] = as_text(src.get("quote"))[:2000]
    return "/evidence?" + urlencode(params)


def source_facts(src: dict, n: int | None = None, route: str | None = None) -> dict:
    """One source as the templates list it (every value straight from the result). A passage
    listed but not cited (an abstention's closest, an answer's further ones) has no score to show:
    its 0 would read as a judgement."""
    listed = listed_not_cited(src)
    return {"n": n, "document": as_text(src.get("document") or src.get("path") or "?"), "path": src.get("path"),
            "pages": page_words(src), "quote": as_text(src.get("quote")), "via": src.get("via"),
            "score": None if listed else src.get("score"), "href": evidence_href(src), "label": chip_label(src), "route": route,
            "verdict": src.get("label"), "reason": src.get("reason"), "text_unit_id": src.get("text_unit_id")}


def _chips_for(block, pool: list[dict], unresolved: list[dict]) -> list[dict]:
    cited = {(r.kind, i) for r in block.refs for i in r.ids}
    chips, seen = [], set()
    for s in pool:   # one chip per unit: claims citing one unit each have their own quote of it
        if cited & routes_of(s.get("via")) and s.get("text_unit_id") not in seen:
            seen.add(s.get("text_unit_id"))
            chips.append({"label": chip_label(s), "href": evidence_href(s), "unit": s.get("text_unit_id"),
                          "title": f"{as_text(s.get('document'))} {page_words(s)}: {as_text(s.get('via'))}".strip()})
    missing = [u for u in unresolved if (u.get("kind"), u.get("id")) in cited]
    for u in missing:
        chips.append({"label": f"{u.get('kind')} {u.get('id')}: not in this index", "href": None,
                      "title": as_text(u.get("reason") or "the index holds no such id"), "unresolved": True})
    return chips


def answer_segments(answer: str, sources: list[dict], unresolved: list[dict] | None = None,
                    claims: list[dict] | None = None) -> list[dict]:
    """The answer as segments {"t": "text"|"claim"|"chips", …} in order (see the module docstring).

    sources: ask's sources, or for a verify result each claim's cited evidence is used per claim;
    claims: a verify result's claims (their verdicts mark the sentences), or None."""
    from provrag.query.citations import parse_citations

    answer = as_text(answer)
    blocks = parse_citations(answer).blocks
    hidden = repeated_blocks(blocks)
    claims = [c for c in claims or [] if isinstance(c, dict)]
    spans = claim_spans(answer, claims) if claims else []
    segs: list[dict] = []

    def text(a: int, b: int) -> None:
        pos = a
        for ca, cb, i in spans:
            if cb <= pos or ca >= b:
                continue
            if ca > pos:
                segs.append({"t": "text", "text": answer[pos:ca]})
            s, e = max(ca, pos), min(cb, b)
            v = verdict_of(claims[i])
            segs.append({"t": "claim", "text": answer[s:e], "n": i + 1, "verdict": v, "first": s == ca,
                         "mark": VERDICT_WORDS[v][0], "words": VERDICT_WORDS[v][1]})
            pos = e
        if pos < b:
            segs.append({"t": "text", "text": answer[pos:b]})

    pos, run = 0, []
    for k, b in enumerate(blocks):
        end = b.span[0]
        while end > pos and answer[end - 1] in " \t":   # the chips sit right after their sentence
            end -= 1
        text(pos, end)
        pos = b.span[1]
        pool = sources
        if claims:   # a verify result: the evidence of the claims this block backs, else every claim's
            mine = [claims[i] for ca, cb, i in spans if cb <= b.span[0] and (k == 0 or cb > blocks[k - 1].span[0])]
            pool = [e for c in (mine or claims) for e in c.get("cited") or [] if isinstance(e, dict)]
        run += [c for c in _chips_for(b, pool, unresolved or [])
                if (c["label"], c.get("unit")) not in {(x["label"], x.get("unit")) for x in run}]
        if k in hidden:
            continue            # the next block repeats this one: its chips join the next one's
        segs.append({"t": "chips", "chips": run[:CHIPS_SHOWN], "more": max(0, len(run) - CHIPS_SHOWN),
                     "cites": b.text})
        run = []
    text(pos, len(answer))
    return segs


def confidence_words(confidence, abstained: bool, abstained_by: str | None, threshold: float | None) -> str:
    """What ask's confidence means, for a reader (the number stays beside it)."""
    if not isinstance(confidence, (int, float)):
        return "not measured for this answer"
    pct = f"{100 * confidence:.0f} %"
    if abstained and abstained_by == "engine":
        return (f"the passages found cover the question ({pct}), but none of them states an answer to it")
    if abstained:
        return f"{pct} likely that the best passage answers the question: too unlikely to answer from it"
    word = "very likely" if confidence >= 0.9 else "likely" if confidence >= 0.7 else "uncertain"
    below = f" (below {100 * threshold:.0f} % provrag does not answer)" if isinstance(threshold, (int, float)) else ""
    return f"{word}: {pct} estimated chance that the best passage answers the question{below}"


def removed_sentences(result: dict) -> list[str]:
    """Sentences ask removed because their sources did not support them, where the result says."""
    out = []
    for r in result.get("removed_sentences") or []:
        t = r if isinstance(r, str) else (r.get("sentence") or r.get("text")) if isinstance(r, dict) else None
        if t:
            out.append(as_text(t))
    return out


def why_by_unit(rows: list[dict]) -> dict[str, str]:
    """{text_unit_id: the line saying why retrieval ranked it} from `retrievals` rows (query/why.why_line):
    the question's retrieval first, then each claim's."""
    from provrag.query.why import why_line

    out: dict[str, str] = {}
    for r in sorted(rows, key=lambda r: r.get("claim_index") is not None):
        uid = r.get("text_unit_id")
        if uid and uid not in out:
            who = "the question" if r.get("claim_index") is None else f"claim {r['claim_index'] + 1}"
            out[uid] = f"retrieved for {who}: {why_line(r)}"
    return out


def why_rows(rows: list[dict], limit: int = 30) -> list[dict]:
    """Rows of the `retrievals` provenance table as the "why retrieved" table shows them."""
    out = []
    for r in rows[:limit]:
        comp = r.get("components") or {}
        out.append({"rank": r.get("rank"), "score": r.get("score"), "document": r.get("document"),
                    "page": r.get("page"), "candidate": r.get("candidate"), "id": r.get("candidate_id"),
                    "claim": r.get("claim_index"), "text_unit_id": r.get("text_unit_id"),
                    "components": [(k.replace("_", " "), v) for k, v in comp.items() if isinstance(v, (int, float))
                                   and k not in ("bm25", "cosine") and (v or k != "entity_boost")],
                    "raw": [(k, comp.get(k)) for k in ("bm25", "cosine") if isinstance(comp.get(k), (int, float))],
                    "words": [(x.get("term"), x.get("channel"), x.get("weight")) for x in r.get("influence") or []
                              if isinstance(x, dict)]})
    return out
