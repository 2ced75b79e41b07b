"""Traces stored by several threads at once (a server answers requests side by side, each storing
its trace) land where one thread stores them, and every index folder a trace was stored for is
remembered.

Two files named after the process alone were written by every thread: may_write's probe (one
thread's unlink removed another's probe, whose own unlink then failed: "cannot write", and that
request's trace went to the user folder instead of INDEX/queries) and the registry of trace
folders (read, changed and renamed into place by each thread: folders remembered by one thread
were lost under another's)."""
from __future__ import annotations

import shutil
import threading

from provrag.store.traces import QUERIES_DIR, save_trace, trace_dirs, user_dir
from provrag.store.writer import may_write


def at_once(work, args: list) -> list:
    """work(arg) for every arg, each in a thread of its own, all released together."""
    start = threading.Barrier(len(args))
    out, errors = [], []

    def run(arg):
        start.wait()
        try:
            out.append(work(arg))
        except Exception as e:   # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(a,)) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return out


def test_threads_asking_at_once_may_all_write_into_the_index(sample_index, tmp_path):
    idx = tmp_path / "idx"
    shutil.copytree(sample_index, idx, ignore=shutil.ignore_patterns(QUERIES_DIR))
    for round_ in range(20):
        allowed = at_once(lambda _: may_write(idx / QUERIES_DIR), list(range(8)))
        assert allowed == [True] * 8, f"round {round_}: {allowed.count(False)} of 8 threads told no"


def test_traces_stored_at_once_all_land_in_the_index(sample_index, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    idx = tmp_path / "idx"
    shutil.copytree(sample_index, idx, ignore=shutil.ignore_patterns(QUERIES_DIR))
    stored = at_once(lambda k: save_trace({"kind": "ask", "question": f"question {k}",
                                           "answer": "Nothing in the index answers this question."}, idx),
                     list(range(8)))
    assert sorted(p.parent for p in stored) == [idx / QUERIES_DIR] * 8
    assert not user_dir(idx).exists()


def test_folders_remembered_at_once_are_all_remembered(tmp_path, monkeypatch):
    """GraphRAG folders (not provrag's: read-only evidence) keep their traces in the user folder,
    one per index, each remembered so that `provrag log` finds it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    for round_ in range(10):
        foreign = [tmp_path / f"graphrag-{round_}-{k}" for k in range(8)]
        for f in foreign:
            f.mkdir()
        at_once(lambda f: save_trace({"kind": "ask", "question": "q", "answer": "a"}, f), foreign)
        known = trace_dirs()
        assert [f.name for f in foreign if user_dir(f) not in known] == [], f"round {round_}"
