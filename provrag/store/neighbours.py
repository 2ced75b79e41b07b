"""Each text unit's previous and next unit in its document, by row, written at index time.

Ask completes a sentence that a unit's end cuts (a page break) from the next unit, and one that
its start cuts from the previous unit (query/retrieve.neighbours). Found in SQL, that took a
window over every unit of the units' documents at each lookup: ~32 ms on ~9,500 units, two or
three lookups a question, the largest cost of a served question after the models (issue 30).
The index pipeline writes the answer once, beside the postings:

    INDEX/retrieval/unit_neighbours.npy   int64 (rows of text_units.parquet, 2): the rows of each
                                           row's previous and next unit, -1 for none

"Previous" and "next" are the SQL's: among the units of one document (document_id set) that have
a char_start, in the order of (char_start, human_readable_id). An index written before has no
such file, and one whose row count differs is not read: the SQL answers for them as before.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from provrag.store.postings import folder_of, mapped

NEIGHBOURS = "unit_neighbours.npy"


def unit_neighbours(document_ids, char_starts, hrids) -> np.ndarray:
    """(rows, 2) int64: each row's previous and next row in its document, -1 for none. The three
    columns in text_units.parquet's row order; None where a value is missing."""
    n = len(document_ids)
    out = np.full((n, 2), -1, np.int64)
    rows = np.asarray([i for i in range(n) if document_ids[i] is not None and char_starts[i] is not None], np.int64)
    if len(rows) < 2:
        return out
    _, doc = np.unique(np.asarray([str(document_ids[i]) for i in rows]), return_inverse=True)
    start = np.asarray([int(char_starts[i]) for i in rows], np.int64)
    # SQL's ORDER BY puts NULLs last
    hrid = np.asarray([int(hrids[i]) if hrids[i] is not None else np.iinfo(np.int64).max for i in rows], np.int64)
    order = np.lexsort((hrid, start, doc))
    ranked, doc = rows[order], doc[order]
    same = doc[1:] == doc[:-1]
    out[ranked[:-1][same], 1] = ranked[1:][same]
    out[ranked[1:][same], 0] = ranked[:-1][same]
    return out


def write_unit_neighbours(index_dir, text_units) -> None:
    """INDEX/retrieval/unit_neighbours.npy of the text_units frame (polars) as it is written."""
    from provrag.store import schema

    folder = folder_of(index_dir)
    folder.mkdir(exist_ok=True)
    np.save(folder / NEIGHBOURS, unit_neighbours(*(text_units[c].to_list() for c in (
        schema.DOCUMENT_ID, schema.CHAR_START, schema.HRID))))


def neighbour_rows(index_path, rows: list[int], n_rows: int) -> np.ndarray | None:
    """(len(rows), 2): the previous and next row of each of `rows`, or None when the index has no
    such file or it was written for another number of rows (`n_rows`: text_units.parquet's)."""
    table = mapped(index_path, NEIGHBOURS, _open)
    if table is None or table.shape != (n_rows, 2):
        return None
    return np.asarray(table[np.asarray(rows, np.int64)])


@lru_cache(maxsize=8)
def _open(folder: str, stamp: tuple) -> np.ndarray:
    return np.load(Path(folder) / NEIGHBOURS, mmap_mode="r")


def neighbours_by_row(index_path, ids: list[str], chars: int) -> dict[str, tuple] | None:
    """{unit id: (continuation or None, antecedent or None)} as query/retrieve.neighbours gives
    them, from the rows the index wrote down: the units' and their neighbours' rows read by
    position (store/units.read_rows), no scan. None for an index without the file."""
    from provrag.store.postings import row_positions
    from provrag.store.units import read_rows, units_in_file

    where = row_positions(index_path, ids) if index_path is not None else None
    if where is None:
        return None
    rows = list(where.values())
    around = neighbour_rows(index_path, rows, units_in_file(index_path))
    if around is None:
        return None
    need = sorted(set(rows) | {int(r) for r in around.ravel() if r >= 0})
    t = read_rows(index_path, need).to_pydict() if need else {}
    at = {int(p): k for k, p in enumerate(t.get("row_position", []))}
    out: dict[str, tuple] = {i: (None, None) for i in ids}
    for (uid, row), (prv, nxt) in zip(where.items(), around.tolist()):
        own, n, p = at[row], at.get(nxt), at.get(prv)
        text = next_head(t["char_end"][own], t["char_start"][n], t["text"][n], chars) if n is not None else None
        head = previous_tail(t["char_start"][own], t["char_start"][p], t["text"][p], chars) if p is not None else None
        out[uid] = ({"human_readable_id": t["human_readable_id"][n], "text": text} if text is not None else None,
                    {"human_readable_id": t["human_readable_id"][p], "text": head} if head is not None else None)
    return out


def next_head(end, nstart, text: str | None, chars: int = 600) -> str | None:
    """What continuations gives a unit ending at `end` whose next unit starts at `nstart` with
    `text` (None when it is blank); index/passages.py reads every unit the same way."""
    skip = max(0, int(end) - int(nstart)) if nstart is not None and end is not None else 0
    text = (text or "")[skip:skip + chars]
    return text if text.strip() else None


def previous_tail(start, pstart, text: str | None, chars: int = 600) -> str | None:
    """What antecedents gives a unit starting at `start` whose previous unit starts at `pstart`
    with `text` (None when there is none or it is blank); index/passages.py reads it the same way."""
    if pstart is None or start is None or text is None:
        return None
    gap = int(start) - int(pstart)
    cut = max(0, min(len(text), gap))
    head = text[max(0, cut - int(chars)):cut]
    if gap > len(text):  # the units do not overlap: what lies between them is whitespace
        head += "\n"
    return head if head.strip() else None
