"""How `verify --trace` and `resolve --trace` tell a user that the index changed under an answer."""
from __future__ import annotations

STYLES = {"head": "bold yellow", "retired": "red", "changed": "yellow", "unknown": "yellow"}


def index_changes_lines(changes: dict | None) -> list:
    """Rich lines naming the cited ids retired or rewritten since the answer's index version
    (query/since.describe_changes; nothing when none was)."""
    from rich.text import Text

    from provrag.query.since import describe_changes

    return [Text(("" if level == "head" else "  ") + line, style=STYLES[level])
            for level, line in describe_changes(changes)]
