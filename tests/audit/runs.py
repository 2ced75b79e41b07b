"""Real runs the audit tests build reports from: an index of a folder, then a real `ask` and
a real `verify --trace` of its answer. Shared by test_report.py and test_report_browser.py,
so both test the report on what provrag actually produces, not on a hand-made verify dict."""
from __future__ import annotations

# the question the `small` fixture asks of ../shared/corpora/small (its answer cites R-FAQ.pdf)
QUESTION = "How do I install add-on packages in R?"

# a Markdown file whose text tries to inject markup into the report: it must show as text
INJECT = ("# Archive notes\n\nThe quarterly budget review found that <script>alert(1)</script> the committee "
          "approved the new archive building in March.\n\nThe archive stores \"><img src=x onerror=alert(1)> "
          "fragile manuscripts at a constant temperature of 18 degrees.\n")


def index_folder(docs, out):
    """`provrag index DOCS --out OUT` with the default config; returns OUT."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    run_index(docs, out, load_config())
    return out


def ask_and_verify(idx, question, method=None):
    """A real `ask` over the index, then a real `verify --trace` of its answer (both stored):
    (`ask --json`'s dict, [ask trace, verify trace], `verify --json`'s dict — the file format
    `provrag report --verify-json` reads)."""
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask
    from provrag.pipelines.verify import run_verify

    cfg = load_config()
    asked = run_ask(question, idx, cfg, method=method)
    verified = run_verify(idx, cfg, trace_id=asked.trace_id)
    return asked.to_json(), [asked.trace, verified.trace], verified.to_json()


def rows(sql: str) -> list[tuple]:
    """The rows of one DuckDB query over parquet files (an index read directly, as a user
    would check it, not through provrag's reader)."""
    import duckdb

    con = duckdb.connect()
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
