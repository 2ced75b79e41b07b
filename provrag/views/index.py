"""The rich rendering of `provrag index`'s summary (other commands have their own module)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from provrag.index.summary import IndexSummary


def index_summary(s: IndexSummary):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(title=Text(f"provrag index → {s.index}"), show_header=True, header_style="bold")
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
        if key == "pages":  # where the text of a page came from, when not all from a text layer
            for extra, what in (("pages_ocr", "  of which by OCR"), ("pages_without_text", "  of which without text")):
                if getattr(s, extra):
                    t.add_row(what, str(getattr(s, extra)))
    llm = s.llm or {}
    t.add_row("LLM calls", f"{llm.get('calls', 0)} sent, {llm.get('cached', 0)} cached, {llm.get('failed', 0)} failed"
              + (f" ({s.engine})" if s.engine else ""))
    for stage, n in (llm.get("stages") or {}).items():  # how each stage's items were made
        t.add_row(f"  {stage}", made_by(n))
    t.add_row("seconds", f"{s.seconds:.1f}")
    parts = [t]
    for line in llm.get("warnings") or []:  # a stage where most items were not the model's
        parts.append(Text(f"warning: {line}", style="yellow"))
    if s.index_version:
        parts.append(Text(_over_time(s)))
    if s.waiting_for_ocr:  # scanned pages nothing read: name the files and say how to have them read
        n = len(s.waiting_for_ocr)
        names = ", ".join(s.waiting_for_ocr[:5]) + (f" and {n - 5} more" if n > 5 else "")
        parts.append(Text(f"waiting for OCR ({n} document{'s' if n > 1 else ''} with scanned pages not read): "
                          f"{names}. To read them, {s.ocr_hint}", style="yellow"))
    if s.problems:
        p = Table(title="files not indexed", header_style="bold")
        p.add_column("file")
        p.add_column("status")
        p.add_column("why")
        for row in s.problems:
            p.add_row(Text(row["path"]), row["status"], Text(str(row["error"] or "")))  # a name is not markup
        parts.append(p)
    return Group(*parts)


def _over_time(s: IndexSummary) -> str:
    """One line: which version of the index this is and what the run changed (index/versions.py)."""
    counts = (s.changes or {}).get("counts") or {}
    files = ", ".join(f"{counts[k]} {k}" for k in ("added", "changed", "removed") if counts.get(k))
    if s.mode == "up to date":
        return (f"up to date: nothing changed in the documents or the index settings since version {s.run} "
                f"({s.index_version}); the index was left as it was")
    units = (s.ids or {}).get("text_units") or {}
    ids = f"; text units {units.get('added', 0)} new, {units.get('retired', 0)} retired" if s.mode != "first" else ""
    what = {"first": "a new index", "update": "an update", "full": "a full rebuild"}.get(s.mode, s.mode)
    return f"version {s.run} ({s.index_version}), {what}" + (f": files {files}" if files else "") + ids


def made_by(counts: dict) -> str:
    """'12 by the model, 3 offline fallback, 1 failed' (the parts that are not zero; the model's always)."""
    words = (("by_model", "by the model"), ("fallback", "offline fallback"), ("failed", "failed"))
    return ", ".join(f"{counts.get(k, 0)} {w}" for k, w in words if k == "by_model" or counts.get(k))
