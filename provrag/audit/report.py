"""`provrag report`: one self-contained HTML file a person can audit an answer with.

What it shows: the question and the answer with every claim coloured by its verdict; a
summary bar (inline SVG); per claim its evidence — document, page and printed label, quote,
how it was reached, score — with, for PDFs, the page itself rendered (pagerender.py) and the
quote highlighted, and for page-less formats the paragraph with the quote marked; then the
query trace as a timeline.

Why it is built this way:
- Mailable and offline: one file, images as data: URIs, no CDN, no web fonts, no remote
  anything. A Content-Security-Policy meta tag enforces it (default-src 'none', images only
  from data:, the one inline style and script allowed by their sha256): even a string that
  escaped escaping could neither run nor fetch.
- Everything from a document, a question, a model or a trace goes through `esc` (html.escape
  with quotes), so a document holding `<script>` renders as the text `<script>`.
- Readable without JavaScript; the little script only adds verdict filter buttons (they are
  `hidden` until it runs, so a reader without JS never sees dead buttons).
- The page drawn must be the page that was indexed: the index's manifest records the DOCS
  root and every file's sha256; a file that moved or changed is reported, never drawn.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import json
from pathlib import Path

from provrag.audit.pages import RenderError, normalise, render_page

VERDICTS = ("supported", "contradicted", "unsupported")
VERDICT_MARK = {"supported": "✓", "contradicted": "✗", "unsupported": "!"}
COLOURS = {"supported": "#1a7f37", "contradicted": "#cf222e", "unsupported": "#9a6700"}
PARA_MAX = 700          # characters of context kept on each side of a quote in a page-less paragraph
BAND_MARGIN = 90       # image pixels shown above and below the highlighted lines
BAND_MIN = 320         # the strip is at least this tall
EVIDENCE_SHOWN = 5      # evidence units listed per claim; the rest fold into a <details>
MAX_PAGES_TRIED = 3     # pages of a multi-page unit searched for the quote before giving up


def esc(value) -> str:
    """Escaped text for HTML content and attribute values (quotes included)."""
    return html.escape("" if value is None else str(value), quote=True)


def _num(x, nd=2) -> str:
    if isinstance(x, bool) or x is None:
        return "—" if x is None else str(x).lower()
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return esc(x)


def _s(x) -> str:
    """A value from the input as text ("" for None): verify JSON may be hand-edited or foreign."""
    return "" if x is None else x if isinstance(x, str) else str(x)


def _f(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def _pct(x) -> str:
    return "—" if not isinstance(x, (int, float)) else f"{100 * float(x):.0f} %"


# ---- the documents behind the index ---------------------------------------------------------

class _Docs:
    """Where each indexed file is now, whether it is still the indexed one, and its text."""

    def __init__(self, index_dir, docs_root):
        self.reader = None
        self.manifest: dict = {}
        self.notes: list[str] = []
        if index_dir is not None:
            from provrag.store.reader import IndexNotFound, open_index

            try:
                self.reader = open_index(index_dir)
            except IndexNotFound as e:
                self.notes.append(str(e))
            try:
                self.manifest = json.loads((Path(index_dir) / "manifest.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.manifest = {}
        root = docs_root or self.manifest.get("docs_root")
        self.root = Path(root) if root else None
        if self.root is not None and not self.root.is_absolute() and index_dir is not None:
            # an index built with a relative DOCS path: relative to where `provrag index` ran,
            # which is usually here or the index folder's parent (sha256 still guards the match)
            for base in (Path.cwd(), Path(index_dir).resolve().parent):
                if (base / self.root).is_dir():
                    self.root = (base / self.root).resolve()
                    break
        self.sha = {d.get("path"): d.get("sha256") for d in self.manifest.get("documents") or [] if isinstance(d, dict)}
        self._state: dict[str, tuple[str, str, Path | None]] = {}

    def state(self, rel: str | None) -> tuple[str, str, Path | None]:
        """("ok" | "moved" | "changed" | "unknown", message, file) for a document path."""
        if rel in self._state:
            return self._state[rel]
        if not rel:
            st = ("unknown", "the evidence names no file", None)
        elif Path(rel).is_absolute() or ".." in Path(rel).parts:
            st = ("unknown", f"{rel} is not a path inside the documents folder; page not drawn", None)
        elif self.root is None:
            st = ("unknown", "the index does not record where its documents live (no docs_root in manifest.json)", None)
        elif self.sha and rel not in self.sha:
            st = ("unknown", f"{rel} is not in the index's manifest; page not drawn", None)
        else:
            f = self.root / rel
            try:
                h = hashlib.sha256()
                with open(f, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
                want = self.sha.get(rel)
                if want and h.hexdigest() != want:
                    st = ("changed", f"{f} changed since indexing (sha256 differs); page not drawn", None)
                else:  # no manifest at all (an older index): drawn, unchecked
                    st = ("ok", "" if want else f"{f}: no sha256 recorded, drawn unchecked", f)
            except FileNotFoundError:
                st = ("moved", f"{f} is not there any more (moved or deleted since indexing); page not drawn", None)
            except OSError as e:
                st = ("moved", f"{f} cannot be read ({e.strerror or e}); page not drawn", None)
        self._state[rel] = st
        return st

    def paragraph(self, text_unit_id: str | None, quote: str) -> tuple[str, str, str] | None:
        """(before, quote as found, after): the quote inside its paragraph of the document."""
        if self.reader is None or not text_unit_id:
            return None
        try:
            row = self.reader.con.execute(
                "SELECT t.text, t.char_start, greatest(coalesce(t.char_start, 0) - ?, 0) AS w0, "
                "substr(d.text, greatest(coalesce(t.char_start, 0) - ?, 0) + 1, "
                "       coalesce(t.char_end - t.char_start, 0) + 2 * ?), length(d.text) "
                "FROM text_units t LEFT JOIN documents d ON d.id = t.document_id WHERE t.id = ? LIMIT 1",
                [PARA_MAX, PARA_MAX, PARA_MAX, text_unit_id]).fetchone()
        except Exception:
            return None
        if not row:
            return None
        unit_text, cs, w0, window, n = row
        if cs is None or not window:  # GraphRAG index: no offsets, the unit is the context
            return _mark_in(unit_text or "", quote, True, True)
        return _mark_in(window, quote, w0 > 0, w0 + len(window) < (n or 0))

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


def _mark_in(text: str, quote: str, more_left: bool = False, more_right: bool = False) -> tuple[str, str, str] | None:
    """Split text around the quote (exact, else rapidfuzz alignment), trimmed to its paragraph
    (blank-line bounded) and to PARA_MAX characters each side; "…" where text was cut."""
    if not text or not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        a, b = at, at + len(quote)
    else:
        from rapidfuzz import fuzz

        al = fuzz.partial_ratio_alignment(quote, text, score_cutoff=80)
        if al is None:
            return None
        a, b = al.dest_start, al.dest_end
    p0 = text.rfind("\n\n", 0, a)
    p1 = text.find("\n\n", b)
    start = p0 + 2 if p0 >= 0 else 0
    end = p1 if p1 >= 0 else len(text)
    cut_left = a - start > PARA_MAX or (p0 < 0 and more_left)
    cut_right = end - b > PARA_MAX or (p1 < 0 and more_right)
    start, end = max(start, a - PARA_MAX), min(end, b + PARA_MAX)
    before = ("…" if cut_left else "") + text[start:a].lstrip("\n")
    after = text[b:end].rstrip() + ("…" if cut_right else "")
    return before, text[a:b], after


# ---- the answer, claim by claim ---------------------------------------------------------------

def _claim_spans(answer: str, claims: list[dict]) -> list[tuple[int, int, int]]:
    """(start, end, claim index) of each claim found in the answer, in order, not overlapping."""
    from rapidfuzz import fuzz

    spans, cursor = [], 0
    for i, c in enumerate(claims):
        t = _s(c.get("text")).strip()
        if not t:
            continue
        sp = c.get("span")
        if (isinstance(sp, (list, tuple)) and len(sp) == 2 and all(isinstance(x, int) for x in sp)
                and cursor <= sp[0] < sp[1] <= len(answer)
                and fuzz.ratio(normalise(answer[sp[0]:sp[1]]), normalise(t)) >= 80):
            spans.append((sp[0], sp[1], i))    # verify's own span, still pointing at this claim
            cursor = sp[1]
            continue
        at = answer.find(t, cursor)
        if at >= 0:
            a, b = at, at + len(t)
        else:
            al = fuzz.partial_ratio_alignment(t, answer[cursor:], score_cutoff=80)
            if al is None or al.dest_end <= al.dest_start:
                continue
            a, b = cursor + al.dest_start, cursor + al.dest_end
        spans.append((a, b, i))
        cursor = b
    return spans


def _answer_html(answer: str, claims: list[dict]) -> str:
    """The answer with each claim wrapped in a verdict-coloured link to its card and every
    `[Data: …]` block shown as a citation marker; a block right after a claim joins it."""
    from provrag.query.citations import parse_citations

    blocks = [b.span for b in parse_citations(answer).blocks]
    spans = []
    for a, b, i in _claim_spans(answer, claims):
        for s, e in blocks:
            if s < a < e:                      # claim starts inside a block: start after it
                a = e
            if a <= s < b < e or (b <= s and not answer[b:s].strip(" \t*_")):
                b = max(b, e)                  # a block inside, crossing the end, or right after
        if spans and a < spans[-1][1]:
            a = spans[-1][1]
        if b > a:
            spans.append((a, b, i))
    out, pos = [], 0

    def plain(s: int, e: int) -> str:
        parts, p = [], s
        for bs, be in blocks:
            if be <= s or bs >= e:
                continue
            parts.append(esc(answer[p:bs]))
            parts.append(f'<span class="cite">{esc(answer[bs:be])}</span>')
            p = be
        parts.append(esc(answer[p:e]))
        return "".join(parts)

    for a, b, i in spans:
        out.append(plain(pos, a))
        v = _verdict(claims[i])
        out.append(f'<a class="claim v-{v}" href="#claim-{i + 1}" title="claim {i + 1}: {esc(v)}">'
                   f'{plain(a, b)}<sup>{i + 1}{VERDICT_MARK[v]}</sup></a>')
        pos = b
    out.append(plain(pos, len(answer)))
    placed = {i for _, _, i in spans}
    missing = [i for i, c in enumerate(claims) if i not in placed and _s(c.get("text")).strip()]
    if missing:
        out.append('<span class="unplaced">Claims not found verbatim in the answer: ' + ", ".join(
            f'<a class="claim v-{_verdict(claims[i])}" href="#claim-{i + 1}">{esc(claims[i].get("text"))}'
            f'<sup>{i + 1}{VERDICT_MARK[_verdict(claims[i])]}</sup></a>' for i in missing) + "</span>")
    return "".join(out)


def _verdict(claim: dict) -> str:
    v = str(claim.get("verdict") or "").lower()
    return v if v in VERDICTS else "unsupported"


# ---- summary bar ---------------------------------------------------------------------------

def _summary_svg(summary: dict, claims: list[dict]) -> str:
    counts = {v: sum(_verdict(c) == v for c in claims) for v in VERDICTS}  # the claims, not a copy of them
    total = sum(counts.values()) or 1
    W, x, parts = 600, 0.0, []
    for v in VERDICTS:
        w = W * counts[v] / total
        if counts[v]:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="28" fill="{COLOURS[v]}">'
                         f'<title>{v}: {counts[v]}</title></rect>')
            if w > 70:
                parts.append(f'<text x="{x + 8:.1f}" y="19" fill="#fff" font-size="13">{counts[v]} {v}</text>')
        x += w
    y = 44
    for name in ("citation_recall", "citation_precision"):
        val = summary.get(name)
        frac = float(val) if isinstance(val, (int, float)) else 0.0
        parts.append(f'<text x="0" y="{y + 12}" font-size="13" fill="#333">{name.replace("_", " ")}</text>')
        parts.append(f'<rect x="140" y="{y}" width="400" height="14" fill="#eaeef2"/>')
        parts.append(f'<rect x="140" y="{y}" width="{400 * max(0.0, min(1.0, frac)):.1f}" height="14" fill="#0969da"/>')
        parts.append(f'<text x="550" y="{y + 12}" font-size="13" fill="#333">{_pct(val)}</text>')
        y += 22
    return (f'<svg class="summary" role="img" aria-label="verdict counts and citation metrics" '
            f'viewBox="0 0 {W} {y}" width="{W}" height="{y}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')


# ---- evidence ------------------------------------------------------------------------------

def _evidence(claim: dict) -> list[tuple[str, dict]]:
    """(route, source) pairs: the judged evidence first, then cited units not among it."""
    out, seen = [], set()
    def listed(x):
        return [s for s in x if isinstance(s, dict)] if isinstance(x, list) else []

    cited_keys = {(_s(s.get("text_unit_id")), _s(s.get("quote"))) for s in listed(claim.get("cited"))}
    for route, items in (("evidence", claim.get("evidence")), ("cited", claim.get("cited"))):
        for s in listed(items):
            k = (_s(s.get("text_unit_id")), _s(s.get("quote")))
            if k in seen:
                continue
            seen.add(k)
            r = s.get("route") or ("cited" if k in cited_keys else "retrieved")
            out.append((str(r), s))
    return out


def _is_pdf(src: dict) -> bool:
    p = str(src.get("path") or "").lower()
    ps = src.get("page_start")
    return (p.endswith(".pdf") or p.endswith(".pdf.gz")) and isinstance(ps, int) and not isinstance(ps, bool)


def _page_text(src: dict) -> str:
    ps, pe, label = src.get("page_start"), src.get("page_end"), src.get("page_label")
    if ps is None or ps == "":
        return "no page (a page-less format, or a GraphRAG index)"
    s = f"page {ps}" if pe in (None, ps) else f"pages {ps}–{pe}"
    if label not in (None, "", str(ps)):
        s += f" (printed {label})"
    return s


def _key(src: dict) -> tuple:
    return _s(src.get("path")), _s(src.get("page_start")), _s(src.get("quote"))


class _Pages:
    """Renders page images within the --max-pages budget; one image per (file, page, quote)."""

    def __init__(self, docs: _Docs, max_pages: int):
        self.docs, self.budget = docs, max(0, int(max_pages))
        self.done: dict[tuple, dict | None] = {}
        self.count = 0

    def plan(self, claims_ev: list[list[tuple[str, dict]]]) -> set[tuple]:
        """The (file, page, quote) keys that get an image: round robin over claims by rank, so
        every claim's best PDF page comes before any claim's second."""
        keys, rank = set(), 0
        claims_ev = [ev[:EVIDENCE_SHOWN] for ev in claims_ev]  # folded evidence is listed without images
        while len(keys) < self.budget and any(rank < len(ev) for ev in claims_ev):
            for ev in claims_ev:
                if rank < len(ev) and _is_pdf(ev[rank][1]) and len(keys) < self.budget:
                    s = ev[rank][1]
                    if self.docs.state(_s(s.get("path")))[0] != "ok":
                        continue
                    keys.add(_key(s))
            rank += 1
        return keys

    def image(self, src: dict) -> dict | None:
        key = _key(src)
        if key in self.done:
            return self.done[key] and {**self.done[key], "repeat": True}
        state, msg, f = self.docs.state(_s(src.get("path")))
        res = None
        if f is not None:
            first = src["page_start"]
            last = src["page_end"] if isinstance(src.get("page_end"), int) and src["page_end"] >= first else first
            try:
                for p in range(first, min(last, first + MAX_PAGES_TRIED - 1) + 1):
                    r = render_page(f, p, _s(src.get("quote")))
                    r["page"] = p
                    if res is None or r["found"]:
                        res = r
                    if r["found"]:
                        break
            except RenderError as e:
                res = {"error": str(e)}
        if res is not None and "png" in res:
            self.count += 1
            res["id"] = f"page-{self.count}"
        self.done[key] = res
        return res


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
    note = ("quote highlighted" + (f" ({r['match']} match, {100 * r['coverage']:.0f} % of the quote on this page)"
                                   if r["match"] in ("fuzzy", "partial") else "")
            if r["found"] else "the quote was not found on this page's text layer")
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


def _source_html(route: str, src: dict, pages: _Pages, draw: bool) -> str:
    quote = _s(src.get("quote"))
    meta = [f'<span class="doc">{esc(src.get("document") or src.get("path") or "?")}</span>',
            f'<span class="pg">{esc(_page_text(src))}</span>', f'<span class="route r-{esc(route)}">{esc(route)}</span>']
    if src.get("score") is not None:
        meta.append(f'<span class="score">score {_num(src.get("score"), 3)}</span>')
    lab = str(src.get("label") or src.get("verdict") or "").lower()
    if lab:
        cls = f" v-{lab}" if lab in VERDICTS else ""
        meta.append(f'<span class="label{cls}">{esc(VERDICT_MARK.get(lab, ""))} {esc(lab)}</span>')
    parts = [f'<div class="meta">{" · ".join(meta)}</div>']
    if src.get("via"):
        parts.append(f'<div class="via">reached: {esc(src.get("via"))}</div>')
    if src.get("reason"):
        parts.append(f'<div class="via">judge: {esc(src.get("reason"))}</div>')
    fig, note = "", ""
    if _is_pdf(src):
        state, msg, _ = pages.docs.state(_s(src.get("path")))
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
    para = pages.docs.paragraph(_s(src.get("text_unit_id")), quote) if not fig else None
    if para:
        before, q, after = para
        parts.append(f'<p class="para">{esc(before)}<mark>{esc(q)}</mark>{esc(after)}</p>')
    else:
        parts.append(f'<blockquote class="quote"><mark>{esc(quote)}</mark></blockquote>')
    if note:
        parts.append(f'<div class="warn">{esc(note)}</div>')
    return f'<li class="ev">{"".join(parts)}{fig}</li>'


def _claim_card(i: int, claim: dict, ev: list[tuple[str, dict]], pages: _Pages, plan: set) -> str:
    v = _verdict(claim)
    head = [f'<span class="badge v-{v}">{VERDICT_MARK[v]} {esc(v)}</span>']
    if claim.get("score") is not None:
        head.append(f'score {_num(claim.get("score"), 3)}')
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
    shown = "".join(_source_html(r, s, pages, _key(s) in plan) for r, s in ev[:EVIDENCE_SHOWN])
    rest = "".join(_source_html(r, s, pages, False) for r, s in ev[EVIDENCE_SHOWN:])
    if rest:
        rest = (f'<details class="more-ev"><summary>{len(ev) - EVIDENCE_SHOWN} more evidence units</summary>'
                f'<ol class="evidence" start="{EVIDENCE_SHOWN + 1}">{rest}</ol></details>')
    body = (f'<ol class="evidence">{shown}</ol>{rest}' if shown
            else '<p class="none">No evidence was found for this claim.</p>')
    return (f'<section class="card v-{v}" id="claim-{i + 1}" data-verdict="{v}">'
            f'<h3><span class="num">{i + 1}</span> {esc(claim.get("text"))}</h3>'
            f'<div class="head">{" · ".join(head)}</div>{extra_html}{body}</section>')


# ---- the trace -------------------------------------------------------------------------------

def _short(v, n=160) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[:n - 1] + "…"


def _data_html(value, depth: int = 0) -> str:
    """Any trace value as escaped HTML: dicts as definition lists, lists of records as tables."""
    if isinstance(value, dict):
        if depth >= 3 or not value:
            return f'<code>{esc(_short(value))}</code>'
        return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{_data_html(v, depth + 1)}</dd>" for k, v in value.items()) + "</dl>"
    if isinstance(value, list):
        if value and all(isinstance(x, dict) for x in value) and depth < 3:
            cols = []
            for row in value[:12]:
                for k, x in row.items():
                    if k not in cols and not isinstance(x, (dict, list)):
                        cols.append(k)
            cols = cols[:9]
            rows = "".join("<tr>" + "".join(f"<td>{esc(_short(r.get(c), 60)) if r.get(c) is not None else ''}</td>"
                                            for c in cols) + "</tr>" for r in value[:12])
            more = f'<p class="more">… {len(value) - 12} more</p>' if len(value) > 12 else ""
            return (f'<table><thead><tr>{"".join(f"<th>{esc(c)}</th>" for c in cols)}</tr></thead>'
                    f'<tbody>{rows}</tbody></table>{more}')
        return f'<code>{esc(_short(value, 400))}</code>' if value else "—"
    if isinstance(value, float):
        return esc(f"{value:.4g}")
    return esc(_short(value, 600)) if value is not None else "—"


def _ts(s) -> float | None:
    try:
        return dt.datetime.fromisoformat(str(s)).timestamp() * 1000
    except (TypeError, ValueError):
        return None


def _trace_html(trace: dict) -> str:
    """One trace: its facts, a timeline of its stages (inline SVG), each stage's data folded."""
    stages = [s for s in trace.get("stages") or [] if isinstance(s, dict)]
    t0 = _ts(trace.get("created"))
    rows, off = [], 0.0
    for s in stages:
        ms = _f(s.get("ms"))
        st = _ts(s.get("started"))
        start = st - t0 if (st is not None and t0 is not None) else off
        rows.append((s, max(0.0, start), ms))
        off = max(off, start + ms)
    total = max([_f(trace.get("total_ms")), off] + [a + b for _, a, b in rows]) or 1.0
    W, L, bars = 600, 150, []
    for k, (s, start, ms) in enumerate(rows):
        y = 6 + 24 * k
        x = L + (W - L - 90) * start / total
        w = max(2.0, (W - L - 90) * ms / total)
        bars.append(f'<text x="0" y="{y + 13}" font-size="13" fill="#333">{esc(s.get("label") or s.get("name"))}</text>'
                    f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="16" rx="2" fill="#0969da"><title>{esc(s.get("name"))}: {ms:.1f} ms</title></rect>'
                    f'<text x="{x + w + 6:.1f}" y="{y + 13}" font-size="12" fill="#555">{ms:.0f} ms</text>')
    h = 12 + 24 * len(rows)
    svg = (f'<svg class="timeline" role="img" aria-label="stage timeline" viewBox="0 0 {W} {h}" width="{W}" '
           f'height="{h}" xmlns="http://www.w3.org/2000/svg">{"".join(bars)}</svg>') if rows else ""
    usage = next((u for u in (trace.get("usage"), trace.get("llm")) if isinstance(u, dict)), {})
    facts = [("trace", trace.get("trace_id")), ("kind", trace.get("kind")), ("created", trace.get("created")),
             ("method", trace.get("method")), ("why", trace.get("method_why")), ("engine", trace.get("engine")),
             ("model", trace.get("model")), ("total", f'{_f(trace.get("total_ms")):.0f} ms'),
             ("model calls", usage.get("calls")), ("cached calls", usage.get("cached")),
             ("input tokens", usage.get("input_tokens")), ("output tokens", usage.get("output_tokens"))]
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts if v not in (None, ""))
    details = "".join(f'<details class="stage"><summary>{esc(s.get("label") or s.get("name"))} — {ms:.1f} ms</summary>'
                      f'{_data_html(s.get("data") or {})}</details>' for s, _, ms in rows)
    kind = str(trace.get("kind") or "ask")
    title = "Query trace" if kind == "ask" else f"{kind.title()} run"
    return (f'<section class="trace" id="trace-{esc(trace.get("trace_id"))}"><h2>{esc(title)}</h2>'
            f'<dl class="facts">{dl}</dl>{svg}{details}</section>')


# ---- the page --------------------------------------------------------------------------------

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;background:#f6f8fa}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px}h3{font-size:16px;margin:0 0 6px;font-weight:600}
.sub{color:#57606a;font-size:13px}.box{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:14px 18px;margin:10px 0}
.question{font-size:17px;font-weight:600}.answer{white-space:pre-wrap}
a.claim{color:inherit;text-decoration:none;border-radius:3px;padding:1px 2px}
a.claim sup{font-weight:700;margin-left:2px}
.v-supported.claim{background:#dafbe1;border-bottom:2px solid #1a7f37}
.v-contradicted.claim{background:#ffebe9;border-bottom:2px solid #cf222e}
.v-unsupported.claim{background:#fff8c5;border-bottom:2px solid #9a6700}
.cite{font-size:12px;color:#0550ae;background:#ddf4ff;border-radius:10px;padding:0 6px;white-space:nowrap}
.unplaced{display:block;margin-top:8px;font-size:13px}
.card{background:#fff;border:1px solid #d0d7de;border-left:6px solid #9a6700;border-radius:6px;padding:12px 16px;margin:14px 0}
.card.v-supported{border-left-color:#1a7f37}.card.v-contradicted{border-left-color:#cf222e}
.num{display:inline-block;min-width:22px;text-align:center;background:#eaeef2;border-radius:11px;font-size:13px}
.badge{font-weight:700;border-radius:4px;padding:1px 6px;color:#fff}
.badge.v-supported{background:#1a7f37}.badge.v-contradicted{background:#cf222e}.badge.v-unsupported{background:#9a6700}
.head{font-size:13px;color:#57606a;margin-bottom:6px}
ol.evidence{padding-left:20px;margin:6px 0}
li.ev{margin:10px 0;padding-top:8px;border-top:1px solid #eaeef2}
.meta{font-size:13px}.doc{font-weight:600}.route{font-size:12px;border:1px solid #afb8c1;border-radius:8px;padding:0 5px}
.via{font-size:12px;color:#57606a}.label{font-size:12px;font-weight:600}.label.v-supported{color:#1a7f37}
.label.v-contradicted{color:#cf222e}.label.v-unsupported{color:#9a6700}.cit{font-size:12px;border-radius:8px;padding:0 5px}
.cit.ok{background:#dafbe1}.cit.no{background:#ffebe9}details.more-ev>summary{font-size:13px;font-weight:400;color:#0969da}.warn{font-size:13px;color:#9a6700;background:#fff8c5;border-radius:4px;padding:2px 6px}
blockquote.quote,p.para{margin:6px 0;padding:6px 10px;background:#f6f8fa;border-left:3px solid #d0d7de;white-space:pre-wrap;font-size:14px}
mark{background:#ffe58f}
figure.page{margin:8px 0 0}figure.page svg{display:block;max-width:100%;height:auto;border:1px solid #d0d7de;background:#fff}
details.whole summary{font-size:12px;font-weight:400;color:#0969da;margin:4px 0}
rect.hl{fill:none;stroke:#e07000;stroke-width:2}
figcaption{font-size:12px;color:#57606a;margin-top:4px}
.filters{margin:8px 0}.filters button{font:inherit;font-size:13px;margin-right:6px;padding:2px 10px;border:1px solid #d0d7de;border-radius:12px;background:#fff;cursor:pointer}
.filters button[aria-pressed=true]{background:#0969da;color:#fff;border-color:#0969da}
body[data-filter=supported] .card:not(.v-supported),body[data-filter=contradicted] .card:not(.v-contradicted),
body[data-filter=unsupported] .card:not(.v-unsupported){display:none}
.summary,.timeline{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:12px;margin:4px 0}td,th{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
dl{margin:4px 0;display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px}dt{color:#57606a}dd{margin:0}
details.stage{margin:6px 0;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:4px 10px}
summary{cursor:pointer;font-weight:600}dl.facts{grid-template-columns:repeat(3,max-content minmax(0,1fr))}.notes li{color:#9a6700}
"""

JS = """
(function(){var f=document.querySelector('.filters');if(!f)return;f.hidden=false;
f.addEventListener('click',function(e){var b=e.target.closest('button');if(!b)return;
document.body.setAttribute('data-filter',b.getAttribute('data-v'));
f.querySelectorAll('button').forEach(function(x){x.setAttribute('aria-pressed',String(x===b));});});})();
"""


def _sha(s: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode("ascii") + "'"


def build_report(verify_json: dict, *, question: str | None = None, answer: str | None = None,
                 trace: dict | list | None = None, index_dir=None, docs_root=None, max_pages: int = 8) -> str:
    """The whole report as one HTML string (see the module docstring).

    verify_json: the `verify --json` dict (claims, summary; "question"/"answer" used when present);
    trace: a stored trace, or a list of them (the ask trace, then the verify run), one timeline each;
    docs_root: where the indexed files are now (default: manifest.json's docs_root).
    """
    vj = verify_json if isinstance(verify_json, dict) else {}
    traces = [t for t in (trace if isinstance(trace, list) else [trace]) if isinstance(t, dict)]
    claims = [c for c in vj["claims"] if isinstance(c, dict)] if isinstance(vj.get("claims"), list) else []
    summary = vj.get("summary") if isinstance(vj.get("summary"), dict) else {}
    question = question if question is not None else vj.get("question") or next(
        (t.get("question") for t in traces if t.get("question")), None)
    if answer is None:
        answer = vj.get("answer") if isinstance(vj.get("answer"), str) else None
    if answer is None:  # no answer text anywhere: the claims, in order, are the answer
        answer = " ".join(_s(c.get("text")).strip() for c in claims)
    answer = _s(answer)
    docs = _Docs(index_dir, docs_root)
    try:
        pages = _Pages(docs, max_pages)
        evs = [_evidence(c) for c in claims]
        plan = pages.plan(evs)
        cards = "".join(_claim_card(i, c, evs[i], pages, plan) for i, c in enumerate(claims))
        answer_html = _answer_html(answer, claims)
        notes = list(docs.notes)
        for rel, (state, msg, _) in docs._state.items():
            if state != "ok" and msg not in notes:
                notes.append(msg)
        n_images = pages.count
    finally:
        docs.close()
    counts = {v: sum(_verdict(c) == v for c in claims) for v in VERDICTS}
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    from provrag import __version__

    facts = [("index", str(index_dir) if index_dir is not None else None),
             ("documents", str(docs.root) if docs.root else None),
             ("traces", ", ".join(str(t.get("trace_id")) for t in traces) or vj.get("trace_id")), ("generated", now),
             ("provrag", __version__), ("page images", f"{n_images} (at most {max_pages})")]
    sub = " · ".join(f"{esc(k)}: {esc(v)}" for k, v in facts if v)
    filters = ('<div class="filters" hidden>Show: <button type="button" data-v="all" aria-pressed="true">all '
               f'{len(claims)}</button>' + "".join(f'<button type="button" data-v="{v}" aria-pressed="false">'
                                                    f'{VERDICT_MARK[v]} {v} {counts[v]}</button>' for v in VERDICTS) + "</div>")
    metrics = " · ".join(f"{esc(k.replace('_', ' '))}: {_pct(summary.get(k))}" for k in ("citation_recall", "citation_precision"))
    count_txt = " · ".join(f"{counts[v]} {v}" for v in VERDICTS)
    notes_html = ('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>") if notes else ""
    csp = (f"default-src 'none'; img-src data:; style-src {_sha(CSS)}; script-src {_sha(JS)}; "
           "base-uri 'none'; form-action 'none'")
    title = f"provrag report: {_short(question or 'answer', 80)}"
    body = f"""<main>
<header><h1>provrag audit report</h1><div class="sub">{sub}</div></header>
<h2>Question</h2><div class="box question">{esc(question) if question else '<span class="sub">(no question recorded)</span>'}</div>
<h2>Answer</h2><div class="box answer">{answer_html}</div>
<h2>Summary</h2><div class="box">{_summary_svg(summary, claims)}
<p class="sub">{len(claims)} claims: {esc(count_txt)} · {metrics}</p>{notes_html}</div>
<h2>Claims and evidence</h2>{filters}{cards or '<p class="none">The answer has no checkable claims.</p>'}
{"".join(_trace_html(t) for t in traces)}
</main>"""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="provrag {esc(__version__)}">
<title>{esc(title)}</title>
<style>{CSS}</style></head>
<body data-filter="all">
{body}
<script>{JS}</script>
</body></html>
"""
