"""Progress of `provrag index` when stderr is a log (piped or redirected): a line per stage with
its seconds and counts, lines while a long stage runs; bars on a terminal; --json's stdout clean."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess

import pytest
from rich.console import Console

from provrag.config import load_config
from provrag.views.progress import StageProgress

pytestmark = pytest.mark.usefixtures("shared")

LINE = re.compile(r"^\d\d:\d\d:\d\d index (\w+): (done in|stopped after) (\d+\.\d) s(?: \((.+)\))?$")


@pytest.fixture()
def docs(tmp_path, small_corpus):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("R-FAQ.pdf", "sotu-1863-lincoln.txt"):
        shutil.copyfile(small_corpus / name, folder / name)
    return folder


def _stage_names() -> list[str]:
    from provrag.pipelines.index import STAGES

    return [s.__name__ for s in STAGES]


def test_a_log_gets_one_line_per_stage_and_lines_while_one_runs(docs, tmp_path):
    from provrag.pipelines.index import run_index

    log = io.StringIO()
    with StageProgress(Console(file=log, force_terminal=False, width=80), every=0.05) as progress:
        summary = run_index(docs, tmp_path / "out", load_config(), progress=progress)
    lines = log.getvalue().splitlines()
    ended = [m for m in map(LINE.match, lines) if m]
    assert [m[1] for m in ended] == _stage_names() and all(m[2] == "done in" for m in ended)
    assert abs(sum(float(m[3]) for m in ended) - summary.seconds) < 0.1 * len(ended) + 0.5  # seconds of whole stages
    counts = {m[1]: m[4] for m in ended}
    assert counts["load"] == "2/2 files" and counts["chunk"] == "2/2 documents"
    assert counts["embed"] == f"{summary.text_units}/{summary.text_units} text units"
    running = [line for line in lines if not LINE.match(line)]
    assert running and all(re.search(r" index \w+: .*(so far|running), \d+ s$", line) for line in running)
    assert all(len(line) < 200 for line in lines)  # one line each, never a bar redrawn


def test_a_stage_that_fails_says_so_in_the_log():
    log = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        with StageProgress(Console(file=log, force_terminal=False)) as progress, \
                progress.step("extract"), progress.stage("extract", total=10) as task:
            task.advance(3)
            raise KeyboardInterrupt
    assert LINE.match(log.getvalue().strip()).group(2, 4) == ("stopped after", "3/10 text units")


def test_a_terminal_gets_bars_not_lines():
    screen = io.StringIO()
    with StageProgress(Console(file=screen, force_terminal=True, width=80)) as progress, \
            progress.step("load"), progress.stage("load", total=4) as task:
        task.advance(4)
    out = screen.getvalue()
    assert "load" in out and "4/4" in out and "done in" not in out


def test_piped_cli_logs_stages_and_json_keeps_stdout_clean(docs, tmp_path, provrag_cli):
    r = subprocess.run([*provrag_cli, "index", str(docs), "--out", str(tmp_path / "out"), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["documents_ok"] == 2  # stdout holds the JSON document only
    assert [m[1] for m in map(LINE.match, r.stderr.splitlines()) if m] == _stage_names()
