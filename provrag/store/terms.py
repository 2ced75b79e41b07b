"""The term table and BM25 in plain SQL: the lexical half of hybrid retrieval.

DuckDB's `fts` extension is not bundled and cannot be installed offline, so BM25 is done
the way fts does it internally: a table of (term, text_unit_id, tf, dl) and one SQL query
that sums Okapi BM25 over the question's terms. The index pipeline writes the table as
INDEX/terms.parquet, sorted by term so that DuckDB's row-group min/max statistics skip most
of the file for a query; N and the average unit length sit in the parquet footer
(key `provrag.bm25`), read with `parquet_kv_metadata` without scanning rows.

Schema of INDEX/terms.parquet (provrag's own table; kept here, not in schema.py, because
only retrieval reads it):
    term          string   a stemmed, lowercased word of the unit's text (stop words dropped)
    text_unit_id  string   text_units.id
    tf            int32    occurrences of the term in the unit
    dl            int32    the unit's length in terms (repeated per row; parquet stores it RLE)

The index pipeline also writes the same rows as memory-mapped postings (store/postings.py,
INDEX/retrieval/): when an index has them, bm25, term_contributions, idf_of and the spelling fix
read them instead of the table (a question then reads only its terms' rows at a million units),
with the same scores; the SQL below is what an index written before them still gets.

A GraphRAG output folder has no such table: `ensure_terms` builds it on the fly into a DuckDB
temp table from the text_units view. That reads every unit's text once per query, fine for
GraphRAG's small indexes (hundreds of units) and the reason provrag writes it at index time.
"""
from __future__ import annotations

import json
import math
import weakref
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from provrag.store.postings import B, K1  # noqa: F401  (Okapi BM25's parameters, shared by both paths)
from provrag.store.postings import opened as opened_postings
from provrag.text.words import query_terms, terms_of

if TYPE_CHECKING:  # polars is imported where it is used, not at import time
    import polars as pl

TERMS_FILE = "terms.parquet"
TERMS_VIEW = "provrag_terms"
STATS_TABLE = "provrag_terms_stats"
KV_KEY = "provrag.bm25"
TOKENIZER = "words-snowball-en-v2"  # recorded in the footer: a different tokenizer must not be mixed

_BATCH_UNITS = 2048  # units tokenized into one Arrow batch of term rows (memory, not results)
_ROW_GROUP = 65_536  # rows per parquet row group of terms.parquet (DuckDB skips groups by their term range)

def build_terms(units) -> pl.DataFrame:
    """The term table of text units (a polars DataFrame or a list of dicts with id and text):
    a polars DataFrame (term, text_unit_id, tf, dl) sorted by term."""
    return _with_names(*_ranked_terms(units))


def _ranked_terms(units) -> tuple[pl.DataFrame, list[str], list[str]]:
    """The term rows (term, unit, tf, dl) sorted by term then unit id, where `term` is the place
    of the term in the sorted vocabulary and `unit` the place of the unit's id in the sorted ids,
    both returned beside them.

    Numbers, not strings: a 50 MB text has 3.5 million term rows, and sorting them as strings
    held three copies of ~130 MB (the batches, their concatenation, the sorted copy); as four
    32-bit numbers a row they are 14 bytes. The strings go in after the sort (`_with_names`),
    a row group at a time when writing. The rows become a frame every _BATCH_UNITS units: as
    Python lists they would cost ~800 MB and fragment the heap for the rest of the run."""
    import numpy as np
    import polars as pl

    if isinstance(units, pl.DataFrame):
        ids, texts = units["id"].to_list(), units["text"]
    else:
        ids, texts = [u["id"] for u in units], [u.get("text") for u in units]
    sorted_ids = sorted(set(ids))
    rank = {uid: r for r, uid in enumerate(sorted_ids)}
    number: dict[str, int] = {}  # each term's number, in order of first appearance
    frames, rows = [], ([], [], [], [])
    for n, (uid, text) in enumerate(zip(ids, texts), 1):
        counts = Counter(terms_of(text or ""))
        dl = sum(counts.values())
        for term, tf in counts.items():
            rows[0].append(number.setdefault(term, len(number)))
            rows[1].append(rank[uid])
            rows[2].append(tf)
            rows[3].append(dl)
        if n % _BATCH_UNITS == 0:
            frames.append(_terms_frame(*rows))
            rows = ([], [], [], [])
    frames.append(_terms_frame(*rows))
    vocabulary = sorted(number)  # code-point order: the byte order polars and DuckDB sort strings in
    place = np.empty(len(number), np.uint32)
    place[[number[t] for t in vocabulary]] = np.arange(len(vocabulary), dtype=np.uint32)
    df = pl.concat(frames, rechunk=False)
    frames.clear()
    df = df.with_columns(pl.Series("term", place).gather(df["term"])).sort(["term", "unit"])
    return df, sorted_ids, vocabulary


def _terms_frame(terms: list, units: list, tfs: list, dls: list) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame({"term": terms, "unit": units, "tf": tfs, "dl": dls},
                        schema={"term": pl.UInt32, "unit": pl.UInt32, "tf": pl.Int32, "dl": pl.Int32})


def _with_names(ranked: pl.DataFrame, sorted_ids: list[str], vocabulary: list[str]) -> pl.DataFrame:
    """Numbered term rows (_ranked_terms) → the table's rows: the term and the unit's id."""
    import polars as pl

    terms = pl.Series("term", vocabulary, dtype=pl.String).gather(ranked["term"])
    unit_ids = pl.Series("text_unit_id", sorted_ids, dtype=pl.String).gather(ranked["unit"])
    return ranked.select(terms, unit_ids, "tf", "dl")


def stats_of(units_count: int, terms_df, unit_column: str = "text_unit_id") -> dict:
    """N and average unit length (in terms) for BM25, as stored in the parquet footer."""
    lengths = terms_df.unique(unit_column)["dl"] if terms_df.height else None
    total = int(lengths.sum()) if lengths is not None else 0
    n = max(int(units_count), 1)
    return {"n_units": int(units_count), "avgdl": (total / n) if total else 1.0, "tokenizer": TOKENIZER}


def previous_terms(index_path: Path | None, unit_ids: set[str]):
    """The term rows of `unit_ids` in a previous index's terms.parquet (same tokenizer), or
    None. A unit's id hashes its text (index/chunk.unit_id), so its rows are still right."""
    if index_path is None or not (Path(index_path) / TERMS_FILE).is_file():
        return None
    import polars as pl
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(Path(index_path) / TERMS_FILE).metadata or {}
        if json.loads(meta.get(KV_KEY.encode(), b"{}")).get("tokenizer") != TOKENIZER:
            return None
        old = pl.read_parquet(Path(index_path) / TERMS_FILE)
    except (OSError, ValueError):
        return None
    return old.filter(pl.col("text_unit_id").is_in(list(unit_ids)))


def write_terms(folder: Path, units, previous: Path | None = None) -> dict:
    """Write INDEX/terms.parquet for the index pipeline; returns the footer stats.

    `units` is the pipeline's list of text-unit dicts (or a polars frame) with id and text.
    `previous`: an index whose rows for the same unit ids are reused (an update tokenizes only
    new units; the table is the one a full build writes).
    """
    import polars as pl
    import pyarrow.parquet as pq

    from provrag.store.postings import numbered, write_postings

    reused = None
    if previous is not None and isinstance(units, pl.DataFrame):
        reused = previous_terms(previous, set(units["id"].to_list()))
    n = units.height if hasattr(units, "height") else len(units)
    if reused is not None and reused.height:
        done = set(reused["text_unit_id"].unique().to_list())
        fresh = build_terms(units.filter(~pl.col("id").is_in(list(done))))
        df, names = pl.concat([reused, fresh]).sort(["term", "text_unit_id"]), None
        stats = stats_of(n, df)
    else:
        df, *names = _ranked_terms(units)
        stats = stats_of(n, df, "unit")
    table_order = units["id"].to_list() if isinstance(units, pl.DataFrame) else [u["id"] for u in units]
    if names is None:
        all_ids = sorted(set(table_order))
        ranked, vocabulary = numbered(df, all_ids)
        write_postings(folder, ranked, all_ids, vocabulary, stats, table_order)
    else:
        write_postings(folder, df, *names, stats, table_order)
    # one row group of 65,536 rows at a time (their terms and ids put in just then): the whole table as
    # Arrow would be a second copy of it, ~0.5 GB for a 50 MB text
    writer = None
    try:
        for start in range(0, max(df.height, 1), _ROW_GROUP):
            part = df.slice(start, _ROW_GROUP)
            table = (_with_names(part, *names) if names is not None else part).to_arrow()
            if writer is None:  # the footer carries the BM25 stats
                writer = pq.ParquetWriter(Path(folder) / TERMS_FILE, table.schema.with_metadata({KV_KEY: json.dumps(stats)}),
                                          compression="zstd")
            writer.write_table(table, row_group_size=_ROW_GROUP)
    finally:
        if writer is not None:
            writer.close()
    return stats


# ---- query side --------------------------------------------------------------------------------

def _kv_stats(con, path: Path) -> dict | None:
    rows = con.execute("SELECT key, value FROM parquet_kv_metadata(?)", [str(path)]).fetchall()
    for key, value in rows:
        k = key.decode() if isinstance(key, (bytes, bytearray)) else str(key)
        if k == KV_KEY:
            v = value.decode() if isinstance(value, (bytes, bytearray)) else str(value)
            try:
                return json.loads(v)
            except ValueError:
                return None
    return None


_stats_of_con: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # connection → its kept stats


def kept_stats(con) -> dict | None:
    """The BM25 stats ensure_terms kept on `con`, or None (a connection that only has a term table).
    Held here too: asking DuckDB's catalog took ~3 ms, 4-7 times a served question (issue 30)."""
    known = _stats_of_con.get(con)
    if known is not None:
        return dict(known)
    have = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND temporary",
                       [STATS_TABLE]).fetchall()[0][0]
    return json.loads(con.execute(f"SELECT stats FROM {STATS_TABLE}").fetchall()[0][0]) if have else None


def ensure_terms(con, index_path: Path | None) -> dict:
    """Make the view/temp table `provrag_terms` available on `con`; returns its BM25 stats.

    Uses INDEX/terms.parquet when present and made by this tokenizer; otherwise builds the
    table from the text_units view into a temp table (GraphRAG folders, older indexes).
    Idempotent per connection.
    """
    have = kept_stats(con)
    if have is not None:
        return have
    path = Path(index_path) / TERMS_FILE if index_path is not None else None
    stats = None
    if path is not None and path.is_file():
        stats = _kv_stats(con, path)
        if stats and stats.get("tokenizer") == TOKENIZER:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {TERMS_VIEW} AS SELECT * FROM read_parquet('{_sql_str(path)}')")
            stats["source"] = "terms.parquet"
            if opened_postings(index_path, TOKENIZER) is not None:  # an older index has none: SQL scans the table
                stats["postings"] = str(index_path)
        else:
            stats = None
    postings = opened_postings(index_path, TOKENIZER) if stats is None else None
    if postings is not None:  # the postings alone (bench/million.py writes no terms.parquet): no view to scan
        stats = dict(postings.stats) | {"source": "postings.json", "postings": str(index_path)}
    if stats is None:
        stats = _build_temp(con)
    # the stats live in the connection itself, so they go away with it
    con.execute(f"CREATE OR REPLACE TEMP TABLE {STATS_TABLE} AS SELECT ?::VARCHAR AS stats", [json.dumps(stats)])
    _stats_of_con[con] = dict(stats)
    return stats


def _sql_str(p: Path) -> str:
    return str(p).replace("'", "''")


def _build_temp(con) -> dict:
    rows = con.execute("SELECT id, text FROM text_units").fetchall()
    df = build_terms([{"id": r[0], "text": r[1]} for r in rows])
    stats = stats_of(len(rows), df)
    con.register("_provrag_terms_arrow", df.to_arrow())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {TERMS_VIEW} AS SELECT * FROM _provrag_terms_arrow")
    con.unregister("_provrag_terms_arrow")
    stats["source"] = "built from text_units at query time"
    return stats


def _in_list(terms) -> str:
    return ", ".join("'" + t.replace("'", "''") + "'" for t in terms)


def match_terms(con, question: str) -> tuple[dict[str, int], dict[str, str]]:
    """The question's terms as found in the index, and the spelling corrections made.

    A term absent from the index (a typo: "gaurentee", "Aiken" for "Aken") is replaced by the
    closest indexed term when Jaro-Winkler similarity ≥ 0.9 (DuckDB built-in) and the change is a
    typo's: at most one edit per four letters typed (Damerau-Levenshtein), or the word completed
    ("serv" → "server"); else dropped. Jaro-Winkler rewards a shared prefix, so alone it read
    "monokai" (a colour scheme the index never mentions) as "mono": cutting three letters off
    a word the user typed makes another word, not a fix.
    """
    q = query_terms(question)
    if not q:
        return {}, {}
    postings = _postings(kept_stats(con) or {})
    vocabulary = TERMS_VIEW
    if postings is not None:  # the vocabulary's own (term, df) rows, not a scan of every posting
        found = postings.known(q)
        con.register("provrag_vocabulary", postings.vocabulary_table())
        vocabulary = "provrag_vocabulary"
    else:
        found = {r[0] for r in con.execute(
            f"SELECT DISTINCT term FROM {TERMS_VIEW} WHERE term IN ({_in_list(q)})").fetchall()}
    missing = [t for t in q if t not in found and len(t) >= 4 and not t[0].isdigit()]
    fixes: dict[str, str] = {}
    if missing:
        # ties (equally similar terms: "serv" → "server" / "servic") go to the term in more units,
        # then the first in order: arg_max's pick among ties varied with DuckDB's thread count
        rows = con.execute(f"""
            WITH m AS (SELECT unnest(?::VARCHAR[]) AS w),
                 v AS ({_vocabulary_sql(vocabulary)}),
                 j AS (SELECT w, term, df, jaro_winkler_similarity(w, term) AS sim FROM m, v),
                 typo AS (SELECT * FROM j WHERE sim >= 0.9
                          AND (starts_with(term, w) OR damerau_levenshtein(w, term) <= greatest(1, length(w) // 4))),
                 s AS (SELECT w, term, sim, row_number() OVER (PARTITION BY w ORDER BY sim DESC, df DESC, term) AS k
                       FROM typo)
            SELECT w, term, sim FROM s WHERE k = 1""", [missing]).fetchall()
        fixes = {w: t for w, t, sim in rows if t is not None and sim is not None}
    out: dict[str, int] = {}
    for t, n in q.items():
        t2 = t if t in found else fixes.get(t)
        if t2:
            out[t2] = out.get(t2, 0) + n
    return out, fixes


def _postings(stats: dict):
    """The index's memory-mapped postings when ensure_terms found them, else None (SQL)."""
    return opened_postings(stats["postings"], TOKENIZER) if stats.get("postings") else None


def _vocabulary_sql(source: str) -> str:
    """(term, df) of the terms a misspelling may be corrected to."""
    if source == TERMS_VIEW:
        return f"SELECT term, count(*) AS df FROM {TERMS_VIEW} WHERE length(term) >= 3 GROUP BY term"
    return f"SELECT term, df FROM {source} WHERE length(term) >= 3"


def _scored_hits(stats: dict, terms: dict[str, int], unit_ids: list[str] | None) -> tuple[str, list]:
    """The SQL (and its parameters) of a CTE `scored` (text_unit_id, term, score): each
    (unit, query term) pair's Okapi BM25 contribution; idf counts every unit of the index,
    whatever `unit_ids` restricts the rows to."""
    n = max(int(stats.get("n_units") or 1), 1)
    avgdl = float(stats.get("avgdl") or 1.0)
    names = list(terms)
    params: list = [names, [int(terms[t]) for t in names]]
    where_ids = ""
    if unit_ids is not None:
        where_ids = " AND t.text_unit_id IN (SELECT unnest(?::VARCHAR[]))"
        params.append(list(unit_ids))
    # the IN list is literal so DuckDB can prune row groups by the term column's min/max
    sql = f"""
        WITH q AS (SELECT unnest(?::VARCHAR[]) AS term, unnest(?::INTEGER[]) AS qtf),
        hits AS (SELECT term, text_unit_id, tf, dl FROM {TERMS_VIEW} WHERE term IN ({_in_list(names)})),
        df AS (SELECT term, count(*) AS df FROM hits GROUP BY term),
        scored AS (SELECT t.text_unit_id, t.term,
                          ln(1 + ({n} - df.df + 0.5) / (df.df + 0.5)) * q.qtf
                          * t.tf * ({K1} + 1) / (t.tf + {K1} * (1 - {B} + {B} * t.dl / {avgdl})) AS score
                   FROM hits t JOIN df USING (term) JOIN q USING (term)
                   WHERE true{where_ids})
    """
    return sql, params


def bm25(con, stats: dict, terms: dict[str, int], limit: int = 200,
         unit_ids: list[str] | None = None) -> list[tuple[str, float]]:
    """(text_unit_id, BM25 score) of units holding any of `terms` (term → query count), best first.

    With `unit_ids`, scores exactly those units (for fusing with the dense channel).
    """
    if not terms or (unit_ids is not None and not unit_ids):
        return []
    postings = _postings(stats)
    if postings is not None:
        return postings.bm25(terms, limit, unit_ids)
    sql, params = _scored_hits(stats, terms, unit_ids)
    sql += f"""
        SELECT text_unit_id, sum(score) AS score FROM scored
        GROUP BY text_unit_id
        ORDER BY score DESC, text_unit_id
        LIMIT {int(limit)}
    """
    return [(r[0], float(r[1])) for r in con.execute(sql, params).fetchall()]


def term_contributions(con, stats: dict, terms: dict[str, int], unit_ids: list[str]) -> dict[str, dict[str, float]]:
    """{text_unit_id: {term: its share of the unit's BM25 score}} for `unit_ids`: why each unit
    scored what it did (the shares of a unit sum to its `bm25` score)."""
    if not terms or not unit_ids:
        return {}
    postings = _postings(stats)
    if postings is not None:
        return postings.contributions(terms, unit_ids)
    sql, params = _scored_hits(stats, terms, unit_ids)
    out: dict[str, dict[str, float]] = {}
    for uid, term, score in con.execute(sql + " SELECT text_unit_id, term, score FROM scored", params).fetchall():
        out.setdefault(uid, {})[term] = float(score)
    return out


def idf_of(con, stats: dict, terms) -> dict[str, float]:
    """BM25 idf of each term (0 for terms absent from the index): sentence scoring reuses it."""
    terms = sorted(set(terms))
    if not terms:
        return {}
    n = max(int(stats.get("n_units") or 1), 1)
    postings = _postings(stats)
    if postings is not None:
        found = {t: d for t in terms if (d := postings.df(t))}
    else:
        rows = con.execute(f"SELECT term, count(*) FROM {TERMS_VIEW} WHERE term IN ({_in_list(terms)}) GROUP BY term").fetchall()
        found = {t: int(c) for t, c in rows}
    return {t: (math.log(1 + (n - found[t] + 0.5) / (found[t] + 0.5)) if t in found else 0.0) for t in terms}
