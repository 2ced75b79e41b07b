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


def test_long_text_columns_are_written_without_statistics_or_dictionary(tmp_path, small_corpus):
    """A document's whole text in min/max statistics would copy it (measured +220 MB for 50 MB);
    ids and id lists keep theirs, and their dictionary encoding (list values included)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from provrag.store import schema
    from provrag.store.writer import write_table

    text = (small_corpus / "sotu-1863-lincoln.txt").read_text()
    table = pa.table({"id": ["a", "b"], "text": [text, text[:100]], "text_unit_ids": [["u1", "u2"], ["u1"]]},
                     schema=pa.schema([("id", pa.string()), ("text", pa.string()),
                                       ("text_unit_ids", pa.list_(pa.string()))]))
    write_table(tmp_path, schema.TEXT_UNITS, table)
    f = pq.ParquetFile(tmp_path / f"{schema.TEXT_UNITS}.parquet")
    assert f.read().equals(table)
    cols = {c.path_in_schema: c for c in (f.metadata.row_group(0).column(i) for i in range(3))}
    assert not cols["text"].is_stats_set and "RLE_DICTIONARY" not in cols["text"].encodings
    assert cols["id"].is_stats_set and cols["text_unit_ids.list.element"].is_stats_set
    assert "RLE_DICTIONARY" in cols["text_unit_ids.list.element"].encodings


def test_commit_while_a_server_writes_traces(tmp_path, monkeypatch):
    """Regression (found by kill -9 trials while `provrag serve` answered): commit copied the trace
    log with shutil.copytree, which raised when a trace being written (a hidden .tmp file renamed
    into place) vanished mid-copy, and the whole index run failed at its last step; a trace
    finished between the copy and the swap was lost with the old folder."""
    out = tmp_path / "idx"
    tmp = store.begin(out)
    _write(tmp, 1)
    store.commit(tmp, out)
    queries = out / "queries"
    queries.mkdir()
    (queries / "q1.parquet").write_bytes(b"one")
    (queries / ".q2.parquet.4242.tmp").symlink_to(tmp_path / "gone")   # listed, gone when copied
    (queries / "q3.parquet").symlink_to(tmp_path / "gone-too")
    real_exchange = store._exchange

    def trace_lands_then_swap(a, b):       # a server finishes a trace just before the swap
        (queries / "q4.parquet").write_bytes(b"four")
        return real_exchange(a, b)

    monkeypatch.setattr(store, "_exchange", trace_lands_then_swap)
    tmp2 = store.begin(out)
    _write(tmp2, 2)
    store.commit(tmp2, out)
    assert sorted(p.name for p in (out / "queries").iterdir()) == ["q1.parquet", "q4.parquet"]
    assert (out / "queries" / "q4.parquet").read_bytes() == b"four"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".provrag")] == []
