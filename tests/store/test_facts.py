"""What a connection asks once (store/facts.py) and the manifest parsed once per version
(store/manifest.py): the same answers as asking every time, and a new answer for a new version."""
from __future__ import annotations

import json
import os
import shutil

import pytest

# the join store/units._fetch made at every fetch before the documents were kept per connection
JOINED = """SELECT t.id, d.title, d.path, d.page_labels, d.n_titled > 1
            FROM text_units t LEFT JOIN (SELECT id, title, path, page_labels,
                 (SELECT count(*) FROM documents x WHERE x.title = documents.title) AS n_titled
                 FROM documents) d ON d.id = t.document_id"""


@pytest.fixture(scope="module")
def twin_titled_index(tmp_path_factory, sample_data):
    """data/ with one document a second time under another folder: two documents, one title."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    root = tmp_path_factory.mktemp("twins")
    corpus = root / "corpus"
    shutil.copytree(sample_data, corpus)
    (corpus / "copy").mkdir()
    shutil.copy(corpus / "halcyon-inspection-notes-2025-06-20.txt", corpus / "copy" / "halcyon-inspection-notes-2025-06-20.txt")
    run_index(corpus, root / "idx", load_config())
    return root / "idx"


def test_fetched_units_name_their_documents_as_the_join_did(twin_titled_index):
    from provrag.store.reader import open_index
    from provrag.store.units import fetch_units

    with open_index(twin_titled_index) as r:
        want = {row[0]: (row[1], row[2], row[3], bool(row[4])) for row in r.con.execute(JOINED).fetchall()}
        ids = list(want)
        first = fetch_units(r, ids[: len(ids) // 2])    # half the documents read, then the rest
        got = first | fetch_units(r, ids)
    assert len(got) == len(ids)
    assert {i: (u.title, u.path, u.page_labels, u.title_shared) for i, u in got.items()} == want
    assert sum(shared for *_, shared in want.values()) >= 2       # the twins' units, at least one each


def test_a_connection_asks_once_and_each_connection_asks_its_own(twin_titled_index):
    from provrag.query.context import has_rows
    from provrag.query.themes import all_documents
    from provrag.store.reader import open_index

    with open_index(twin_titled_index) as r:
        docs = all_documents(r.con)
        assert all_documents(r.con) is docs          # kept: not read again
        assert len(docs) == r.count("documents") == 8
        assert has_rows(r.con, "text_units") and not has_rows(r.con, "covariates")
        twin = r.cursor()
        try:
            assert all_documents(twin.con) is not docs and all_documents(twin.con) == docs
        finally:
            twin.close()


def test_the_manifest_is_parsed_again_for_a_new_version(tmp_path):
    from provrag.store.manifest import read_manifest
    from provrag.store.writer import made_by_provrag

    folder = tmp_path / "idx"
    folder.mkdir()
    path = folder / "manifest.json"
    assert read_manifest(folder) is None and not made_by_provrag(folder)
    path.write_text(json.dumps({"provrag_version": "1", "index_version": "a"}))
    first = read_manifest(folder)
    assert first["index_version"] == "a" and read_manifest(folder) is first and made_by_provrag(folder)
    # written in place, same size and mtime set back: the ctime still tells
    st = os.stat(path)
    path.write_text(json.dumps({"provrag_version": "1", "index_version": "b"}))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert read_manifest(folder)["index_version"] == "b"
    # replaced by a rename, as a rebuilt index is
    (tmp_path / "new.json").write_text(json.dumps({"index_version": "c"}))
    os.replace(tmp_path / "new.json", path)
    assert read_manifest(folder) == {"index_version": "c"} and not made_by_provrag(folder)
    path.write_text("[1, 2]")
    assert read_manifest(folder) is None
