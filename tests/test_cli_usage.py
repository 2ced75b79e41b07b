"""A typo is the user's, not a bug: usage errors are click's own message with exit 2, and exit 3
(internal error) is for bugs only (issue 29 item 7). Then every command's `--help`-listed options
fuzzed — missing, unknown and malformed — in-process through click's runner: never exit 3, never a
traceback, never an exception escaping the CLI.

The fuzzed commands run for real: their paths point into a sandbox (an empty folder, a file of
junk, a folder that does not exist, a small real index, a real settings file), and the process
works in that sandbox with its own XDG data home, so nothing outside it is read or written.
`serve` and `mcp` are only ever given indexes that do not open: with a real one they would serve.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from provrag import cli

GROUP = typer.main.get_command(cli.app)
COMMANDS = sorted(GROUP.commands)
SERVING = {"serve", "mcp"}          # given a real index they would serve until stopped


# ---- the cases, through the installed console script (what a user types) ----------------

@pytest.mark.parametrize("args,message", [
    (["frobnicate"], "No such command 'frobnicate'"),
    (["ask"], "Missing argument 'QUESTION'"),
    (["index"], "Missing argument 'DOCS'"),
    (["--bogus"], "No such option: --bogus"),
    (["resolve", "x", "--index", ".", "--top", "many"], "'many' is not a valid integer"),
    (["ask", "q", "--index", ".", "--method"], "Option '--method' requires an argument"),
    (["verify", "--index", ".", "--fail-under", "most"], "'most' is not a valid float"),
])
def test_a_usage_error_is_exit_2_with_click_s_own_message(provrag_script, tmp_path, args, message):
    r = subprocess.run([*provrag_script, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert message in r.stderr and "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.startswith(("Usage:", "Error:"))  # click's own report, not provrag's bug line


# ---- every option each command's --help lists -------------------------------------------------

def _options_in_help(name: str) -> set[str]:
    """The options `provrag NAME --help` lists (the head of each line of its Options section)."""
    out = CliRunner().invoke(cli.app, [name, "--help"])
    assert out.exit_code == 0, out.output
    section = out.output.split("Options:", 1)[1]
    heads = [line.strip().split("  ")[0] for line in section.splitlines() if line.strip().startswith("-")]
    return {o for head in heads for o in re.findall(r"--?[A-Za-z][\w-]*", head)} - {"--help"}


def _declared(name: str) -> dict[str, object]:
    """Each option string of the command → its click parameter (as `--help` prints them)."""
    return {o: p for p in GROUP.commands[name].params if p.param_type_name == "option" for o in p.opts}


@pytest.mark.parametrize("name", COMMANDS)
def test_the_fuzzed_options_are_every_option_help_lists(name):
    assert _options_in_help(name) == set(_declared(name)) and _declared(name), name


# ---- the sandbox the fuzzed commands run in -------------------------------------------------------

@pytest.fixture(scope="module")
def sandbox(tmp_path_factory, sample_data):
    """Paths of every kind a command may be given, one real small index among them, and an
    environment that keeps traces and caches inside the sandbox."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    root = tmp_path_factory.mktemp("cli-fuzz")
    (root / "empty").mkdir()
    (root / "junk.txt").write_bytes(b"\x00\xffnot an index, not settings, not an answer\n")
    (root / "settings.toml").write_text('[search]\ndefault_method = "basic"\n')
    (root / "bad.toml").write_text("[chunk\nsize_tokens = = 3\n")
    docs = root / "docs"
    docs.mkdir()
    shutil.copy(sample_data / "halcyon-design-decisions.md", docs)
    run_index(docs, root / "index", load_config())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(root / "xdg-data"))
        mp.setenv("XDG_CACHE_HOME", str(root / "xdg-cache"))
        mp.chdir(root)
        yield root


# values a user may type by mistake: empty, a dash, words for numbers, out-of-range numbers,
# bytes a shell passes undecoded (surrogate-escaped), a citation, the words commands know
TEXT = ["", "-", "--", "x", "last", "0", "-1", "1e999", "nan", "inf", "-0.5", "2", "65536", "abc", "é",
        "\udcff", "a" * 400, "[Data: Sources (1)]", "SELECT 1", "DROP TABLE documents", "tree", "json", "global",
        "1234abcd", "--json"]
PATHS = ["empty", "junk.txt", "nowhere", "nowhere/deeper", "settings.toml", "bad.toml", "", "index", "index/queries",
         "docs", "."]


def _value(param, draw):
    if getattr(param, "is_flag", False):
        return None
    kind = type(param.type).__name__
    if "Path" in kind:
        return draw(st.sampled_from(PATHS))
    if kind in ("IntParamType", "FloatParamType"):
        return draw(st.sampled_from(["0", "1", "-3", "2.5", "x", "", "1e999", "nan", "99999999999999999999"]))
    return draw(st.sampled_from(TEXT))


@st.composite
def command_lines(draw):
    name = draw(st.sampled_from(COMMANDS))
    params = GROUP.commands[name].params
    argv = [name]
    for p in params:
        if p.param_type_name == "argument":
            if draw(st.integers(0, 3)):  # mostly given; sometimes missing
                argv.append(draw(st.sampled_from(TEXT + PATHS)))
            continue
        choice = draw(st.sampled_from(["omit", "omit", "give", "give", "no value"]))
        if choice == "omit":
            continue
        opt = draw(st.sampled_from(p.opts))
        value = _value(p, draw)
        if name in SERVING and opt in ("--index", "-i") and value in ("index", "index/queries"):
            value = "empty"                  # a real index would be served until the test stops it
        argv.append(opt)
        if value is not None and choice == "give":
            argv.append(value)
    if draw(st.integers(0, 4)) == 0:
        argv.insert(draw(st.integers(1, len(argv))), draw(st.sampled_from(["--frobnicate", "-z", "--indx", "--json=3"])))
    if draw(st.integers(0, 5)) == 0:
        argv.insert(1, draw(st.sampled_from(["extra", "--", "-"])))
    return argv


@settings(max_examples=int(os.environ.get("PROVRAG_CLI_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(argv=command_lines())
def test_fuzzed_command_lines_are_never_an_internal_error(sandbox, argv):
    res = CliRunner().invoke(cli.app, argv, input="")
    out = res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), (argv, repr(res.exception))
    assert res.exit_code in (0, 1, 2), (argv, res.exit_code, out[-500:])
    assert "internal error" not in out and "Traceback" not in out, (argv, out[-500:])
