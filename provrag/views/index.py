"""The rich rendering of `provrag index`'s summary (other commands have their own module)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from provrag.index.summary import IndexSummary


def index_summary(s: IndexSummary):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"provrag index → {s.index}", show_header=True, header_style="bold")
    t.add_column("what")
    t.add_column("count", justify="right")
    docs = f"{s.documents_ok} ok"
    if s.documents_failed:
        docs += f", {s.documents_failed} failed"
    if s.documents_skipped:
        docs += f", {s.documents_skipped} skipped"
    t.add_row("documents", docs)
    for key, label in (("pages", "pages"), ("text_units", "text units"), ("skeleton_units", "skeleton units"),
                       ("entities", "entities"), ("relationships", "relationships"), ("communities", "communities"),
                       ("community_reports", "community reports")):
        t.add_row(label, str(getattr(s, key)))
    llm = s.llm or {}
    t.add_row("LLM calls", f"{llm.get('calls', 0)} sent, {llm.get('cached', 0)} cached, {llm.get('failed', 0)} failed"
              + (f" ({s.engine})" if s.engine else ""))
    t.add_row("seconds", f"{s.seconds:.1f}")
    parts = [t]
    if s.problems:
        p = Table(title="files not indexed", header_style="bold")
        p.add_column("file")
        p.add_column("status")
        p.add_column("why")
        for row in s.problems:
            p.add_row(row["path"], row["status"], Text(str(row["error"] or "")))
        parts.append(p)
    return Group(*parts)
