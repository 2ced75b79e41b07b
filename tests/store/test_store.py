"""An index folder is replaced atomically; a failed run leaves the previous one intact."""
import pyarrow as pa
import pytest

from provrag.store import writer as store


def _write(folder, value):
    store.write_table(folder, "t", pa.table({"v": [value]}))
    store.write_manifest(folder, {"v": value})


def test_commit_replaces_and_keeps_trace_log(tmp_path):
    out = tmp_path / "idx"
    tmp = store.begin(out)
    _write(tmp, 1)
    store.commit(tmp, out)
    (out / "queries").mkdir()
    (out / "queries" / "q1.json").write_text("{}")
    tmp2 = store.begin(out)
    _write(tmp2, 2)
    store.commit(tmp2, out)
    import json
    assert json.loads((out / "manifest.json").read_text()) == {"v": 2}
    assert (out / "queries" / "q1.json").exists(), "the trace log survives re-indexing"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"], "no temporary folder left behind"


def test_abort_leaves_previous_index(tmp_path):
    out = tmp_path / "idx"
    tmp = store.begin(out)
    _write(tmp, 1)
    store.commit(tmp, out)
    tmp2 = store.begin(out)
    _write(tmp2, 2)
    store.abort(tmp2)
    import json
    assert json.loads((out / "manifest.json").read_text()) == {"v": 1}


def test_unwritable_output(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(store.WriteError):
        store.begin(blocker / "idx")
