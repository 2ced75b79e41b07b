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


def fail(message: str, code: int = 2) -> None:
    """One line on stderr and an exit status; never a traceback for bad input."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
