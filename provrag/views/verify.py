"""Rich rendering of `provrag verify`: one block per claim (✓ supported, ✗ contradicted,
! unsupported) with its best evidence — document, page and printed label, quote — and a
summary line. The best evidence is what decided the verdict: a supporting unit for ✓, a
contradicting one for ✗, the closest one for !.
"""
from __future__ import annotations

from provrag.views.resolve import quote_line

MARK = {"supported": ("✓", "green"), "contradicted": ("✗", "red"), "unsupported": ("!", "yellow")}


def _page(s: dict) -> str:
    p0, p1 = s.get("page_start"), s.get("page_end")
    if p0 is None:
        return ""
    txt = f"p.{p0}" if p1 in (None, p0) else f"pp.{p0}–{p1}"
    if s.get("page_label") and str(s["page_label"]) != str(p0):
        txt += f" (printed {s['page_label']})"
    return txt


def _short(s: str, n: int) -> str:
    s = " ".join((s or "").split())
    return s if len(s) <= n else s[:n - 1] + "…"


def _evidence_line(s: dict, width: int):
    from rich.text import Text

    t = Text("    ")
    mark, style = MARK.get(s.get("label"), ("·", "dim"))
    t.append(f"{mark} ", style=style)
    pg = _page(s)
    tail = f"  [{s.get('route')}] score {float(s.get('score') or 0):.2f}"
    # the document name gives way (…) so the header stays one line
    room = max(12, width - 6 - (len(pg) + 2 if pg else 0) - len(tail))
    t.append(_short(str(s.get("document") or "?"), room), style="bold")
    if pg:
        t.append(f"  {pg}", style="cyan")
    t.append(tail, style="dim")
    t.append("\n      “" + _short(quote_line(s), max(40, width - 10)) + "”", style="italic")
    if s.get("reason"):
        t.append("\n      " + _short(s["reason"], max(40, width - 8)), style="dim")
    return t


def verify_view(result: dict, width: int = 100, per_claim: int = 2):
    from rich.console import Group
    from rich.text import Text

    parts = []
    claims = result.get("claims") or []
    if not claims:
        parts.append(Text("the answer has no checkable claims (headings, questions and filler are skipped)",
                          style="yellow"))
    for n, c in enumerate(claims, 1):
        mark, style = MARK.get(c.get("verdict"), ("?", "dim"))
        head = Text()
        head.append(f"{mark} ", style=f"bold {style}")
        head.append(f"{n}. ", style="dim")
        head.append(_short(c.get("text") or "", max(30, width - 38)))
        cits = c.get("citations") or []
        if cits:
            head.append(f"  citations {'hold' if c.get('cited_supports') else 'miss'} the evidence",
                        style="green" if c.get("cited_supports") else "magenta")
        else:
            head.append("  (no citation)", style="dim")
        parts.append(head)
        ev = c.get("evidence") or []
        if not ev:
            parts.append(Text("    no evidence found in the index", style="dim"))
        for s in ev[:per_claim]:
            parts.append(_evidence_line(s, width))
        for u in c.get("unresolved") or []:
            parts.append(Text(f"    unresolved citation: {u.get('kind')} ({u.get('id')})", style="red"))
    sm = result.get("summary") or {}
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
    line.append(f"  ·  judge {result.get('method')}", style="dim")
    if result.get("trace_id"):
        line.append(f"  ·  trace {result['trace_id']}", style="dim")
    parts.append(Text(""))
    parts.append(line)
    return Group(*parts)
