"""Rich rendering of a resolution (`provrag resolve`; `ask` can reuse `sources_table`).

The answer comes first with every cited sentence numbered ([1], [2], … after its citation
block), then one table of sources per numbered sentence, then what did not resolve. Pages
read "p. 12" or "pp. 12–13", with the printed label beside the physical page when they
differ ("p. 14 (label 'xii')"); a GraphRAG index has no pages, and says so instead of
inventing one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from provrag.views.since import index_changes_lines

if TYPE_CHECKING:
    from provrag.results import ResolveResult


def page_text(src: dict) -> str:
    """'p. 12', 'pp. 12–13', "p. 14 (label 'xii')", 'p. 4 (OCR)', or '—' when the index has no pages."""
    p0, p1, label = src.get("page_start"), src.get("page_end"), src.get("page_label")
    if p0 is None:
        return "—"
    s = f"p. {p0}" if p1 in (None, p0) else f"pp. {p0}–{p1}"
    if label not in (None, "", str(p0)):
        s += f" (label '{label}')"
    if src.get("ocr"):  # the page has no text layer: its words are Tesseract's reading
        s += " (OCR)"
    return s


def quote_line(src: dict) -> str:
    """A source's quote on one line (sentences.display_quote); the quote itself (--json, char
    offsets) stays verbatim."""
    from provrag.text.sentences import display_quote

    return display_quote(src.get("quote"), src.get("page_end") not in (None, src.get("page_start")))


class _Sources:
    """A table on a wide terminal; on a narrow one (or a pipe, which rich treats as 80
    columns) one entry per source, the quote on its own lines, so no column is squeezed
    to a word per line."""

    WIDE = 110

    def __init__(self, sources: list[dict], title: str | None, has_pages: bool):
        self.sources, self.title, self.has_pages = sources, title, has_pages

    def __rich_console__(self, console, options):
        if options.max_width >= self.WIDE:
            yield _table(self.sources, self.title, self.has_pages)
            return
        from rich.padding import Padding
        from rich.text import Text

        if self.title:
            yield Text(self.title, style="italic")
        for n, s in enumerate(self.sources, 1):
            page = page_text(s)
            if page == "—":
                page = f"unit {s.get('text_unit')}"
            head = Text.assemble((f"{n:>2}. ", "bold"), (str(s.get("document") or ""), "bold"), f"  {page}",
                                 (f"  score {s.get('score', 0):.2f}", "dim"))
            yield head
            q = quote_line(s)
            if q:
                yield Padding(Text(f"“{q}”"), (0, 0, 0, 4))
            if s.get("via"):
                yield Padding(Text(s["via"], style="dim"), (0, 0, 0, 4))


def sources_table(sources: list[dict], title: str | None = None, has_pages: bool = True):
    """The sources of an answer, best first, laid out for the terminal's width."""
    return _Sources(sources, title, has_pages)


def _table(sources: list[dict], title: str | None = None, has_pages: bool = True):
    from rich.table import Table
    from rich.text import Text

    t = Table(title=title, title_justify="left", show_header=True, header_style="bold",
              expand=True, show_lines=False)
    t.add_column("#", justify="right", no_wrap=True, width=2)
    t.add_column("document", min_width=12, max_width=30, overflow="fold")
    t.add_column("page" if has_pages else "page / unit", no_wrap=True)
    t.add_column("quote", ratio=6, min_width=24)
    t.add_column("via", ratio=3, min_width=14, overflow="fold", style="dim")
    t.add_column("score", justify="right", no_wrap=True)
    for n, s in enumerate(sources, 1):
        page = page_text(s)
        if page == "—":
            page = f"— (unit {s.get('text_unit')})"
        q = quote_line(s)
        t.add_row(str(n), Text(str(s.get("document") or "")), page, Text(f"“{q}”" if q else ""),
                  Text(s.get("via") or ""), f"{s.get('score', 0):.2f}")
    return t


def numbered_answer(answer: str):
    """The answer with a bold [n] after each citation block (n = cited sentence number)."""
    from rich.text import Text

    from provrag.query.citations import parse_citations

    txt = Text()
    pos = 0
    for b in parse_citations(answer).blocks:
        txt.append(answer[pos:b.span[1]])
        txt.stylize("cyan", len(txt) - (b.span[1] - b.span[0]), len(txt))
        txt.append(f" [{b.sentence_index}]", style="bold magenta")
        pos = b.span[1]
    txt.append(answer[pos:])
    return txt


def resolve_view(result: ResolveResult):
    from rich.console import Group
    from rich.panel import Panel
    from rich.rule import Rule
    from rich.text import Text

    idx = result.index or {}
    has_pages = bool(idx.get("has_pages"))
    parts = [Panel(numbered_answer(result.answer or ""), title="answer", title_align="left")]
    if not has_pages:
        parts.append(Text(f"{idx.get('kind', 'this')} index: GraphRAG keeps no pages — sources show the "
                          f"document and text unit.", style="yellow"))
    by_sentence: dict[int, dict] = {}
    for c in result.citations:
        g = by_sentence.setdefault(c.sentence_index, {"sentence": c.sentence, "refs": []})
        g["refs"].append(c)
    for i, g in by_sentence.items():
        refs = "; ".join(f"{c.kind} ({', '.join(map(str, c.ids))}{', +more' if c.more else ''})" for c in g["refs"])
        parts.append(Rule(style="dim"))
        head = Text()
        head.append(f"[{i}] ", style="bold magenta")
        head.append(g["sentence"] or "(no sentence before the citation)")
        head.append(f"  cites {refs}", style="cyan")
        parts.append(head)
        srcs = [s.to_json() for s in result.sources if s.sentence_index == i]
        if srcs:
            parts.append(sources_table(srcs, has_pages=has_pages))
        unres = [u for u in result.unresolved if u.sentence_index == i]
        dead = [d for d in result.dead_ends if d.get("sentence_index") == i]
        for u in unres:
            parts.append(Text(f"  unresolved: {u.kind} {u.id} — {u.reason or 'not in this index'}", style="bold red"))
        for d in dead:
            parts.append(Text(f"  {d['kind']} {d['id']} exists but leads to no text unit", style="yellow"))
        if not srcs and not unres and not dead:
            parts.append(Text("  no source found", style="yellow"))
    if not result.citations:
        parts.append(Text("no [Data: …] citation found in the answer", style="yellow"))
    for p in result.problems:
        parts.append(Text(f"unreadable citation text: {p['fragment']!r} ({p['reason']})", style="red"))
    n_unres = len({(u.kind, u.id) for u in result.unresolved})
    n_ids = len({(c.kind, i) for c in result.citations for i in c.ids})
    parts.extend(index_changes_lines(result.index_changes))
    parts.append(Rule(style="dim"))
    parts.append(Text(f"{len(by_sentence)} cited sentences, {n_ids} distinct ids cited, "
                      f"{n_ids - n_unres} resolved, {n_unres} unresolved, {len(result.sources)} sources listed",
                      style="bold"))
    return Group(*parts)
