"""Rich rendering of `ask` (answer, sources table, trace id), `trace` (tree of stages) and `log`.

The answer is markdown (a model's answer has headings and lists; the offline one is plain
sentences), rendered by rich. The sources table is the resolver's (views/resolve.py) so
`ask` and `resolve` read the same.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from provrag.query.why import retrieved_why, why_line

if TYPE_CHECKING:
    from provrag.results import AskResult


def ask_view(result: AskResult):
    """The answer (markdown), its sources best first, what did not resolve, and the trace id."""
    from rich.console import Group
    from rich.markdown import Markdown
    from rich.panel import Panel
    from rich.text import Text

    from provrag.results import FURTHER_VIA
    from provrag.views.resolve import sources_table

    title = f"answer · {result.method} search"
    if result.abstained_by == "engine":  # the evidence covered the question: its score would read as a yes
        title += f" · no answer in passages covering it ({result.confidence:.2f})"
    elif result.confidence is not None:
        title += f" · confidence {result.confidence:.2f}"
    from provrag.views.citing import collapse_repeats

    # a run of sentences citing the same ids shows the block once (views/citing.py)
    parts = [Panel(Markdown(collapse_repeats(result.answer or "")), title=title, title_align="left",
                   border_style="yellow" if result.abstained else "none")]
    if result.error:  # the model's answer failed: say why and what stands in its place
        parts.append(Text(f"warning: {result.error}", style="yellow"))
    for r in result.removed_sentences:  # the answer check: what the cited sources did not support
        line = Text("removed (its sources do not support it): ", style="magenta")
        line.append(f"“{r.get('sentence')}”", style="italic")
        if r.get("reason"):
            line.append(f" — {r['reason']}", style="dim")
        parts.append(line)
    if result.stopped:   # an abstention no wider route was tried for, and why
        parts.append(Text(f"no wider route tried: {result.stopped}", style="yellow"))
    if not result.checked and not result.abstained:   # an abstention states nothing there is to check
        parts.append(Text("unchecked answer (--raw): its sentences were not judged against their sources", style="dim"))
    if result.abstained and result.sources:
        parts.append(sources_table([s.to_json() for s in result.sources], title="closest passages — not an answer",
                                   has_pages=result.has_pages))
    elif result.sources:
        # the JSON form carries the unit number shown for page-less GraphRAG indexes
        cited = [s.to_json() for s in result.sources if s.via != FURTHER_VIA]
        further = [s.to_json() for s in result.sources if s.via == FURTHER_VIA]
        parts.append(sources_table(cited, title="sources (best first)", has_pages=result.has_pages))
        if further:
            parts.append(further_lines(further))
    else:
        parts.append(Text("no sources: the answer cites nothing that resolves", style="yellow"))
    for u in result.unresolved:
        parts.append(Text(f"unresolved citation: {u.kind} ({u.id})", style="red"))
    tail = Text(f"trace {result.trace_id}", style="dim")
    tail.append(f"  ·  provrag trace {result.trace_id}", style="dim")
    if result.trace_error:
        tail.append(f"  ·  {result.trace_error}", style="yellow")
    parts.append(tail)
    return Group(*parts)


def further_lines(further: list[dict]):
    """The pages retrieval ranked next, which the answer does not cite: each its page and
    the start of its best-matching sentence (one line), a pointer for the reader, not a source."""
    from rich.console import Group
    from rich.text import Text

    from provrag.views.resolve import page_text, quote_line

    lines = [Text("further passages, not cited (the pages retrieval ranked next):", style="italic")]
    for s in further:
        page = page_text(s)
        lines.append(Text.assemble("  · ", (str(s.get("document") or ""), "bold"),
                                   f"  {page if page != '—' else 'unit ' + str(s.get('text_unit'))}"))
        quote = Text(f"“{quote_line(s)}”", style="dim", no_wrap=True, overflow="ellipsis")
        quote.pad_left(4)
        lines.append(quote)
    return Group(*lines)


def _short(v, n: int = 90) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 1] + "…"


def _page(c: dict) -> str:
    p0, p1 = c.get("page_start"), c.get("page_end")
    if p0 is None:
        return ""
    return (f" p.{p0}" if p1 in (None, p0) else f" pp.{p0}–{p1}") + (" (OCR)" if c.get("ocr") else "")


def trace_tree(t: dict, max_items: int = 8):
    """The trace as a tree: one branch per stage with its time and what it found."""
    from rich.text import Text
    from rich.tree import Tree

    head = Text()
    head.append(f"trace {t.get('trace_id')}", style="bold")
    head.append(f"  {t.get('kind')} · {t.get('created')} · {t.get('total_ms', 0):.0f} ms", style="dim")
    root = Tree(head)
    if t.get("question") is not None:
        root.add(Text(f"question: {t.get('question')}"))
    version = f" version {t['index_version']}" if t.get("index_version") else ""  # what its citations meant
    meta = root.add(Text(f"engine {t.get('engine')} · model {t.get('model')} · index {t.get('index')} "
                         f"({t.get('index_kind')}{version})", style="dim"))
    judged = t.get("judged_by") or {}
    if judged.get("judge"):   # a verify trace: which judge and which weights gave the verdicts
        line = f"judge {judged['judge']}"
        if judged.get("claim_head"):
            m = judged["claim_head"]
            line += f" · claim head {m.get('name', 'reader')} {m.get('version', '')} {str(m.get('sha256', ''))[:8]}"
        elif judged.get("claim_head_note"):
            line += f" · no claim head ({judged['claim_head_note']})"
        meta.add(Text(line, style="dim"))
    usage = t.get("usage") or {}
    if usage:
        meta.add(Text(f"llm: {usage.get('calls', 0)} calls, {usage.get('cached', 0)} cached, "
                      f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out tokens", style="dim"))
    for s in t.get("stages") or []:
        d = s.get("data") or {}
        br = root.add(Text.assemble((s.get("label") or s.get("name"), "bold cyan"), (f"  {s.get('ms') or 0:.1f} ms", "dim")))
        if s.get("name") == "question":
            if d.get("method"):
                br.add(Text(f"method {d.get('method')}: {d.get('why')}"))
            if d.get("terms"):
                br.add(Text(f"terms: {_short(d['terms'])}", style="dim"))
            if d.get("entities"):
                br.add(Text("entities named: " + ", ".join(f"{e['title']} ({e['id']})" for e in d["entities"][:10])))
        for key in ("what", "entities", "relationships", "reports") if s.get("name") == "exploration" else ():
            if d.get(key) and key != "what":
                br.add(Text(f"{key}: " + ", ".join(_short(x.get("title") or f"{x.get('source')}→{x.get('target')}", 40)
                                                   + f" ({x.get('id')})" for x in d[key][:max_items])))
            elif key == "what" and d.get(key):
                br.add(Text(d[key], style="dim"))
        cands = d.get("candidates")
        if cands:
            c_br = br.add(Text(f"{d.get('count', len(cands))} candidates (best {min(len(cands), max_items)})"))
            for c in cands[:max_items]:
                label = (f"{c.get('kind')} {c.get('id')}" + (f" · {c.get('title')}" if c.get("title") else "")
                         + (f" · {c.get('document')}{_page(c)}" if c.get("document") else ""))
                extra = "".join(f" {k} {c[k]:.3f}" for k in ("bm25", "cosine") if isinstance(c.get(k), (int, float)))
                node = c_br.add(Text.assemble(_short(label, 80), (f"  score {c.get('score', 0):.3f}{extra}", "dim")))
                if why_line(c.get("why"), head=False):   # why it ranks there: the score's parts, the words that drove it
                    node.add(Text(f"why: {why_line(c.get('why'), head=False)}", style="dim"))
        sel = d.get("selected")
        if sel:
            s_br = br.add(Text(f"{len(sel)} selected for the answer"))
            for c in sel[:max_items]:
                s_br.add(Text.assemble(_short(f"{c.get('label')} · {c.get('document') or ''}{_page(c)}", 80),
                                       (f"  {c.get('score', 0):.3f}", "dim")))
        if d.get("batches"):
            br.add(Text(f"map batches: {d['batches']}", style="dim"))
        if d.get("points"):
            p_br = br.add(Text(f"{len(d['points'])} map points"))
            for p in d["points"][:max_items]:
                p_br.add(Text.assemble(_short(p.get("description"), 100), (f"  score {p.get('score')}", "dim")))
        if s.get("name") == "answerability" and d.get("confidence") is not None:
            verdict = "abstained" if d.get("abstained") else "answers"
            br.add(Text(f"confidence {d['confidence']:.2f} (threshold {d.get('threshold')}): {verdict}; lexical coverage "
                        f"{d.get('lexical_coverage')}, semantic {d.get('semantic_coverage')}"
                        + (f"; missing {_short(d['missing_terms'], 60)}" if d.get("missing_terms") else "")))
        if s.get("name") == "synthesis" and d.get("answer"):
            br.add(Text(f"answer: {_short(d['answer'], 160)}"))
            if d.get("why"):
                br.add(Text(f"why: {_short(d['why'], 160)}", style="dim"))
        for i, r in enumerate(d.get("retrievals") or [] if s.get("name") == "evidence" else []):
            found = [c for c in r.get("candidates") or [] if isinstance(c, dict)]
            r_br = br.add(Text(f"claim {i + 1}: {len(found)} retrieved for “{_short(r.get('query') or '', 60)}”"))
            for c in found[:3]:
                r_br.add(Text.assemble(_short(f"{c.get('document')}{_page(c)}", 60),
                                       (f"  {why_line(c.get('why'))}", "dim")))
        if s.get("name") == "citations":
            br.add(Text(f"{d.get('citations', 0)} citations → {d.get('sources', 0)} sources, "
                        f"{len(d.get('unresolved') or [])} unresolved"))
        if s.get("name") == "check":  # the answer check: each sentence judged against its cited sources
            br.add(Text(f"{d.get('checked', 0)} sentences judged against their cited sources, "
                        f"{len(d.get('removed') or [])} removed"))
            for r in (d.get("removed") or [])[:max_items]:
                br.add(Text(f"removed: {_short(r.get('sentence'), 80)} — {_short(r.get('reason'), 60)}", style="magenta"))
    if len(t.get("attempts") or []) > 1:  # ask's retries over wider routes, and which attempt was kept
        a_br = root.add(Text("attempts", style="bold cyan"))
        for a in t["attempts"]:
            outcome = a.get("skipped") or ("abstained" if a.get("abstained") else "answered")
            conf = f" {a['confidence']:.2f}" if isinstance(a.get("confidence"), (int, float)) else ""
            docs = (a.get("scope") or {}).get("documents")   # the named route: the documents it read
            where = f" ({', '.join(docs[:3])}{', …' if len(docs) > 3 else ''})" if docs else ""
            a_br.add(Text(f"{a.get('attempt')}. {a.get('route')}{where}: {outcome}{conf}" + ("  (kept)" if a.get("kept") else ""),
                          style="bold" if a.get("kept") else "dim"))
    if t.get("stopped"):   # an abstention no wider route was tried for
        root.add(Text(f"no wider route tried: {t['stopped']}", style="yellow"))
    srcs = t.get("sources") or []
    if srcs:
        s_br = root.add(Text("sources", style="bold"))
        whys = retrieved_why(t)
        for s in srcs[:max_items]:
            node = s_br.add(Text.assemble(f"{s.get('document')}{_page(s)}", (f"  {s.get('via')}", "dim"),
                                          f"  “{_short(s.get('quote') or '', 80)}”"))
            if whys.get(s.get("text_unit_id")):
                node.add(Text(f"why this page: retrieved {why_line(whys[s.get('text_unit_id')])}", style="dim"))
    for k in ("verdicts", "summary"):  # verify traces (stored by the verify command) show their results too
        if t.get(k):
            root.add(Text(f"{k}: {_short(t[k], 200)}"))
    return root


def log_table(rows: list[dict], width: int = 120):
    from rich.table import Table
    from rich.text import Text

    t = Table(show_header=True, header_style="bold", expand=True)
    t.add_column("trace", no_wrap=True)
    t.add_column("when (UTC)", no_wrap=True)
    wide = width >= 110  # on a narrow terminal the question matters more than the answer
    t.add_column("method", no_wrap=True)
    if wide:
        t.add_column("kind", no_wrap=True)
    t.add_column("question", ratio=4, no_wrap=True, overflow="ellipsis")
    if wide:
        t.add_column("answer", ratio=5, no_wrap=True, overflow="ellipsis")
    t.add_column("src", justify="right", no_wrap=True)
    for r in rows:
        method = r.get("method") or ""
        if not wide and (r.get("kind") or "ask") != "ask":  # no kind column: a verify run's "method" is its judge
            method = f"{r['kind']} ({method})" if method else r["kind"]
        cells = [r["trace_id"], (r.get("created") or "")[:16].replace("T", " "), method]
        if wide:
            cells.append(r.get("kind") or "")
        cells.append(Text(_short(r.get("question") or "", 100)))
        if wide:
            cells.append(Text(_short(r.get("answer") or "", 140)))
        cells.append(str(r.get("n_sources") or 0))
        t.add_row(*cells)
    return t
