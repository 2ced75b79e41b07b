"""bench/million.py measures the paths real asks take: `build` writes each unit's previous and
next unit (INDEX/retrieval/unit_neighbours.npy, as index/write.py does), so an ask's
neighbouring-unit lookups do not fall back to the SQL window over the units' documents (the path
only an index written before takes); and its warm asks read each unit row once, as a server's
reader (which keeps the rows it read) does."""
from __future__ import annotations

import pytest

from bench import million
from provrag.config import load_config
from provrag.query import retrieve
from provrag.store.neighbours import NEIGHBOURS, neighbours_by_row
from provrag.store.postings import folder_of
from provrag.store.reader import open_index

pytestmark = pytest.mark.usefixtures("shared")


def _sql(r, ids, chars, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(retrieve, "neighbours_by_row", lambda *a: None)
        return retrieve._look_up_neighbours(r, ids, chars, None)


def _two_texts(shared, tmp):
    """A ../shared holding only its two plain texts (Lincoln's 1863 message, the Dulce novella):
    real sentences, ~1,300 of them, so that fitting the embedder takes seconds."""
    part = tmp / "shared"
    texts = [*(shared / "corpora" / "small").glob("*.txt"),
             *(shared / "fixtures" / "graphrag-dulce" / "source").glob("Operation*.md")]
    for f in texts:
        (part / f.parent.relative_to(shared)).mkdir(parents=True, exist_ok=True)
        (part / f.relative_to(shared)).symlink_to(f)
    return part


@pytest.fixture(scope="module")
def built(shared, tmp_path_factory):
    """An index of two whole documents and a part of one, and its build report."""
    tmp = tmp_path_factory.mktemp("million")
    index = tmp / "idx"
    return index, million.build(index, 2 * million.UNITS_PER_DOCUMENT + 37, shared=_two_texts(shared, tmp))


def test_build_writes_the_neighbours_the_sql_window_gives(built, monkeypatch):
    index, report = built
    units = 2 * million.UNITS_PER_DOCUMENT + 37
    assert report["sentences"] > 500
    assert (folder_of(index) / NEIGHBOURS).is_file() and "neighbours" in report["seconds"]
    with open_index(index) as r:
        ids = [row[0] for row in r.con.execute("SELECT id FROM text_units").fetchall()]
        assert len(ids) == units
        by_row = neighbours_by_row(index, ids, 600)
        assert by_row is not None                          # read from the file, not by SQL
        assert by_row == _sql(r, ids, 600, monkeypatch)
        assert retrieve._look_up_neighbours(r, ids, 600, None) == by_row
    # each document's first unit has no previous one, its last no next one, every other unit both
    assert sum(prv is None for _, prv in by_row.values()) == 3
    assert sum(nxt is None for nxt, _ in by_row.values()) == 3


def test_warm_asks_read_each_unit_row_once_as_a_servers_reader_does(built, shared, unit_fetches):
    index, _ = built
    read = unit_fetches
    with open_index(index) as r:
        timed = million.warm_asks(r, index, million.questions(shared, 3), load_config())
        assert getattr(r, "kept_units", None) is None      # the reader is left as it was lent
    assert timed["questions"] == 2 and timed["p50"] > 0
    assert read and len(read) == len(set(read))           # retrieval, context, citations, check: none twice
