"""The `provrag` command: parses arguments, calls a pipeline, renders the result.

Thin on purpose (sqlite-utils style): everything it does is a library call in provrag/ or
pipelines/. `--json` prints one JSON document on stdout and nothing else; progress, logs
and errors go to stderr. Exit status: 0 success, 1 a check failed, 2 bad usage or input,
3 an internal error (a bug: `provrag --debug …` shows its traceback).

Errors are handled in one place, `_Commands.invoke`: every provrag error carries its message
and exit status (provrag/errors.py). Heavy imports happen inside the commands, so
`provrag --help` starts fast.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

from provrag.commands.common import (INTERNAL_ERROR, ConfigOpt, IndexOpt, JsonOpt, StrictOpt, console,
                                    emit_json, is_click_error, load_cfg, read_text_arg, say_error, say_warning,
                                    state, usage)
from provrag.commands import serving


class _Commands(TyperGroup):
    """Turns a provrag error into one line on stderr and its exit status; never a traceback
    unless `--debug` asks for one."""

    def invoke(self, ctx):
        from provrag.errors import ProvragError

        try:
            return super().invoke(ctx)
        except ProvragError as e:
            if state["debug"]:
                raise
            say_error(str(e).splitlines()[0] if str(e) else type(e).__name__,
                       "check failed" if e.exit_code == 1 else "error")
            raise typer.Exit(e.exit_code) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as e:  # a bug: say so in one line, keep the traceback for --debug
            if state["debug"] or is_click_error(e):  # click's own: its message, its exit status (2)
                raise
            first = str(e).splitlines()[0][:300] if str(e) else ""
            say_error(f"internal error: {type(e).__name__}{': ' + first if first else ''} "
                       "(run `provrag --debug …` for the traceback)")
            raise typer.Exit(INTERNAL_ERROR) from None


app = typer.Typer(
    cls=_Commands,
    help="provrag: a provenance-first GraphRAG. Index documents, ask with citations, "
    "resolve every citation to document and page, verify every claim.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: rich's help renderer costs ~0.3 s of start-up
)

def _version(value: bool) -> None:
    if value:
        from provrag import __version__

        print(f"provrag {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          debug: bool = typer.Option(False, "--debug", help="Show the traceback of an error.")) -> None:
    """provrag: a provenance-first GraphRAG."""
    state["debug"] = debug


@app.command()
def index(
    docs: Path = typer.Argument(..., help="Folder of documents (searched recursively), or one file: PDF, DOCX, PPTX, HTML, Markdown, text; .gz too."),
    out_dir: Path = typer.Option(..., "--out", "-o", help="Index folder to write (replaced atomically when complete)."),
    wait: bool = typer.Option(False, "--wait", help="If another `provrag index` is writing --out, wait for it instead of failing."),
    full: bool = typer.Option(False, "--full",
                              help="Rebuild everything from the files, reusing nothing of the previous index "
                                   "(its ids stay stable all the same)."),
    strict: bool = StrictOpt,
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Build a GraphRAG-compatible index whose text units know their document and page.

    Over an existing index the run is an update: only added and changed files are read,
    removed ones leave the index, and every unchanged unit, entity, relationship and
    community keeps its id and number, so old citations still resolve to the same text.

    \b
    Example:
      provrag index data --out output
      provrag index ~/manuals --out manuals-index --config my.toml --json
      provrag index ~/manuals --out manuals-index --full
    """
    from provrag.pipelines.index import run_index
    from provrag.views.progress import StageProgress

    if not docs.exists():
        usage(f"no such folder: {docs}")
    cfg = load_cfg(config, strict)
    # --json: no bars on a terminal, but a log (stderr not a terminal) still gets its lines
    with StageProgress(console(True), enabled=not as_json or not console(True).is_terminal) as progress:
        summary = run_index(docs, out_dir, cfg, progress=progress, full=full, wait=(  # one line on stderr
            lambda line: console(True).print(line, highlight=False, markup=False, soft_wrap=True)) if wait else None)
    if as_json:
        emit_json(summary.to_json())
    else:
        from provrag.views.index import index_summary

        console().print(index_summary(summary))
    if summary.documents_ok == 0:
        say_error("no document could be indexed")
        raise typer.Exit(2)


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question ('-' reads it from stdin)."),
    index_dir: Path = IndexOpt,
    method: Optional[str] = typer.Option(None, "--method", "-m",
                                         help="global | local | basic | auto (default: search.default_method in config.toml)."),
    strict: bool = StrictOpt,
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
    raw: bool = typer.Option(False, "--raw", help="Show the answer unchecked: no sentence is checked against the "
                                                  "sources it cites, none removed."),
):
    """Answer a question with [Data: …] citations, then its sources by document and page.

    Before it is shown, each sentence of the answer is checked against the sources it cites
    (one quoted word for word from a cited text unit stands; any other is judged); one they do
    not support is removed and listed (--json: removed_sentences). After the
    sources come further passages, the pages retrieval ranked next, which the answer does not
    cite (--json: "via": "further passage (not cited)"; [search] sources_listed caps the list).

    \b
    Example:
      provrag ask "Who leads the commissioning team?" --index output
      provrag ask "What are the main themes?" --index output --method global --json
      provrag ask "Who leads the commissioning team?" --index output --raw
    """
    from provrag.serve.memory import settle_one_question

    settle_one_question()      # before pyarrow is imported: peak RSS of one stage, not of all (serve/memory.py)
    from provrag.pipelines.ask import run_ask

    if question == "-":
        question = sys.stdin.read()
    if method is not None and method.strip().lower() not in ("auto", "global", "local", "basic"):
        usage(f"unknown --method '{method}' (expected auto, global, local or basic)")
    cfg = load_cfg(config, strict)
    result = run_ask(question, index_dir, cfg, method=method, check=not raw)
    if result.trace_error:
        say_warning(result.trace_error)
    if as_json:
        emit_json(result.to_json())
    else:
        from provrag.views.ask import ask_view

        console().print(ask_view(result))


@app.command()
def resolve(
    text: Optional[str] = typer.Argument(None, help="Answer text or a [Data: …] citation; '-' reads stdin."),
    index_dir: Path = IndexOpt,
    answer_file: Optional[Path] = typer.Option(None, "--answer-file", "-f",
                                               help="Read the answer from a file (text, or JSON with an \"answer\" key)."),
    top: Optional[int] = typer.Option(None, "--top", "-k", help="Sources per cited sentence (default [resolve] top_k)."),
    trace_id: Optional[str] = typer.Option(None, "--trace", "-t",
                                           help="Resolve the answer of a stored ask trace ('last' = your newest ask "
                                                "from the command line), and "
                                                "say which of its cited ids changed or were retired since."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Resolve every [Data: …] citation to document, page and quote, without asking anything.

    \b
    Example:
      provrag resolve "[Data: Sources (3)]" --index output
      provrag resolve --answer-file answer.md --index graphrag/output --json
      provrag resolve --trace last --index output
    """
    from provrag.pipelines.resolve import run_resolve

    if sum(x is not None for x in (text, answer_file, trace_id)) != 1:
        usage("give the answer text, '-' to read stdin, --answer-file F or --trace ID (exactly one)")
    if top is not None and top < 1:
        usage(f"--top must be at least 1 (got {top})")
    cfg = load_cfg(config)
    answer = read_text_arg(text, answer_file) if trace_id is None else None
    result = run_resolve(index_dir, answer, cfg, top_k=top, trace_id=trace_id)
    if as_json:
        emit_json(result.to_json())
    else:
        from provrag.views.resolve import resolve_view

        console().print(resolve_view(result))


@app.command()
def verify(
    stdin_flag: Optional[str] = typer.Argument(None, metavar="[-]", help="'-' reads the answer from stdin."),
    index_dir: Path = IndexOpt,
    trace_id: Optional[str] = typer.Option(None, "--trace", "-t",
                                           help="Verify the answer of a stored ask trace (its question too; "
                                                "'last' = your newest ask from the command line)."),
    answer_file: Optional[Path] = typer.Option(None, "--answer-file", "-f", help="Read the answer from a file."),
    answer: Optional[str] = typer.Option(None, "--answer", "-a", help="The answer text."),
    question: Optional[str] = typer.Option(None, "--question", "-q",
                                           help="The question answered: makes short answers (\"Delhi\") checkable claims."),
    fail_under: Optional[float] = typer.Option(None, "--fail-under",
                                               help="Exit 1 when the share of supported claims is under R (0..1)."),
    strict: bool = StrictOpt,
    config: Optional[Path] = ConfigOpt,
    as_json: bool = JsonOpt,
):
    """Check each claim of an answer against the index: verdict, evidence by document and page.

    \b
    Example:
      provrag verify --trace last --index output
      provrag verify --answer "The plant supplies 40,000 homes." --index output --json
      cat answer.md | provrag verify - --index output --fail-under 0.8
    """
    from provrag.errors import CheckFailed
    from provrag.serve.memory import settle_one_question

    settle_one_question()      # before pyarrow is imported (serve/memory.py)
    from provrag.pipelines.verify import run_verify

    if stdin_flag is not None and stdin_flag != "-":
        usage(f"unexpected argument '{stdin_flag[:40]}': give the answer with --answer TEXT, --answer-file F, "
              "--trace ID or '-' for stdin")
    given = [x for x in (stdin_flag, trace_id, answer_file, answer) if x is not None]
    if len(given) != 1:
        usage("give exactly one answer: --trace ID, --answer-file F, --answer TEXT or - (stdin)")
    if fail_under is not None and not 0.0 <= fail_under <= 1.0:
        usage(f"--fail-under must be between 0 and 1 (got {fail_under})")
    cfg = load_cfg(config, strict)
    stdin_text = sys.stdin.read() if stdin_flag == "-" else None
    result = run_verify(index_dir, cfg, answer=answer, answer_file=answer_file, trace_id=trace_id,
                        stdin_text=stdin_text, question=question)
    if result.trace_error:
        say_warning(f"verify run not stored: {result.trace_error}")
    if as_json:
        emit_json(result.to_json())
    else:
        from provrag.views.verify import verify_view

        out = console()
        out.print(verify_view(result, width=out.width))
    ratio = result.supported_ratio
    if fail_under is not None and (ratio is None or ratio < fail_under):
        raise CheckFailed(f"supported share {0 if ratio is None else ratio:.0%} is under {fail_under:.0%}")


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
    """Write an HTML audit report: claims by verdict, evidence pages highlighted, the query trace.

    \b
    Example:
      provrag report --trace last --index output --out report.html
      provrag verify --answer-file a.md --index output --json > v.json
      provrag report --verify-json v.json --index output --out report.html
    """
    from provrag.pipelines.report import run_report

    cfg = load_cfg(config)
    res = run_report(index_dir, out_file, trace_id=trace_id, verify_json=verify_json, max_pages=max_pages, cfg=cfg)
    if as_json:
        emit_json(res)
    else:
        console().print(f"wrote {res['out']} ({res['bytes'] / 1024:.0f} KiB): {res['claims']} claims — "
                         f"{res['supported']} supported, {res['contradicted']} contradicted, "
                         f"{res['unsupported']} unsupported; {res['page_images']} page images", highlight=False)


@app.command("log")
def log_(
    text: Optional[str] = typer.Argument(None, help="Only traces whose question, answer, method or id contains this."),
    index_dir: Optional[Path] = typer.Option(None, "--index", "-i",
                                             help="Index whose traces to list (default: every folder traces were saved to)."),
    n: int = typer.Option(20, "-n", help="How many (most recent first)."),
    kind: Optional[str] = typer.Option(None, "--kind", help="Only traces of this kind (ask, verify)."),
    as_json: bool = JsonOpt,
):
    """List recent queries (and verify runs) with their trace ids.

    \b
    Example:
      provrag log
      provrag log boiler --index output --kind verify -n 5 --json
    """
    from provrag.store.traces import list_traces

    if n < 0:
        usage(f"-n must be 0 or more (got {n})")
    if index_dir is not None and not index_dir.is_dir():
        usage(f"no such index folder: {index_dir}")
    rows = list_traces(index_dir, n=n, text=text, kind=kind)
    if as_json:
        emit_json(rows)
    elif not rows:
        console(True).print("no stored traces" + (f" matching '{text}'" if text else ""))
    else:
        from provrag.views.ask import log_table

        out = console()
        out.print(log_table(rows, out.width))


@app.command()
def trace(
    trace_id: str = typer.Argument(..., help="A trace id as printed by ask (a unique prefix is enough; "
                                             "'last' is your latest ask from the command line)."),
    index_dir: Optional[Path] = typer.Option(None, "--index", "-i",
                                             help="Index whose traces to search (default: every folder traces were saved to)."),
    fmt: str = typer.Option("tree", "--format", "-f", help="tree | json | prov (W3C PROV JSON-LD)."),
    as_json: bool = typer.Option(False, "--json", help="Print the trace as one JSON document (--format json)."),
):
    """Show one stored query trace: its stages, candidates, context, answer and sources.

    \b
    Example:
      provrag trace last --index output
      provrag trace last --index output --json
      provrag trace 3f2a --format prov > trace.jsonld
    """
    from provrag.store.traces import load_trace

    if fmt not in ("tree", "json", "prov"):
        usage(f"unknown --format '{fmt}' (expected tree, json or prov)")
    if as_json:
        if fmt not in ("tree", "json"):
            usage(f"--json and --format {fmt} ask for two outputs: give one")
        fmt = "json"
    t = load_trace(trace_id, index_dir)
    if fmt == "json":
        emit_json(t)
    elif fmt == "prov":
        from provrag.query.trace import to_prov

        emit_json(to_prov(t))
    else:
        from provrag.views.ask import trace_tree

        console().print(trace_tree(t))


app.command()(serving.serve)
app.command()(serving.mcp)
app.command()(serving.sql)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
