"""Rich rendering of `provrag verify`: one block per claim (✓ supported, ✗ contradicted,
! unsupported) with its best evidence — document, page and printed label, quote — and a
summary line. The best evidence is what decided the verdict: a supporting unit for ✓, a
contradicting one for ✗, the closest one for !.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from provrag.views.resolve import quote_line
from provrag.views.since import index_changes_lines

if TYPE_CHECKING:
    from provrag.results import Evidence, VerifyResult

MARK = {"supported": ("✓", "green"), "contradicted": ("✗", "red"), "unsupported": ("!", "yellow")}


def _page(e: Evidence) -> str:
    p0, p1 = e.page_start, e.page_end
    if p0 is None:
        return ""
    txt = f"p.{p0}" if p1 in (None, p0) else f"pp.{p0}–{p1}"
    if e.page_label and str(e.page_label) != str(p0):
        txt += f" (printed {e.page_label})"
    return txt + (" (OCR)" if e.ocr_pages else "")


def _short(s: str, n: int) -> str:
    s = " ".join((s or "").split())
    return s if len(s) <= n else s[:n - 1] + "…"


def _evidence_line(e: Evidence, width: int):
    from rich.text import Text

    t = Text("    ")
    mark, style = MARK.get(e.label, ("·", "dim"))
    t.append(f"{mark} ", style=style)
    pg = _page(e)
    tail = f"  [{e.route}] score {float(e.score or 0):.2f}"
    # the document name gives way (…) so the header stays one line
    room = max(12, width - 6 - (len(pg) + 2 if pg else 0) - len(tail))
    t.append(_short(str(e.document or "?"), room), style="bold")
    if pg:
        t.append(f"  {pg}", style="cyan")
    t.append(tail, style="dim")
    t.append("\n      “" + _short(quote_line(e.to_json()), max(40, width - 10)) + "”", style="italic")
    if e.reason:
        t.append("\n      " + _short(e.reason, max(40, width - 8)), style="dim")
    return t


def shown_evidence(c, per_claim: int) -> list:
    """The evidence lines of a claim, best first; when the header says its citations hold the
    evidence, a cited unit that supports it is among them (the reader sees what holds it)."""
    shown = list(c.evidence[:per_claim])
    if c.cited_supports and not any(e.route in ("cited", "both") and e.label == "supported" for e in shown):
        held = next((e for e in c.cited if e.label == "supported"), None)
        if held is not None:
            shown = [held] + shown[:max(per_claim - 1, 0)]
    return shown


def verify_view(result: VerifyResult, width: int = 100, per_claim: int = 2):
    from rich.console import Group
    from rich.text import Text

    parts = []
    claims = result.claims
    if not claims:
        parts.append(Text("the answer has no checkable claims (headings, questions and filler are skipped)",
                          style="yellow"))
    for n, c in enumerate(claims, 1):
        mark, style = MARK.get(c.verdict, ("?", "dim"))
        head = Text()
        head.append(f"{mark} ", style=f"bold {style}")
        head.append(f"{n}. ", style="dim")
        head.append(_short(c.text or "", max(30, width - 38)))
        if c.citations:
            head.append(f"  citations {'hold' if c.cited_supports else 'miss'} the evidence",
                        style="green" if c.cited_supports else "magenta")
        else:
            head.append("  (no citation)", style="dim")
        parts.append(head)
        if not c.evidence:
            parts.append(Text("    no evidence found in the index", style="dim"))
        for e in shown_evidence(c, per_claim):
            parts.append(_evidence_line(e, width))
        for u in c.unresolved:
            why = f" — {u['reason']}" if u.get("reason") else ""
            parts.append(Text(f"    unresolved citation: {u.get('kind')} ({u.get('id')}){why}", style="red"))
    parts.extend(index_changes_lines(result.index_changes))
    sm = result.summary
    line = Text()
    if sm.get("claims"):
        line.append(f"{sm['claims']} claims: ", style="bold")
        line.append(f"{sm.get('supported', 0)} supported", style="green")
        line.append(", ")
        line.append(f"{sm.get('contradicted', 0)} contradicted", style="red")
        line.append(", ")
        line.append(f"{sm.get('unsupported', 0)} unsupported", style="yellow")
        ratio = sm.get("supported_ratio")
        if ratio is not None:
            line.append(f"  ({ratio:.0%} supported)")
        if sm.get("citation_recall") is not None:
            rec = sm["citation_recall"]
            prec = sm.get("citation_precision")
            line.append(f"  ·  citation recall {rec:.0%}" + (f", precision {prec:.0%}" if prec is not None else ""),
                        style="dim")
    else:
        line.append("0 claims", style="bold")
    line.append(f"  ·  judge {result.method}", style="dim")
    judged = ((result.llm or {}).get("stages") or {}).get("judge")
    if judged and (judged.get("fallback") or judged.get("failed")):  # verdicts the model did not give
        from provrag.views.index import made_by

        line.append(f" (verdicts: {made_by(judged)})", style="yellow")
    if result.trace_id:
        line.append(f"  ·  trace {result.trace_id}", style="dim")
    parts.append(Text(""))
    parts.append(line)
    for warning in (result.llm or {}).get("warnings") or []:
        parts.append(Text(f"warning: {warning}", style="yellow"))
    return Group(*parts)
