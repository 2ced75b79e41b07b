"""`--trace last` is what this user did last (issue 29 item 7): a server answering others on the
same index, or another OS user's asks, never become "my last ask" — and when this user has none,
the error says whose the newest ask is instead of taking it.

The user's asks go through the CLI (a subprocess, as typed); the server's through IndexService,
the object `provrag serve` and `provrag mcp` answer every request with; another OS user is a
CLI process whose login name (LOGNAME/USER, what getpass reads) is theirs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

MINE = "When did the oil embargo end?"
SERVERS = "What is packet switching?"
ALICES = "What did the construction industry build?"


@pytest.fixture()
def work(tmp_path, squad_subset_index, monkeypatch):
    """A copy of the shared SQuAD index (these runs write traces into it) and user data of our own."""
    idx = tmp_path / "idx"
    shutil.copytree(squad_subset_index, idx, ignore=shutil.ignore_patterns("queries"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return idx


def cli(provrag_cli, *args, user: str | None = None):
    env = dict(os.environ)
    if user:
        env.update(LOGNAME=user, USER=user)
    r = subprocess.run([*provrag_cli, *map(str, args)], capture_output=True, text=True, timeout=300, env=env,
                       stdin=subprocess.DEVNULL)
    return r


def ask(provrag_cli, idx, question, user=None) -> str:
    r = cli(provrag_cli, "ask", question, "--index", idx, "--json", user=user)
    assert r.returncode == 0, r.stderr[-1500:]
    return json.loads(r.stdout)["trace_id"]


def test_last_is_my_last_cli_ask_not_the_server_s_nor_another_user_s(work, provrag_cli):
    from provrag.config import load_config
    from provrag.serve.service import IndexService

    mine = ask(provrag_cli, work, MINE)
    service = IndexService(work, load_config())
    try:
        served = service.ask(SERVERS).trace_id                     # a client of `provrag serve`, after me
        alices = ask(provrag_cli, work, ALICES, user="alice-provrag-test")  # another user's shell, after that
        assert len({mine, served, alices}) == 3
        shown = cli(provrag_cli, "trace", "last", "--index", work, "--format", "json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["trace_id"] == mine
        verified = cli(provrag_cli, "verify", "--trace", "last", "--index", work, "--json")
        assert verified.returncode in (0, 1), verified.stderr
        assert json.loads(verified.stdout)["question"] == MINE
        # the server's own `last` is the newest ask it answered; alice's is hers
        assert service.trace("last")["trace_id"] == served
        theirs = cli(provrag_cli, "trace", "last", "--index", work, "--format", "json", user="alice-provrag-test")
        assert json.loads(theirs.stdout)["trace_id"] == alices
    finally:
        service.close()
    from provrag.store.traces import load_trace

    stored = {i: load_trace(i, work) for i in (mine, served, alices)}
    assert stored[served]["via"] == "server" and stored[served]["os_user"] is None  # its clients are not its user
    assert stored[mine]["via"] == stored[alices]["via"] == "cli"
    assert stored[alices]["os_user"] == "alice-provrag-test" != stored[mine]["os_user"]


def test_with_no_ask_of_mine_the_error_says_whose_the_newest_is(work, provrag_cli):
    from provrag.config import load_config
    from provrag.serve.service import IndexService

    service = IndexService(work, load_config())
    try:
        served = service.ask(SERVERS).trace_id
    finally:
        service.close()
    r = cli(provrag_cli, "verify", "--trace", "last", "--index", work)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and "no ask by" in line and f"the newest ask, {served}" in line and "via server" in line
