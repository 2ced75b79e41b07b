"""What every provrag command shares: the consoles, the one-line error, `--json` output, the
common options. Kept apart from cli.py so command modules can import it without a cycle."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

INTERNAL_ERROR = 3
state = {"debug": False}


def console(stderr: bool = False):
    """A rich console for results (stdout) or progress and errors (stderr), made on first use."""
    key = "err" if stderr else "out"
    if key not in state:
        from rich.console import Console

        state[key] = Console(stderr=stderr)
    return state[key]


def say_error(message: str, label: str = "error") -> None:
    from rich.markup import escape

    console(True).print(f"[bold red]{label}:[/] {escape(message)}", highlight=False, soft_wrap=True)


def say_warning(message: str) -> None:
    from rich.markup import escape

    console(True).print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)


ConfigOpt = typer.Option(None, "--config", "-c", help="TOML file overriding keys of config.toml.",
                         exists=False, dir_okay=False)
JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout, nothing else.")
IndexOpt = typer.Option(..., "--index", "-i", help="A provrag index folder or a Microsoft GraphRAG output folder.")
StrictOpt = typer.Option(False, "--strict",
                         help="Model output only ([llm] strict = true): an item the model fails on stays failed "
                              "instead of being made by the offline engine (with [llm] engine = \"openai\").")


def is_click_error(e: BaseException) -> bool:
    """Whether `e` is click's own (a usage error: unknown command or option, missing or malformed
    argument), which click reports itself with exit 2 — never an internal error. Typer 0.26
    vendors its own copy of click (`typer._click`, not the `click` package), so the class is
    recognised by its place in click's hierarchy rather than by importing either module."""
    return any(c.__name__ == "ClickException" and "click" in c.__module__ for c in type(e).__mro__)


def usage(message: str):
    """Bad arguments: one line on stderr, exit 2."""
    from provrag.errors import UsageError

    raise UsageError(message)


def emit_json(obj) -> None:
    from provrag.results import json_document   # the one serializer (provrag serve sends the same text)

    sys.stdout.write(json_document(obj) + "\n")


def load_cfg(config: Optional[Path], strict: bool = False):
    """config.toml with the --config file's keys over it; `--strict` sets [llm] strict."""
    from provrag.config import load_config

    cfg = load_config(config)
    return cfg.replace("llm", strict=True) if strict else cfg


def read_text_arg(text: Optional[str], answer_file: Optional[Path]) -> str:
    """The answer given as an argument, '-' (stdin) or a file (text, or JSON with an "answer" key)."""
    if answer_file is not None:
        try:
            raw = answer_file.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            usage(f"cannot read answer file {answer_file}: {e.strerror or e}")
        from provrag.query.citations import answer_in_json

        found = answer_in_json(raw) if answer_file.suffix.lower() == ".json" else None
        return found[0] if found else raw
    return sys.stdin.read() if text == "-" else text
