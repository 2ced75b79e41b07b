"""One card per claim: its verdict, what it cites, and its evidence — document, page and
printed label, quote, how it was reached, score — with, for PDFs, the page itself (the quote
highlighted) and, for page-less formats, the paragraph with the quote marked.

Why a page is shown as a strip: the reader should see the quote first, in place, without
scrolling a whole page; the whole page is one click away and costs no second image (the SVG
`<use>`s the same PNG). Why evidence folds after EVIDENCE_SHOWN: a claim with forty retrieved
units would otherwise bury the next claim; folded units are listed, never drawn.
"""
from __future__ import annotations

import base64

from provrag.audit.documents import Pages, image_key, is_pdf
from provrag.audit.markup import (
    VERDICT_MARK,
    VERDICTS,
    as_text,
    esc,
    number,
    verdict_of,
)
from provrag.query.why import why_line

BAND_MARGIN = 90       # image pixels shown above and below the highlighted lines
BAND_MIN = 320         # the strip is at least this tall
EVIDENCE_SHOWN = 5      # evidence units listed per claim; the rest fold into a <details>


def evidence_of(claim: dict) -> list[tuple[str, dict]]:
    """(route, source) pairs: the judged evidence first, then cited units not among it."""
    out, seen = [], set()
    def listed(x):
        return [s for s in x if isinstance(s, dict)] if isinstance(x, list) else []

    cited_keys = {(as_text(s.get("text_unit_id")), as_text(s.get("quote"))) for s in listed(claim.get("cited"))}
    for route, items in (("evidence", claim.get("evidence")), ("cited", claim.get("cited"))):
        for s in listed(items):
            k = (as_text(s.get("text_unit_id")), as_text(s.get("quote")))
            if k in seen:
                continue
            seen.add(k)
            r = s.get("route") or ("cited" if k in cited_keys else "retrieved")
            out.append((str(r), s))
    return out


def _page_text(src: dict) -> str:
    ps, pe, label = src.get("page_start"), src.get("page_end"), src.get("page_label")
    if ps is None or ps == "":
        return "no page (a page-less format, or a GraphRAG index)"
    s = f"page {ps}" if pe in (None, ps) else f"pages {ps}–{pe}"
    if label not in (None, "", str(ps)):
        s += f" (printed {label})"
    return s + (" (text by OCR)" if src.get("ocr") else "")


def _band(r: dict) -> tuple[int, int]:
    """(top, height) of the strip of the page around the highlight, in image pixels: what the
    reader sees first; the whole page is one click away. No highlight: the whole page."""
    h = r["height"]
    if not r["boxes"]:
        return 0, h
    top = min(b[1] for b in r["boxes"]) - BAND_MARGIN
    bottom = max(b[3] for b in r["boxes"]) + BAND_MARGIN
    if bottom - top < BAND_MIN:
        grow = (BAND_MIN - (bottom - top)) // 2
        top, bottom = top - grow, bottom + grow
    top, bottom = max(0, top), min(h, bottom)
    return top, bottom - top


def _figure(r: dict, src: dict) -> str:
    """The page as inline SVG: the PNG (data: URI) once, shown as a strip around the quote
    (the SVG's viewBox crops it — no second image), and the whole page in a <details> that
    re-uses the same image through <use>. The highlight is drawn into the PNG and again as
    SVG rectangles (crisp outlines, and inspectable)."""
    w, h, n = r["width"], r["height"], r["id"]
    rects = "".join(f'<rect class="hl" x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}"/>'
                    for x0, y0, x1, y1 in r["boxes"])
    b64 = base64.b64encode(r["png"]).decode("ascii")
    label = _page_text({**src, "page_start": r["page"], "page_end": r["page"]})
    alt = f"{src.get('document') or src.get('path')}, {label}"
    if r["found"]:
        note = "quote highlighted" + (f" ({r['match']} match, {100 * r['coverage']:.0f} % of the quote on this page)"
                                      if r["match"] in ("fuzzy", "partial") else "")
    elif src.get("ocr"):  # the highlight searches the text layer, which a scanned page does not have
        note = "no text layer to highlight the quote on"
    else:
        note = "the quote was not found on this page's text layer"
    top, bh = _band(r)
    svg = ('<svg class="{cls}" viewBox="0 {top} {w} {bh}" width="{w}" height="{bh}" role="img" aria-label="{alt}" '
           'xmlns="http://www.w3.org/2000/svg" data-width="{w}" data-height="{h}">{body}{rects}</svg>')
    image = f'<image id="img-{n}" href="data:image/png;base64,{b64}" x="0" y="0" width="{w}" height="{h}"/>'
    out = [f'<figure class="page" id="{n}" data-found="{str(r["found"]).lower()}">',
           svg.format(cls="band", top=top, w=w, bh=bh, h=h, alt=esc(alt), body=image, rects=rects)]
    if bh < h:
        out.append('<details class="whole"><summary>whole page</summary>' +
                   svg.format(cls="full", top=0, w=w, bh=h, h=h, alt=esc(alt), body=f'<use href="#img-{n}"/>',
                              rects=rects) + '</details>')
    out.append(f'<figcaption>{esc(src.get("path"))}, {esc(label)}: {esc(note)}</figcaption></figure>')
    return "".join(out)


def why_this_page(src: dict, whys: dict | None) -> str:
    """The "why this page" line of an evidence unit: why retrieval ranked it where it did
    (query/why.py), from the verify run (retrieved for this claim) or else from the ask (the
    question retrieved it); "" when no stored trace says (a cited unit retrieval never saw)."""
    for uid in [as_text(src.get("text_unit_id"))] + [as_text(u) for u in src.get("text_unit_ids") or []]:
        found = (whys or {}).get(uid)
        if found:
            who, why = found
            return f"why this page: {who} {why_line(why)}"
    return ""


def _source_html(route: str, src: dict, pages: Pages, draw: bool, whys: dict | None = None) -> str:
    """One evidence unit as a list item: its facts, the quote in context, the page if drawn."""
    quote = as_text(src.get("quote"))
    meta = [f'<span class="doc">{esc(src.get("document") or src.get("path") or "?")}</span>',
            f'<span class="pg">{esc(_page_text(src))}</span>', f'<span class="route r-{esc(route)}">{esc(route)}</span>']
    if src.get("score") is not None:
        meta.append(f'<span class="score">score {number(src.get("score"), 3)}</span>')
    lab = str(src.get("label") or src.get("verdict") or "").lower()
    if lab:
        cls = f" v-{lab}" if lab in VERDICTS else ""
        meta.append(f'<span class="label{cls}">{esc(VERDICT_MARK.get(lab, ""))} {esc(lab)}</span>')
    parts = [f'<div class="meta">{" · ".join(meta)}</div>']
    if src.get("via"):
        parts.append(f'<div class="via">reached: {esc(src.get("via"))}</div>')
    if src.get("reason"):
        parts.append(f'<div class="via">judge: {esc(src.get("reason"))}</div>')
    why = why_this_page(src, whys)
    if why:
        parts.append(f'<div class="via why">{esc(why)}</div>')
    fig, note = "", ""
    if is_pdf(src):
        state, msg, _ = pages.docs.state(as_text(src.get("path")))
        if state != "ok":
            note = msg
        elif draw:
            r = pages.image(src)
            if r is None or "error" in (r or {}):
                note = f"page not drawn: {(r or {}).get('error', 'unknown error')}"
            elif r.get("repeat"):
                fig = f'<a class="seeabove" href="#{esc(r["id"])}">{esc(_page_text(src))} (image shown above)</a>'
            else:
                fig = _figure(r, src)
                if msg:
                    note = msg
        else:
            note = f"page image not drawn (the --max-pages budget of {pages.budget} is used)"
    para = pages.docs.paragraph(as_text(src.get("text_unit_id")), quote) if not fig else None
    if para:
        before, q, after = para
        parts.append(f'<p class="para">{esc(before)}<mark>{esc(q)}</mark>{esc(after)}</p>')
    else:
        parts.append(f'<blockquote class="quote"><mark>{esc(quote)}</mark></blockquote>')
    if note:
        parts.append(f'<div class="warn">{esc(note)}</div>')
    return f'<li class="ev">{"".join(parts)}{fig}</li>'


def claim_card(i: int, claim: dict, ev: list[tuple[str, dict]], pages: Pages, plan: set,
               whys: dict | None = None) -> str:
    """Claim i's card: verdict, score, judge, citations, and its evidence (`evidence_of`);
    PDF pages are drawn for the sources whose `image_key` is in `plan` (Pages.plan); `whys`:
    {text_unit_id: (who retrieved it, its why)} for the "why this page" lines."""
    v = verdict_of(claim)
    head = [f'<span class="badge v-{v}">{VERDICT_MARK[v]} {esc(v)}</span>']
    if claim.get("score") is not None:
        head.append(f'score {number(claim.get("score"), 3)}')
    if claim.get("method"):
        head.append(f'judged by {esc(claim.get("method"))}')
    if not [c for c in claim.get("citations") or [] if isinstance(c, dict)]:
        head.append("no citation")   # cited_supports is False then too, but nothing was cited to miss
    elif "cited_supports" in claim:
        cs = claim.get("cited_supports")
        head.append("its citations hold the evidence" if cs else "its citations do not hold the evidence")
    extra = []
    cits = [c for c in claim.get("citations") or [] if isinstance(c, dict)]
    if cits:
        extra.append("cites: " + ", ".join(
            f'<span class="cit {"ok" if c.get("supports") else "no"}">{esc(c.get("kind"))} {esc(c.get("id"))} '
            f'{"✓" if c.get("supports") else "✗"}</span>' for c in cits))
    unres = [u for u in claim.get("unresolved") or [] if isinstance(u, dict)]
    if unres:
        extra.append("unresolved: " + ", ".join(esc(f'{u.get("kind")} {u.get("id")}') for u in unres))
    if claim.get("focus"):
        extra.append(f'focus: {esc(claim.get("focus"))}')
    extra_html = "".join(f'<div class="head">{x}</div>' for x in extra)
    shown = "".join(_source_html(r, s, pages, image_key(s) in plan, whys) for r, s in ev[:EVIDENCE_SHOWN])
    rest = "".join(_source_html(r, s, pages, False, whys) for r, s in ev[EVIDENCE_SHOWN:])
    if rest:
        rest = (f'<details class="more-ev"><summary>{len(ev) - EVIDENCE_SHOWN} more evidence units</summary>'
                f'<ol class="evidence" start="{EVIDENCE_SHOWN + 1}">{rest}</ol></details>')
    body = (f'<ol class="evidence">{shown}</ol>{rest}' if shown
            else '<p class="none">No evidence was found for this claim.</p>')
    return (f'<section class="card v-{v}" id="claim-{i + 1}" data-verdict="{v}">'
            f'<h3><span class="num">{i + 1}</span> {esc(claim.get("text"))}</h3>'
            f'<div class="head">{" · ".join(head)}</div>{extra_html}{body}</section>')
