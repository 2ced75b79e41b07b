"""Listing the newest traces reads the newest files only (store/traces.py list_traces; issue 29,
the soak: every /v1/traces call read every stored trace, ~1 s and ~100 MB a call at 900 traces,
growing with each trace the server stored), and gives the rows a read of every file gives."""
from __future__ import annotations

import datetime as dt

import pytest

from provrag.store.traces import list_traces, save_trace, stored_files

START = dt.datetime(2026, 11, 26, 9, 0, tzinfo=dt.timezone.utc)


def stored(folder, count: int, kind_of=lambda i: "ask") -> list[str]:
    """`count` traces, one a second, the newest last; their ids in that order."""
    ids = []
    for i in range(count):
        created = (START + dt.timedelta(seconds=i)).isoformat(timespec="milliseconds")
        t = {"trace_id": f"{i:012x}", "kind": kind_of(i), "created": created, "question": f"question {i}",
             "answer": "an answer", "via": "server"}
        save_trace(t, folder)
        ids.append(t["trace_id"])
    return ids


@pytest.fixture()
def index(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "idx"
    folder.mkdir()
    return folder


def test_the_newest_traces_are_listed_without_reading_the_old_ones(index):
    ids = stored(index, 200)
    oldest = sorted(stored_files(index), key=lambda f: f.name)[0]
    oldest.write_bytes(b"not parquet: a listing that read every file would fail on it")
    assert [r["trace_id"] for r in list_traces(index, n=5)] == ids[::-1][:5]
    with pytest.raises(Exception):               # what reading it does: the old listing's failure
        list_traces(index, n=200)


def test_a_filter_that_only_old_traces_meet_still_finds_them(index):
    ids = stored(index, 200, kind_of=lambda i: "verify" if i < 3 else "ask")
    rows = list_traces(index, n=2, kind="verify")
    assert [r["trace_id"] for r in rows] == [ids[2], ids[1]]
    assert [r["trace_id"] for r in list_traces(index, n=500)] == ids[::-1]
    assert list_traces(index, n=0) == []
