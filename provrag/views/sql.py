"""Rich rendering of `provrag sql`: the rows as a table, long cells cut to one line, and a
footer that says when the row limit cut the result (a silent cut would read as "that is all")."""
from __future__ import annotations

import json


def cell_text(value, limit: int = 120) -> str:
    """One line per cell: lists and structs as JSON, long text shortened with an ellipsis."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sql_table(result):
    """`result`: a store.sql.SqlResult (columns, rows, truncated)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=True, header_style="bold")
    for name in result.columns:
        table.add_column(name, overflow="ellipsis", no_wrap=True)
    for row in result.rows:
        table.add_row(*(Text(cell_text(v)) for v in row))
    n = len(result.rows)
    footer = f"{n} row{'s' if n != 1 else ''}"
    if result.truncated:
        footer += " (cut at the limit: more rows match; raise --limit)"
    return Group(table, Text(footer, style="yellow" if result.truncated else "dim"))
