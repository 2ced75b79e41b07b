"""Two `provrag index` runs into one folder, as users start them: one writer at a time.

Real documents (three files of ../shared/corpora/small) and real CLI processes. The first
run is frozen (SIGSTOP) once it holds the lock, so "the second run meets a running writer"
holds however slow or fast the machine is; SIGCONT lets it finish.
"""
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import time

import pyarrow.parquet as pq
import pytest

from provrag.store.lock import writer_of

FILES_A = ("sotu-1863-lincoln.txt", "debian-developers-reference-scope.html", "carroll-lookingglass.docx")
FILES_B = ("sotu-1863-lincoln.txt", "carroll-lookingglass.docx")
TABLES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports", "keywords")


@pytest.fixture(scope="module")
def folders(tmp_path_factory, small_corpus):
    """Two document folders, A (three files) and B (two of them)."""
    base = tmp_path_factory.mktemp("writers")
    for name, files in (("docs-a", FILES_A), ("docs-b", FILES_B)):
        (base / name).mkdir()
        for f in files:
            shutil.copy(small_corpus / f, base / name / f)
    return base / "docs-a", base / "docs-b"


@pytest.fixture
def cli(provrag_cli):
    """Start or run `provrag ARGS`; every process still running at the end is killed."""
    procs = []

    def start(*args, **kw):
        proc = subprocess.Popen([*provrag_cli, *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)
        procs.append(proc)
        return proc

    def run(*args, **kw):
        proc = start(*args, **kw)
        stdout, stderr = proc.communicate(timeout=600)
        return proc.returncode, stdout, stderr

    yield start, run
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.communicate(timeout=60)


def _frozen_once_locked(start, docs, out):
    """Start `provrag index DOCS --out OUT`, wait until it holds the lock, stop it there (SIGSTOP)."""
    proc = start("index", docs, "--out", out, "--json")
    deadline = time.monotonic() + 300
    while (writer_of(out) or {}).get("pid") != proc.pid:
        assert proc.poll() is None, f"the first run ended before it was seen writing: {proc.stderr.read()[-2000:]}"
        assert time.monotonic() < deadline, "the first run never took the lock"
        time.sleep(0.02)
    proc.send_signal(signal.SIGSTOP)
    return proc


def _finish(proc):
    proc.send_signal(signal.SIGCONT)
    stdout, stderr = proc.communicate(timeout=600)
    return proc.returncode, stdout, stderr


def _whole(out, summary):
    """The index at `out` is one run's, complete: its manifest and every table agree with the
    summary that run printed, and nothing of a run is left beside it."""
    manifest = json.loads((out / "manifest.json").read_text())
    for table in TABLES:
        rows = pq.read_table(out / f"{table}.parquet").num_rows
        assert rows == manifest["counts"][table] == summary[table], table
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".provrag-")) == []
    return manifest


def test_second_writer_fails_at_once_while_readers_read(tmp_path, folders, cli):
    start, run = cli
    docs_a, docs_b = folders
    out = tmp_path / "idx"
    code, stdout, stderr = run("index", docs_b, "--out", out, "--json")
    assert code == 0, stderr[-2000:]
    first = _frozen_once_locked(start, docs_a, out)

    code, stdout, stderr = run("index", docs_b, "--out", out, "--json")
    assert code == 2 and stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert f"pid {first.pid} on {socket.gethostname()}" in lines[0] and "--wait" in lines[0]

    # a reader during the write: the previous index (B's) answers
    code, stdout, stderr = run("ask", "What did Lincoln say about the harvest?", "--index", out, "--json")
    assert code == 0, stderr[-2000:]
    sources = {source["path"] for source in json.loads(stdout)["sources"]}
    assert sources and sources <= set(FILES_B)

    code, stdout, stderr = _finish(first)
    assert code == 0, stderr[-2000:]
    manifest = _whole(out, json.loads(stdout))
    assert manifest["counts"]["documents"] == len(FILES_A), "the index is the running writer's, A"
    assert "Traceback" not in stderr


def test_wait_runs_one_after_the_other(tmp_path, folders, cli):
    start, run = cli
    docs_a, docs_b = folders
    out = tmp_path / "idx"
    first = _frozen_once_locked(start, docs_a, out)
    second = start("index", docs_b, "--out", out, "--wait", "--json")
    waiting_line = next((line for line in iter(second.stderr.readline, "") if "waiting for" in line), "")
    assert f"writing {out} (" in waiting_line and f"pid {first.pid}" in waiting_line
    assert second.poll() is None, "the second run waits"

    code_a, stdout_a, stderr_a = _finish(first)
    stdout_b, stderr_b = second.communicate(timeout=600)
    assert code_a == 0 and second.returncode == 0, (stderr_a + stderr_b)[-2000:]
    assert "Traceback" not in stderr_a + stderr_b
    manifest = _whole(out, json.loads(stdout_b))
    assert manifest["counts"]["documents"] == len(FILES_B), "the last writer's index is the one in place"
    assert json.loads(stdout_a)["documents"] == len(FILES_A)


def test_lock_of_a_killed_run_is_taken_over(tmp_path, folders, cli):
    start, run = cli
    docs_a, _ = folders
    out = tmp_path / "idx"
    first = _frozen_once_locked(start, docs_a, out)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".provrag-"))
    assert leftovers[0] == ".provrag-lock-idx" and writer_of(out)["pid"] == first.pid

    code, stdout, stderr = run("index", docs_a, "--out", out, "--json")
    assert code == 0 and "Traceback" not in stderr, stderr[-2000:]
    _whole(out, json.loads(stdout))


@pytest.mark.parametrize("umask, folder_mode, file_mode", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)])
def test_index_follows_the_umask(tmp_path, folders, cli, umask, folder_mode, file_mode):
    _, run = cli
    docs_a, _ = folders
    out = tmp_path / "idx"
    code, stdout, stderr = run("index", docs_a, "--out", out, "--json", umask=umask)
    assert code == 0, stderr[-2000:]
    paths = [out, *out.rglob("*")]
    assert any(p.is_file() and "cache" in p.relative_to(out).parts for p in paths), "cache entries too"
    wrong = [(str(p.relative_to(out.parent)), oct(stat.S_IMODE(p.stat().st_mode))) for p in paths
             if stat.S_IMODE(p.stat().st_mode) != (folder_mode if p.is_dir() else file_mode)]
    assert wrong == []
    assert os.listdir(tmp_path) == ["idx"]
