"""The commands that hand an index to other programs (provrag/commands/serving.py), through the
real command line: bad arguments are one line and exit 2, before anything is served; `sql`
prints a table or one JSON document and refuses writes. What the server and the SQL runner
do is tested in tests/serve/ and tests/store/test_sql.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.serve.conftest import provrag_command


@pytest.fixture(scope="module")
def asked_index(tmp_path_factory, squad_subset_index):
    """A copy of the shared SQuAD index (asks write traces into it) after one real `ask`."""
    root = tmp_path_factory.mktemp("served")
    XDG["XDG_DATA_HOME"] = str(root / "xdg")
    shutil.copytree(squad_subset_index, root / "idx", ignore=shutil.ignore_patterns("queries"))
    res = run("ask", "When did the oil embargo end?", "--index", str(root / "idx"), "--json")
    assert res.returncode == 0, res.stderr
    return root / "idx", json.loads(res.stdout)


XDG = {}


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real console script, user data (the trace registry) kept out of the user's home."""
    env = dict(os.environ, **XDG)
    return subprocess.run(provrag_command(*args), capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize("args, message", [
    (("serve", "--index", "{missing}"), "no such index folder"),
    (("serve", "--index", "{index}", "--port", "70000"), "--port must be between 1 and 65535"),
    (("serve", "--index", "{index}", "--token-env", "PROVRAG_TEST_TOKEN_NOT_SET"), "not set or empty"),
    (("mcp", "--index", "{missing}"), "no such index folder"),
    (("sql", "SELECT 1", "--index", "{index}", "--limit", "0"), "--limit must be at least 1"),
    (("sql", "DELETE FROM text_units", "--index", "{index}"), "error:"),
    (("sql", "SELECT * FROM read_csv('/etc/passwd')", "--index", "{index}"), "error:"),
])
def test_bad_arguments_are_one_line_and_exit_2(args, message, asked_index, tmp_path):
    index = asked_index[0]
    argv = [a.format(missing=tmp_path / "nowhere", index=index) for a in args]
    res = run(*argv)
    assert res.returncode == 2, res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and res.stdout == ""


def test_sql_prints_rows_and_says_when_the_limit_cut_them(asked_index):
    index = asked_index[0]
    res = run("sql", "SELECT human_readable_id, document_id FROM text_units ORDER BY 1", "--index", str(index),
              "--limit", "3")
    assert res.returncode == 0, res.stderr
    assert "3 rows (cut at the limit" in res.stdout
    as_json = json.loads(run("sql", "SELECT count(*) AS n FROM text_units", "--index", str(index), "--json").stdout)
    n_units = as_json["rows"][0][0]
    assert as_json["columns"] == ["n"] and n_units > 3
    # the provenance tables are there for the asks the fixture made
    traces = json.loads(run("sql", "SELECT count(*) FROM traces WHERE kind = 'ask'", "--index", str(index),
                            "--json").stdout)
    assert traces["rows"][0][0] >= 1
