"""The `provrag` command: parses arguments, calls a pipeline, renders the result.

Thin on purpose (sqlite-utils style): everything it does is a library call in provrag/ or
pipelines/. `--json` prints one JSON document on stdout and nothing else; progress, logs
and errors go to stderr. Exit status: 0 success, 1 a check failed, 2 bad usage or input.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

app = typer.Typer(
    help="provrag: a provenance-first GraphRAG. Index documents, ask with citations, "
    "resolve every citation to document and page, verify every claim.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()                 # stdout: results
err = Console(stderr=True)      # stderr: progress, logs, errors

ConfigOpt = typer.Option(None, "--config", "-c", help="TOML file overriding keys of config.toml.",
                         exists=False, dir_okay=False)
JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout, nothing else.")
IndexOpt = typer.Option(..., "--index", "-i", help="A provrag index folder or a Microsoft GraphRAG output folder.")


def _version(value: bool) -> None:
    if value:
        from provrag import __version__

        out.print(f"provrag {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """provrag: a provenance-first GraphRAG."""


def fail(message: str, code: int = 2) -> None:
    """One line on stderr and an exit status; never a traceback for bad input."""
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")


def load_cfg(config: Optional[Path], overrides: dict | None = None) -> dict:
    from provrag.config import ConfigError, load_config

    try:
        return load_config(config, overrides)
    except ConfigError as e:
        fail(str(e))


@app.command()
def index(
    docs: Path = typer.Argument(..., help="Folder of documents (searched recursively): PDF, DOCX, PPTX, HTML, Markdown, text; .gz too."),
    out_dir: Path = typer.Option(..., "--out", "-o", help="Index folder to write (replaced atomically when complete)."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Build a GraphRAG-compatible index whose text units know their document and page."""
    from pipelines.index import IndexError_, run_index
    from provrag.progress import StageProgress

    if not docs.exists():
        fail(f"no such folder: {docs}")
    if not docs.is_dir():
        fail(f"not a folder: {docs}")
    cfg = load_cfg(config)
    try:
        with StageProgress(err, enabled=not as_json) as progress:
            summary = run_index(docs, out_dir, cfg, progress=progress)
    except IndexError_ as e:
        fail(str(e))
    if as_json:
        emit_json(summary)
    else:
        from provrag.render import index_summary

        out.print(index_summary(summary))
    if summary["documents_ok"] == 0:
        err.print("[bold red]error:[/] no document could be indexed")
        raise typer.Exit(2)


# ---- further commands are added below, one function each ----


@app.command()
def resolve(
    text: Optional[str] = typer.Argument(None, help="Answer text or a [Data: …] citation; '-' reads stdin."),
    index_dir: Path = IndexOpt,
    answer_file: Optional[Path] = typer.Option(None, "--answer-file", "-f",
                                               help="Read the answer from a file (text, or JSON with an \"answer\" key)."),
    top: Optional[int] = typer.Option(None, "--top", "-k", help="Sources per cited sentence (default [resolve] top_k)."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Resolve every [Data: …] citation to document, page and quote, without asking anything."""
    from provrag.reader import IndexNotFound, open_index
    from provrag.resolve import resolve_answer

    given = [x for x in (text is not None, answer_file is not None) if x]
    if len(given) != 1:
        fail("give the answer text, '-' to read stdin, or --answer-file F (exactly one)")
    if top is not None and top < 1:
        fail(f"--top must be at least 1 (got {top})")
    cfg = load_cfg(config)
    if answer_file is not None:
        try:
            raw = answer_file.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            fail(f"cannot read answer file {answer_file}: {e.strerror or e}")
        from provrag.citations import answer_in_json

        found = answer_in_json(raw) if answer_file.suffix.lower() == ".json" else None
        answer = found[0] if found else raw
    elif text == "-":
        answer = sys.stdin.read()
    else:
        answer = text
    try:
        reader = open_index(index_dir)
    except IndexNotFound as e:
        fail(str(e))
    import duckdb

    with reader:
        try:
            result = resolve_answer(reader, answer, top_k=top or int(cfg["resolve"]["top_k"]))
        except (duckdb.Error, OSError) as e:  # a damaged parquet file found mid-query
            fail(f"cannot read index {index_dir}: {str(e).splitlines()[0][:200]}")
    if as_json:
        emit_json(result)
    else:
        from provrag.render_resolve import resolve_view

        out.print(resolve_view(result))


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question ('-' reads it from stdin)."),
    index_dir: Path = IndexOpt,
    method: Optional[str] = typer.Option(None, "--method", "-m",
                                         help="global | local | basic | auto (default: search.default_method in config.toml)."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Answer a question with [Data: …] citations, then its sources by document and page."""
    from pipelines.ask import AskError, run_ask

    if question == "-":
        question = sys.stdin.read()
    if method is not None and method.strip().lower() not in ("auto", "global", "local", "basic"):
        fail(f"unknown --method '{method}' (expected auto, global, local or basic)")
    cfg = load_cfg(config)
    try:
        result = run_ask(question, index_dir, cfg, method=method)
    except AskError as e:
        fail(str(e))
    trace = result.pop("_trace", {})
    if result.get("_trace_error"):
        err.print(f"[yellow]warning:[/] {result['_trace_error']}")
    if as_json:
        emit_json({k: v for k, v in result.items() if not k.startswith("_")})
    else:
        from provrag.render_ask import ask_view

        out.print(ask_view(result, has_pages=trace.get("index_kind") == "provrag", full_sources=trace.get("sources")))


@app.command()
def trace(
    trace_id: str = typer.Argument(..., help="A trace id as printed by ask (a unique prefix is enough)."),
    index_dir: Optional[Path] = typer.Option(None, "--index", "-i",
                                             help="Index whose traces to search (default: every folder traces were saved to)."),
    fmt: str = typer.Option("tree", "--format", "-f", help="tree | json | prov (W3C PROV JSON-LD)."),
):
    """Show one stored query trace: its stages, candidates, context, answer and sources."""
    from provrag.trace import TraceNotFound, load_trace, to_prov

    if fmt not in ("tree", "json", "prov"):
        fail(f"unknown --format '{fmt}' (expected tree, json or prov)")
    try:
        t = load_trace(trace_id, index_dir)
    except TraceNotFound as e:
        fail(str(e))
    if fmt == "json":
        emit_json(t)
    elif fmt == "prov":
        emit_json(to_prov(t))
    else:
        from provrag.render_ask import trace_tree

        out.print(trace_tree(t))


@app.command("log")
def log_(
    text: Optional[str] = typer.Argument(None, help="Only traces whose question, answer, method or id contains this."),
    index_dir: Optional[Path] = typer.Option(None, "--index", "-i",
                                             help="Index whose traces to list (default: every folder traces were saved to)."),
    n: int = typer.Option(20, "-n", help="How many (most recent first)."),
    kind: Optional[str] = typer.Option(None, "--kind", help="Only traces of this kind (ask, verify)."),
    as_json: bool = JsonOpt,
):
    """List recent queries (and verify runs) with their trace ids."""
    from provrag.trace import list_traces

    if n < 0:
        fail(f"-n must be 0 or more (got {n})")
    if index_dir is not None and not index_dir.is_dir():
        fail(f"no such index folder: {index_dir}")
    rows = list_traces(index_dir, n=n, text=text, kind=kind)
    if as_json:
        emit_json(rows)
    elif not rows:
        err.print("no stored traces" + (f" matching '{text}'" if text else ""))
    else:
        from provrag.render_ask import log_table

        out.print(log_table(rows, out.width))


@app.command()
def report(
    index_dir: Path = IndexOpt,
    out_file: Path = typer.Option(..., "--out", "-o", help="HTML file to write (one self-contained file)."),
    trace_id: Optional[str] = typer.Option(None, "--trace", "-t", help="A stored ask or verify trace id."),
    verify_json: Optional[Path] = typer.Option(None, "--verify-json", "-f", help="A file written by `provrag verify --json`."),
    max_pages: int = typer.Option(8, "--max-pages", help="At most this many PDF page images (keeps the file small)."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Write an HTML audit report: claims by verdict, evidence pages highlighted, the query trace."""
    from pipelines.report import ReportError, run_report

    cfg = load_cfg(config)
    try:
        res = run_report(index_dir, out_file, trace_id=trace_id, verify_json=verify_json, max_pages=max_pages, cfg=cfg)
    except ReportError as e:
        fail(str(e))
    if as_json:
        emit_json(res)
    else:
        out.print(f"wrote {res['out']} ({res['bytes'] / 1024:.0f} KiB): {res['claims']} claims — "
                  f"{res['supported']} supported, {res['contradicted']} contradicted, {res['unsupported']} unsupported; "
                  f"{res['page_images']} page images", highlight=False)


@app.command()
def verify(
    stdin_flag: Optional[str] = typer.Argument(None, metavar="[-]", help="'-' reads the answer from stdin."),
    index_dir: Path = IndexOpt,
    trace_id: Optional[str] = typer.Option(None, "--trace", "-t", help="Verify the answer of a stored ask trace (its question too)."),
    answer_file: Optional[Path] = typer.Option(None, "--answer-file", "-f", help="Read the answer from a file."),
    answer: Optional[str] = typer.Option(None, "--answer", "-a", help="The answer text."),
    question: Optional[str] = typer.Option(None, "--question", "-q",
                                           help="The question answered: makes short answers (\"Delhi\") checkable claims."),
    fail_under: Optional[float] = typer.Option(None, "--fail-under",
                                               help="Exit 1 when the share of supported claims is under R (0..1)."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Check each claim of an answer against the index: verdict, evidence by document and page."""
    from pipelines.verify import VerifyError, run_verify

    if stdin_flag is not None and stdin_flag != "-":
        fail(f"unexpected argument '{stdin_flag[:40]}': give the answer with --answer TEXT, --answer-file F, "
             "--trace ID or '-' for stdin")
    given = [x for x in (stdin_flag, trace_id, answer_file, answer) if x is not None]
    if len(given) != 1:
        fail("give exactly one answer: --trace ID, --answer-file F, --answer TEXT or - (stdin)")
    if fail_under is not None and not 0.0 <= fail_under <= 1.0:
        fail(f"--fail-under must be between 0 and 1 (got {fail_under})")
    cfg = load_cfg(config)
    stdin_text = sys.stdin.read() if stdin_flag == "-" else None
    try:
        result = run_verify(index_dir, cfg, answer=answer, answer_file=answer_file, trace_id=trace_id,
                            stdin_text=stdin_text, question=question)
    except VerifyError as e:
        fail(str(e))
    result.pop("_trace", None)
    if result.get("trace_error"):
        err.print(f"[yellow]warning:[/] verify run not stored: {result['trace_error']}")
    if as_json:
        emit_json(result)
    else:
        from provrag.render_verify import verify_view

        out.print(verify_view(result, width=out.width))
    ratio = result["summary"].get("supported_ratio")
    if fail_under is not None and (ratio is None or ratio < fail_under):
        err.print(f"[bold red]check failed:[/] supported share {0 if ratio is None else ratio:.0%} "
                  f"is under {fail_under:.0%}")
        raise typer.Exit(1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
