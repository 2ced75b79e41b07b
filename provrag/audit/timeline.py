"""A stored trace (an ask, or a verify run) as the report's last section: its facts, a
timeline of its stages as inline SVG, and each stage's data folded under it.

Why it renders any value: a trace's stage data is whatever that stage chose to record, and
traces are read back from files of any provrag version; so every value becomes escaped HTML
(dicts as definition lists, lists of records as tables, the rest shortened), never a
traceback, and a stage without a start time is placed after the one before it.
"""
from __future__ import annotations

import datetime as dt

from provrag.audit.markup import as_float, esc, shorten


def _data_html(value, depth: int = 0) -> str:
    """Any trace value as escaped HTML: dicts as definition lists, lists of records as tables."""
    if isinstance(value, dict):
        if depth >= 3 or not value:
            return f'<code>{esc(shorten(value))}</code>'
        return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{_data_html(v, depth + 1)}</dd>" for k, v in value.items()) + "</dl>"
    if isinstance(value, list):
        if value and all(isinstance(x, dict) for x in value) and depth < 3:
            cols = []
            for row in value[:12]:
                for k, x in row.items():
                    if k not in cols and not isinstance(x, (dict, list)):
                        cols.append(k)
            cols = cols[:9]
            rows = "".join("<tr>" + "".join(f"<td>{esc(shorten(r.get(c), 60)) if r.get(c) is not None else ''}</td>"
                                            for c in cols) + "</tr>" for r in value[:12])
            more = f'<p class="more">… {len(value) - 12} more</p>' if len(value) > 12 else ""
            return (f'<table><thead><tr>{"".join(f"<th>{esc(c)}</th>" for c in cols)}</tr></thead>'
                    f'<tbody>{rows}</tbody></table>{more}')
        return f'<code>{esc(shorten(value, 400))}</code>' if value else "—"
    if isinstance(value, float):
        return esc(f"{value:.4g}")
    return esc(shorten(value, 600)) if value is not None else "—"


def _ts(s) -> float | None:
    """An ISO time as epoch milliseconds, None where it is not one."""
    try:
        return dt.datetime.fromisoformat(str(s)).timestamp() * 1000
    except (TypeError, ValueError):
        return None


def trace_html(trace: dict) -> str:
    """One trace: its facts, a timeline of its stages (inline SVG), each stage's data folded."""
    stages = [s for s in trace.get("stages") or [] if isinstance(s, dict)]
    t0 = _ts(trace.get("created"))
    rows, off = [], 0.0
    for s in stages:
        ms = as_float(s.get("ms"))
        st = _ts(s.get("started"))
        start = st - t0 if (st is not None and t0 is not None) else off
        rows.append((s, max(0.0, start), ms))
        off = max(off, start + ms)
    total = max([as_float(trace.get("total_ms")), off] + [a + b for _, a, b in rows]) or 1.0
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
             ("model", trace.get("model")), ("total", f'{as_float(trace.get("total_ms")):.0f} ms'),
             ("model calls", usage.get("calls")), ("cached calls", usage.get("cached")),
             ("input tokens", usage.get("input_tokens")), ("output tokens", usage.get("output_tokens"))]
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts if v not in (None, ""))
    details = "".join(f'<details class="stage"><summary>{esc(s.get("label") or s.get("name"))} — {ms:.1f} ms</summary>'
                      f'{_data_html(s.get("data") or {})}</details>' for s, _, ms in rows)
    kind = str(trace.get("kind") or "ask")
    title = "Query trace" if kind == "ask" else f"{kind.title()} run"
    return (f'<section class="trace" id="trace-{esc(trace.get("trace_id"))}"><h2>{esc(title)}</h2>'
            f'<dl class="facts">{dl}</dl>{svg}{details}</section>')
