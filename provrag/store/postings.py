"""BM25 postings memory-mapped: a question reads only its own terms' rows, however many units.

terms.parquet (store/terms.py) is the index's term table; answering from it in SQL reads every
row group whose term range overlaps the question's (and the spelling fix reads the whole
table). At index time the same rows are also written here as numpy arrays in compressed
sparse row form, sorted by term then unit, and memory-mapped at query time:

    INDEX/retrieval/unit_ids.npy        every text unit's id, sorted (bytes): row r = unit r
    INDEX/retrieval/vocabulary.npy      the index's terms, sorted (UTF-8 bytes; byte order = code-point order)
    INDEX/retrieval/term_offsets.npy    int64, term t's postings are rows offsets[t]:offsets[t + 1]
    INDEX/retrieval/posting_units.npy   int32, the unit (row of unit_ids) of each posting
    INDEX/retrieval/posting_tf.npy      int32, the term's count in that unit
    INDEX/retrieval/unit_length.npy     int32, each unit's length in terms (BM25's dl)
    INDEX/retrieval/postings.json       format, tokenizer and the BM25 stats (N, avgdl)

A question costs a binary search per term in the vocabulary, then the sum of its terms'
posting lengths — never the number of units (bar one bincount of N floats). The score is
Okapi BM25 exactly as store/terms.py's SQL computes it (same idf, k1, b, float64), so the top-k is
the SQL's. Written by hand in numpy because no library on PyPI here scores our own term table
(bm25s and tantivy tokenize themselves) and the arrays are ~60 lines of code.
"""
from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

FOLDER = "retrieval"
META = "postings.json"
FORMAT = 1
UNIT_IDS = "unit_ids.npy"
UNIT_ROWS = "unit_rows.npy"
K1, B = 1.2, 0.75  # Okapi BM25's usual parameters (Lucene's defaults), for the SQL of store/terms.py too


def folder_of(index_path) -> Path:
    return Path(index_path) / FOLDER


def write_unit_ids(folder: Path, ids) -> np.ndarray:
    """INDEX/retrieval/unit_ids.npy: the units' ids sorted (bytes), shared with store/vectors.py,
    and unit_rows.npy: each one's row in text_units.parquet. `ids` in text_units.parquet's order."""
    keys = np.asarray([str(i).encode() for i in ids], dtype=bytes) if len(ids) else np.zeros(0, "S1")
    order = np.argsort(keys, kind="stable")
    out = folder_of(folder)
    out.mkdir(exist_ok=True)
    np.save(out / UNIT_IDS, keys[order])
    np.save(out / UNIT_ROWS, order.astype(np.int64))
    return keys[order]


def lookup(sorted_ids: np.ndarray, unit_ids) -> tuple[np.ndarray, np.ndarray]:
    """(places in sorted_ids, mask of the ids found) of `unit_ids`."""
    keys = np.asarray([str(i).encode() for i in unit_ids], dtype=bytes) if len(unit_ids) else np.zeros(0, "S1")
    at = np.searchsorted(sorted_ids, keys)
    ok = at < len(sorted_ids)
    ok[ok] = sorted_ids[at[ok]] == keys[ok]
    return at, ok


def row_positions(index_path, unit_ids: list[str]) -> dict[str, int] | None:
    """{unit id: its row in text_units.parquet} from INDEX/retrieval/ (unknown ids left out), or
    None for an index without it: DuckDB then finds rows by scanning the id column."""
    found = mapped(index_path, UNIT_ROWS, _unit_rows)
    if found is None:
        return None
    sorted_ids, rows = found
    at, ok = lookup(sorted_ids, unit_ids)
    return {u: int(rows[a]) for u, a, found in zip(unit_ids, at.tolist(), ok.tolist()) if found}


@lru_cache(maxsize=8)
def _unit_rows(folder: str, stamp: tuple):
    return np.load(Path(folder) / UNIT_IDS, mmap_mode="r"), np.load(Path(folder) / UNIT_ROWS, mmap_mode="r")


def write_postings(folder: Path, ranked, unit_ids: list[str], vocabulary: list[str], stats: dict,
                   table_order: list[str]) -> None:
    """Write the postings of `ranked` — the term table numbered as store/terms._ranked_terms
    returns it: columns term (place in `vocabulary`), unit (place in sorted `unit_ids`), tf,
    dl, sorted by term then unit. `table_order`: the same ids in text_units.parquet's order."""
    out = folder_of(folder)
    if write_unit_ids(folder, table_order).tolist() != [u.encode() for u in unit_ids]:
        raise ValueError("text unit ids are not unique: the postings cannot number them")
    terms = ranked["term"].to_numpy().astype(np.int64, copy=False)
    offsets = np.zeros(len(vocabulary) + 1, np.int64)
    if len(terms):
        np.cumsum(np.bincount(terms, minlength=len(vocabulary)), out=offsets[1:])
    units = ranked["unit"].to_numpy().astype(np.int32)
    lengths = np.zeros(len(unit_ids), np.int32)
    lengths[units] = ranked["dl"].to_numpy()
    vocab = np.asarray([t.encode() for t in vocabulary], dtype=bytes) if vocabulary else np.zeros(0, "S1")
    np.save(out / "vocabulary.npy", vocab)
    np.save(out / "term_offsets.npy", offsets)
    np.save(out / "posting_units.npy", units)
    np.save(out / "posting_tf.npy", ranked["tf"].to_numpy().astype(np.int32))
    np.save(out / "unit_length.npy", lengths)
    (out / META).write_text(json.dumps({"format": FORMAT, "stats": stats}))


def numbered(table, unit_ids: list[str]):
    """A term table with strings (term, text_unit_id, tf, dl; sorted by term then id) → the
    numbered frame write_postings takes, and its vocabulary (an update's reused rows)."""
    import polars as pl

    vocabulary = table["term"].unique(maintain_order=True).to_list()
    first = (table["term"] != table["term"].shift(1)).fill_null(True)
    places = pl.DataFrame({"text_unit_id": unit_ids, "unit": np.arange(len(unit_ids), dtype=np.uint32)})
    ranked = table.with_columns(term=first.cast(pl.Int64).cum_sum() - 1).join(
        places, on="text_unit_id", how="left", maintain_order="left")
    return ranked.select("term", "unit", "tf", "dl"), vocabulary


class Postings:
    """The memory-mapped postings of one index (open with `opened`)."""

    def __init__(self, folder: Path, meta: dict):
        load = lambda name: np.load(folder / name, mmap_mode="r")  # noqa: E731
        self.folder = folder
        self.stats = meta["stats"]
        self.unit_ids, self.vocabulary = load(UNIT_IDS), load("vocabulary.npy")
        self.offsets, self.units, self.tf = load("term_offsets.npy"), load("posting_units.npy"), load("posting_tf.npy")
        self.lengths = load("unit_length.npy")
        self._vocab_table = None

    def _place(self, term: str) -> int:
        """The term's row in the vocabulary, or -1."""
        key = term.encode()
        i = int(np.searchsorted(self.vocabulary, key))
        return i if i < len(self.vocabulary) and self.vocabulary[i] == key else -1

    def known(self, terms) -> set[str]:
        return {t for t in terms if self._place(t) >= 0}

    def df(self, term: str) -> int:
        i = self._place(term)
        return int(self.offsets[i + 1] - self.offsets[i]) if i >= 0 else 0

    def rows_of(self, unit_ids) -> np.ndarray:
        """Rows of the given unit ids (unknown ids left out), sorted."""
        at, ok = lookup(self.unit_ids, list(unit_ids))
        return np.unique(at[ok])

    def _term_scores(self, terms: dict[str, int], rows: np.ndarray | None):
        """(term, unit rows, BM25 contributions) per query term found, as terms.py's SQL scores them."""
        n = max(int(self.stats.get("n_units") or 1), 1)
        avgdl = float(self.stats.get("avgdl") or 1.0)
        for term, qtf in terms.items():
            i = self._place(term)
            if i < 0:
                continue
            a, b = int(self.offsets[i]), int(self.offsets[i + 1])
            idf = math.log(1 + (n - (b - a) + 0.5) / ((b - a) + 0.5))
            if rows is None:
                units, tf = np.asarray(self.units[a:b]), np.asarray(self.tf[a:b], dtype=np.float64)
            else:  # a term's postings are in unit order: binary-search the few rows asked for
                at = a + np.searchsorted(self.units[a:b], rows)
                inside = at < b
                at = at[inside][np.asarray(self.units[at[inside]]) == rows[inside]]
                units, tf = np.asarray(self.units[at]), np.asarray(self.tf[at], dtype=np.float64)
            dl = np.asarray(self.lengths[units], dtype=np.float64)
            yield term, units, idf * qtf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))

    def bm25(self, terms: dict[str, int], limit: int, unit_ids: list[str] | None = None) -> list[tuple[str, float]]:
        """(unit id, BM25) best first, ties by id — terms.bm25's answer without its scan."""
        rows = self.rows_of(unit_ids) if unit_ids is not None else None
        if not terms or (rows is not None and not len(rows)):
            return []
        parts = list(self._term_scores(terms, rows))
        if not parts:
            return []
        units = np.concatenate([u for _, u, _ in parts])
        scores = np.concatenate([s for _, _, s in parts])
        if len(units) * 16 < len(self.unit_ids):  # few postings (rare terms, or the few units asked for)
            hit, where = np.unique(units, return_inverse=True)
            total = np.bincount(where, weights=scores, minlength=len(hit))
        else:  # one pass over the postings into a score per unit; every share is > 0, so hits are the nonzeros
            total = np.bincount(units, weights=scores, minlength=len(self.unit_ids))
            hit = np.flatnonzero(total)
            total = total[hit]
        if limit < len(hit):
            keep = np.flatnonzero(total >= total[np.argpartition(-total, limit - 1)[:limit]].min())
            hit, total = hit[keep], total[keep]  # the last place's ties too, ordered by id below
        order = np.lexsort((hit, -total))[:limit]  # rows are in id order: ties by id, as the SQL
        return [(self.unit_ids[r].decode(), float(total[j])) for j, r in zip(order, hit[order])]

    def contributions(self, terms: dict[str, int], unit_ids: list[str]) -> dict[str, dict[str, float]]:
        """{unit id: {term: its BM25 share}} — terms.term_contributions without its scan."""
        out: dict[str, dict[str, float]] = {}
        rows = self.rows_of(unit_ids)
        if not terms or not len(rows):
            return out
        for term, units, scores in self._term_scores(terms, rows):
            for r, s in zip(units.tolist(), scores.tolist()):
                out.setdefault(self.unit_ids[r].decode(), {})[term] = float(s)
        return out

    def vocabulary_table(self):
        """(term, df) of every term as an Arrow table, for the spelling fix in SQL (built once)."""
        if self._vocab_table is None:
            import pyarrow as pa

            from provrag.store.rows import int64_column, strings_of

            terms = strings_of(np.asarray(self.vocabulary))
            self._vocab_table = pa.table({"term": terms, "df": int64_column(np.diff(np.asarray(self.offsets)))})
        return self._vocab_table


@lru_cache(maxsize=8)
def _open(folder: str, stamp: tuple) -> Postings | None:
    try:
        meta = json.loads((Path(folder) / META).read_text())
        if meta.get("format") != FORMAT:
            return None
        return Postings(Path(folder), meta)
    except (OSError, ValueError, KeyError):
        return None


def mapped(index_path, name: str, opener):
    """`opener(folder, stamp)` — an lru_cache'd function — for the index's retrieval/ folder when
    it holds `name`, else None. The stamp (mtime, inode of `name`) makes a rebuilt index (a new
    folder swapped in, store/writer.py) open anew while a served one is mapped once per process."""
    if index_path is None:
        return None
    folder = folder_of(index_path)
    try:
        st = os.stat(folder / name)
    except OSError:
        return None
    return opener(str(folder), (st.st_mtime_ns, st.st_ino))


def opened(index_path, tokenizer: str) -> Postings | None:
    """The index's postings, memory-mapped once per process, or None: an index written before
    them, or by another tokenizer (terms.py falls back to SQL)."""
    p = mapped(index_path, META, _open)
    return p if p is not None and p.stats.get("tokenizer") == tokenizer else None
