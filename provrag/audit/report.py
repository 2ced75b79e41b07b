"""`provrag report`: one self-contained HTML file a person can audit an answer with.

What it shows: the question and the answer with every claim coloured by its verdict
(answer.py); a summary bar (inline SVG); per claim its evidence — document, page and printed
label, quote, how it was reached, score — with, for PDFs, the page itself rendered (pages.py)
and the quote highlighted, and for page-less formats the paragraph with the quote marked
(cards.py, documents.py); then the query trace as a timeline (timeline.py). This module
assembles the page; markup.py holds its CSS, script and escaping.

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
- The input is the dict of `provrag verify --json`, a file format users keep: every field is
  read defensively, so a hand-edited or foreign file still gives a report.
"""
from __future__ import annotations

import datetime as dt

from provrag.audit.answer import answer_html
from provrag.audit.cards import EVIDENCE_SHOWN, claim_card, evidence_of
from provrag.audit.documents import Docs, Pages
from provrag.audit.markup import (
    COLOURS,
    CSS,
    JS,
    VERDICT_MARK,
    VERDICTS,
    as_text,
    csp_hash,
    esc,
    percent,
    shorten,
    verdict_of,
)
from provrag.audit.timeline import trace_html
from provrag.query.since import describe_changes
from provrag.query.why import retrieved_why


def _summary_svg(summary: dict, claims: list[dict]) -> str:
    """Verdict counts as one stacked bar, then citation recall and precision as bars."""
    counts = {v: sum(verdict_of(c) == v for c in claims) for v in VERDICTS}  # the claims, not a copy of them
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
        parts.append(f'<text x="550" y="{y + 12}" font-size="13" fill="#333">{percent(val)}</text>')
        y += 22
    return (f'<svg class="summary" role="img" aria-label="verdict counts and citation metrics" '
            f'viewBox="0 0 {W} {y}" width="{W}" height="{y}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')


def claim_whys(traces: list[dict], claim: int) -> dict:
    """{text_unit_id: (who retrieved it, why)} for claim `claim`'s evidence: the verify run's
    retrieval for that claim first, then the ask's retrieval for the question."""
    found: dict = {}
    for t in traces:
        if t.get("kind") == "verify":
            found |= {u: ("retrieved for this claim", w) for u, w in retrieved_why(t, claim).items()}
    for t in traces:
        if t.get("kind") != "verify":
            found |= {u: ("the question retrieved it", w) for u, w in retrieved_why(t).items() if u not in found}
    return found


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
        answer = " ".join(as_text(c.get("text")).strip() for c in claims)
    answer = as_text(answer)
    docs = Docs(index_dir, docs_root)
    try:
        pages = Pages(docs, max_pages)
        evs = [evidence_of(c) for c in claims]
        plan = pages.plan(evs, EVIDENCE_SHOWN)
        cards = "".join(claim_card(i, c, evs[i], pages, plan, claim_whys(traces, i)) for i, c in enumerate(claims))
        answer_part = answer_html(answer, claims)
        notes = [line for _, line in describe_changes(vj.get("index_changes"))] + list(docs.notes)
        for msg in docs.problems():
            if msg not in notes:
                notes.append(msg)
        n_images = pages.count
    finally:
        docs.close()
    counts = {v: sum(verdict_of(c) == v for c in claims) for v in VERDICTS}
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
    metrics = " · ".join(f"{esc(k.replace('_', ' '))}: {percent(summary.get(k))}" for k in ("citation_recall", "citation_precision"))
    count_txt = " · ".join(f"{counts[v]} {v}" for v in VERDICTS)
    notes_html = ('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>") if notes else ""
    csp = (f"default-src 'none'; img-src data:; style-src {csp_hash(CSS)}; script-src {csp_hash(JS)}; "
           "base-uri 'none'; form-action 'none'")
    title = f"provrag report: {shorten(question or 'answer', 80)}"
    body = f"""<main>
<header><h1>provrag audit report</h1><div class="sub">{sub}</div></header>
<h2>Question</h2><div class="box question">{esc(question) if question else '<span class="sub">(no question recorded)</span>'}</div>
<h2>Answer</h2><div class="box answer">{answer_part}</div>
<h2>Summary</h2><div class="box">{_summary_svg(summary, claims)}
<p class="sub">{len(claims)} claims: {esc(count_txt)} · {metrics}</p>{notes_html}</div>
<h2>Claims and evidence</h2>{filters}{cards or '<p class="none">The answer has no checkable claims.</p>'}
{"".join(trace_html(t) for t in traces)}
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
