"""The command line's one error boundary (cli.py): a provrag error is one line and its exit
status, a bug is one line with exit 3 unless --debug asks for the traceback; help is fast to get."""
from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from provrag import cli
from provrag.errors import UsageError


@pytest.fixture()
def runner():
    return CliRunner()


def test_a_usage_error_is_one_line_and_exit_2(runner, tmp_path):
    res = runner.invoke(cli.app, ["ask", "anything", "--index", str(tmp_path / "nowhere")])
    assert res.exit_code == 2
    assert "error: no such index folder" in res.output and "Traceback" not in res.output


def test_a_bug_is_one_line_exit_3_and_debug_shows_the_traceback(runner, tmp_path, monkeypatch):
    import provrag.pipelines.resolve as resolve

    def broken(*a, **k):
        raise ZeroDivisionError("division by zero in a resolver")

    monkeypatch.setattr(resolve, "run_resolve", broken)
    res = runner.invoke(cli.app, ["resolve", "x", "--index", str(tmp_path)])
    assert res.exit_code == cli.INTERNAL_ERROR == 3
    assert "internal error: ZeroDivisionError: division by zero in a resolver" in res.output
    assert "--debug" in res.output and "Traceback" not in res.output
    res = runner.invoke(cli.app, ["--debug", "resolve", "x", "--index", str(tmp_path)])
    assert isinstance(res.exception, ZeroDivisionError)  # not swallowed: the traceback is the user's


def test_a_provrag_error_raised_anywhere_keeps_its_exit_code(runner, tmp_path, monkeypatch):
    import provrag.pipelines.resolve as resolve

    def refuse(*a, **k):
        raise UsageError("the index is from the future\nsecond line never shown")

    monkeypatch.setattr(resolve, "run_resolve", refuse)
    res = runner.invoke(cli.app, ["resolve", "x", "--index", str(tmp_path)])
    assert res.exit_code == 2 and "error: the index is from the future" in res.output
    assert "second line" not in res.output


def test_a_bad_setting_stops_before_any_work(runner, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[chunk]\nsize_tokens = "big"\n')
    res = runner.invoke(cli.app, ["index", str(tmp_path), "--out", str(tmp_path / "idx"), "--config", str(bad)])
    assert res.exit_code == 2 and "'chunk.size_tokens' must be an integer" in res.output
    assert not (tmp_path / "idx").exists()


def test_python_m_provrag_and_the_command_list_in_pipeline_order(tmp_path):
    out = subprocess.run([sys.executable, "-m", "provrag", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0
    commands = [line.split()[0] for line in out.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert commands == ["index", "ask", "resolve", "verify", "report", "log", "trace", "serve", "mcp", "sql"]
    version = subprocess.run([sys.executable, "-m", "provrag", "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("provrag ")


def test_help_does_not_import_the_heavy_libraries(tmp_path):
    code = ("import sys; from provrag import cli\n"
            "try:\n    cli.app(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'polars', 'duckdb', 'pyarrow', 'sklearn', 'rich.console') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip().splitlines()[-1] == "[]"
