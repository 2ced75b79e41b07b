"""Text units joined to their documents: the one query that turns unit ids into text + pages.

Resolve, retrieval and verify all need a unit's text, its physical pages and its document's
title, path and printed page labels; they fetch them here. The fetch is two passes: ids →
row positions (reads only the id column), then the rows at those positions, so DuckDB skips
every 2,048-row vector without a wanted unit and decodes the text column only where one
sits. One pass with `id IN (…)` decodes the text of all rows: 3–4× slower on a million units.
Their documents' title, path and page labels come from store/facts.documents_of, read once per
connection (they were joined to every fetch: ~7-12 ms of each, issue 30).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

from provrag.store.facts import documents_of

INLINE_MAX = 5000   # longer id lists are registered as an Arrow table instead of inlined in the SQL
KEPT_UNITS = 8192   # unit rows a server keeps per index version (~2 KB of text each: ~16 MB), and as many units' neighbours (≤ 1.2 KB each)


@dataclass
class UnitRow:
    """One text unit with its document's title, path and page labels."""

    id: str
    human_readable_id: int | None
    text: str
    page_start: int | None
    page_end: int | None
    char_start: int | None
    char_end: int | None
    document_id: str | None
    title: str | None
    path: str | None
    page_labels: list[str] | None
    ocr_pages: list[int] | None = None   # the unit's pages whose text is OCR output
    title_shared: bool = False           # another document of the index has the same title
    running_heads: list[str] | None = None   # per page of its document, what the page's running heads said

    @property
    def document(self) -> str:
        """The name a reader knows the document by: its title, with its file where another
        document has the same title ("The Listings Package (listings-devel.pdf)"), so two
        sources a reader is shown can always be told apart."""
        return document_name(self.title, self.path, self.document_id, self.title_shared)

    @property
    def running_head(self) -> str:
        """What the running heads of the unit's pages said, each once, in page order ("" where
        its document has none)."""
        heads = self.running_heads or []
        if not heads or self.page_start is None:
            return ""
        last = self.page_end if self.page_end is not None else self.page_start
        pages = range(max(1, int(self.page_start)), min(len(heads), int(last)) + 1)
        return " · ".join(dict.fromkeys(heads[p - 1] for p in pages if heads[p - 1]))

    def page_label(self, page: int | None) -> str | None:
        """The label printed on physical page `page` ("iv", "T-1"), where the document has them."""
        try:
            if self.page_labels is not None and page and 1 <= int(page) <= len(self.page_labels):
                return self.page_labels[int(page) - 1]
        except (TypeError, ValueError):
            pass
        return None


def document_name(title: str | None, path: str | None, document_id: str | None, title_shared: bool) -> str:
    """A document's name for readers (see UnitRow.document): the one naming rule."""
    if title and title_shared and path and path != title:
        return f"{title} ({path})"
    return title or path or document_id or "(unknown document)"


def sql_strings(ids) -> str:
    """A SQL list of string literals."""
    return ", ".join("'" + str(i).replace("'", "''") + "'" for i in ids)


def sql_in(con, col: str, ids: list[str], tag: str) -> str:
    """`col IN (...)` for string ids; very long lists go through a registered Arrow table."""
    if len(ids) <= INLINE_MAX:
        return f"{col} IN ({sql_strings(ids)})"
    import pyarrow as pa

    from provrag.store.rows import string_array

    name = f"_ids_{tag}"
    con.register(name, pa.table({"v": string_array(ids)}))
    return f"{col} IN (SELECT v FROM {name})"


class KeptUnits:
    """Unit rows already fetched from one version of an index, kept for the next request (a
    server's: serve/opened.py puts one on every reader it lends). An ask fetches units five or six
    times (retrieval, the answer's context, citations, the check) and a server's questions meet
    the same units again; a version's rows never change (a rebuilt index is a new version, with
    a store of its own). Bounded: the least recently used go first."""

    def __init__(self, limit: int = KEPT_UNITS):
        import threading
        from collections import OrderedDict

        self.limit = limit
        self.lock = threading.Lock()
        self.rows: OrderedDict[str, UnitRow] = OrderedDict()
        # each unit's (continuation, antecedent) as query/retrieve.neighbours gives them, by (id, chars)
        self.adjacent: OrderedDict[tuple[str, int], tuple] = OrderedDict()

    def get(self, ids: list[str]) -> dict[str, UnitRow]:
        with self.lock:
            found = {i: self.rows[i] for i in ids if i in self.rows}
            for i in found:
                self.rows.move_to_end(i)
        return found

    def keep(self, rows: dict[str, UnitRow]) -> None:
        with self.lock:
            self.rows.update(rows)
            while len(self.rows) > self.limit:
                self.rows.popitem(last=False)

    def neighbours_of(self, ids: list[str], chars: int) -> dict[str, tuple]:
        """The kept (continuation, antecedent) of each of `ids` that has them."""
        with self.lock:
            found = {i: self.adjacent[(i, chars)] for i in ids if (i, chars) in self.adjacent}
            for i in found:
                self.adjacent.move_to_end((i, chars))
        return found

    def keep_neighbours(self, found: dict[str, tuple], chars: int) -> None:
        with self.lock:
            self.adjacent.update(((i, chars), v) for i, v in found.items())
            while len(self.adjacent) > self.limit:
                self.adjacent.popitem(last=False)


def fetch_units(reader, unit_ids, positions: str = "text_units") -> dict[str, UnitRow]:
    """The rows of `unit_ids` (missing ids are left out). Where the index has its row map
    (INDEX/retrieval/, store/postings.row_positions), the ids' rows are found by binary search and
    read from only the row groups that hold them (read_rows); otherwise `positions`, a table with
    (id, row_position) — text_units itself, or a resolver's in-memory copy — is where DuckDB looks
    the ids up. A reader with `kept_units` (a server's, KeptUnits) reads only the rows it has not
    kept."""
    ids = [i for i in dict.fromkeys(unit_ids) if i]
    kept = getattr(reader, "kept_units", None)
    if kept is None or not ids:
        return _fetch_rows(reader, ids, positions)
    found = kept.get(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        fresh = _fetch_rows(reader, missing, positions)
        kept.keep(fresh)
        found.update(fresh)
    return {i: found[i] for i in ids if i in found}


def _fetch_rows(reader, ids: list[str], positions: str) -> dict[str, UnitRow]:
    """_fetch, by the index's row map when it has one. Why: DuckDB finds ids by scanning the id
    column (random hashes, no pruning) and then the rows by position, ~10-25 ms a fetch on ~9,500
    units, and an ask fetches five or six times (its context, citations, the answer check); the
    binary search and the row groups read with pyarrow (kept per process) take ~1-3 ms."""
    if not ids:
        return {}
    from provrag.store.postings import row_positions

    where = row_positions(getattr(reader, "path", None), ids)
    if where is None:
        return _fetch(reader, ids, positions, None)
    return _fetch(reader, ids, positions, read_rows(reader.path, list(where.values()))) if where else {}


def _fetch(reader, ids: list[str], positions: str, rows) -> dict[str, UnitRow]:
    """The rows of `ids` as UnitRows: found by DuckDB in `positions`, or those of `rows` (an
    Arrow table of text_units rows, read_rows)."""
    if not ids:
        return {}
    con = reader.con
    if rows is None:
        pos = [r[0] for r in con.execute(
            f"SELECT row_position FROM {positions} WHERE {sql_in(con, 'id', ids, 'fetch')}").fetchall()]
        if not pos:
            return {}
        found = con.execute(f"SELECT {', '.join(UNIT_COLUMNS)} FROM text_units "
                            f"WHERE row_position IN ({', '.join(str(int(p)) for p in sorted(pos))})").fetchall()
    else:   # an Arrow table of the rows (read_rows): taken as it is, no SQL
        found = list(zip(*(rows.column(c).to_pylist() for c in UNIT_COLUMNS)))
    # their documents' names, read once per connection (store/facts.py) rather than joined each time
    docs = documents_of(con, {r[7] for r in found})
    out = {}
    for r in found:
        title, path, labels, shared, heads = docs.get(r[7], (None, None, None, False, None))
        out[r[0]] = UnitRow(id=r[0], human_readable_id=r[1], text=r[2] or "", page_start=r[3], page_end=r[4],
                            char_start=r[5], char_end=r[6], document_id=r[7], title=title, path=path,
                            page_labels=labels, ocr_pages=r[8], title_shared=bool(shared), running_heads=heads)
    return out


UNIT_COLUMNS = ("id", "human_readable_id", "text", "page_start", "page_end", "char_start", "char_end",
                "document_id", "ocr_pages")


def read_rows(index_path, positions: list[int]):
    """The text_units.parquet rows at `positions` (UNIT_COLUMNS and row_position) as an Arrow
    table, read with pyarrow from only the row groups that hold them: DuckDB, asked for rows by
    position, still visits every row group (~0.2 s at a million units). The file's footer is
    parsed once per process (and again when the index is rebuilt)."""
    import os
    from pathlib import Path

    import numpy as np
    import pyarrow as pa

    from provrag.store.rows import int64_column

    path = Path(index_path) / "text_units.parquet"
    st = os.stat(path)
    footer, first_rows = _units_file(str(path), (st.st_mtime_ns, st.st_ino))
    pos = np.unique(np.asarray(positions, np.int64))
    groups = np.searchsorted(first_rows, pos, side="right") - 1
    wanted = np.unique(groups)
    tables = _row_groups(str(path), (st.st_mtime_ns, st.st_ino), footer, wanted.tolist())
    table = pa.concat_tables(tables) if tables else footer.schema.to_arrow_schema().empty_table().select(UNIT_COLUMNS)
    sizes = first_rows[wanted + 1] - first_rows[wanted]
    start_in_table = dict(zip(wanted.tolist(), (np.cumsum(sizes) - sizes).tolist()))
    take = [start_in_table[g] + int(p - first_rows[g]) for g, p in zip(groups.tolist(), pos)]
    # the rows by slices rather than Table.take, which imports pyarrow.compute (~50 ms of a cold
    # ask, its docstrings parsed through pydoc) for a few dozen rows
    runs: list[list[int]] = []   # [start, length] of each run of consecutive rows (take is increasing)
    for i in take:
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    rows = pa.concat_tables([table.slice(a, n) for a, n in runs]).combine_chunks() if runs else table.slice(0, 0)
    return rows.append_column("row_position", int64_column(pos))


def units_in_file(index_path) -> int:
    """text_units.parquet's row count, from its footer (parsed once per process and version)."""
    import os
    from pathlib import Path

    path = Path(index_path) / "text_units.parquet"
    st = os.stat(path)
    return int(_units_file(str(path), (st.st_mtime_ns, st.st_ino))[1][-1])


# decoded row groups of text_units.parquet kept per process, the least recently read dropped first
# past this many bytes: a question's units are read, then their neighbours (rows beside them,
# store/neighbours.py), then a wider retry's, mostly from the same groups; each read decoded
# ~0.5-2 MB of text a group (~20 ms of a served ask on ~9,500 units, issue 30)
GROUPS_KEPT_BYTES = 48 << 20
_groups: OrderedDict = OrderedDict()
_groups_held = [0]
_groups_lock = threading.Lock()


def _row_groups(path: str, stamp: tuple, footer, wanted: list[int]) -> list:
    """The UNIT_COLUMNS of row groups `wanted` of text_units.parquet (Arrow tables, in order)."""
    import pyarrow.parquet as pq

    with _groups_lock:
        found = {g: _groups[(path, stamp, g)] for g in wanted if (path, stamp, g) in _groups}
        for g in found:
            _groups.move_to_end((path, stamp, g))
    missing = [g for g in wanted if g not in found]
    if missing:
        # a reader of its own per call, over the footer parsed once: one pyarrow ParquetFile read
        # from two server threads at once crashed the process (tests/store/test_units_threads.py)
        with pq.ParquetFile(path, metadata=footer) as handle:
            fresh = {g: handle.read_row_group(g, columns=list(UNIT_COLUMNS)) for g in missing}
        with _groups_lock:
            for g, table in fresh.items():
                if (path, stamp, g) not in _groups:
                    _groups[(path, stamp, g)] = table
                    _groups_held[0] += table.nbytes
            while _groups_held[0] > GROUPS_KEPT_BYTES and len(_groups) > 1:
                _groups_held[0] -= _groups.popitem(last=False)[1].nbytes
        found.update(fresh)
    return [found[g] for g in wanted]


@lru_cache(maxsize=8)
def _units_file(path: str, stamp: tuple):
    """(the file's parsed footer, first row of each row group and the row count after the last).
    The footer, not an open ParquetFile: a reader is not safe to share between threads."""
    import numpy as np
    import pyarrow.parquet as pq

    footer = pq.read_metadata(path)
    counts = [footer.row_group(i).num_rows for i in range(footer.num_row_groups)]
    return footer, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
