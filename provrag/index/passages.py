"""Index step (in `write`): MiniLM's pooled vector of every paragraph the offline answerer may read.

At a question the answerer scores each candidate sentence's paragraph by its MiniLM cosine to the
question (answer/selection.minilm_meaning); embedding those paragraphs was ~40 % of a warm ask's
model time (bench/results/question_cost-2026-11-27.md). The paragraphs are those of the retrieved
units, each read with its neighbours as ask reads it (query/retrieve: continuations, antecedents;
answer/scoring._paragraphs): all of them are known now, so they are embedded here, once, and
stored beside the index (store/passages.py). An update embeds only paragraphs the previous index
did not hold (by the digest of their text); `--full` embeds every one again.

Only for the configuration that reads them (the offline engine's MiniLM rerank or meaning weight,
[embeddings] passage_vectors = true) and when the MiniLM package is installed: otherwise nothing is
written and ask embeds paragraphs as before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from provrag.config import Config
from provrag.index.progress import stage
from provrag.store import schema

if TYPE_CHECKING:
    import polars as pl


def wanted(cfg: Config) -> bool:
    """Whether an ask under `cfg` reads paragraph vectors (and the model to make them is here)."""
    s = cfg.search
    if not cfg.embeddings.passage_vectors or cfg.llm.engine != "offline":
        return False
    if s.rerank.lower() != "minilm" and not float(s.reader_weights.get("meaning", 0.0) or 0.0):
        return False
    if not (s.rerank_paragraph_weight or 0.0):
        return False
    try:
        from provrag.embeddings.minilm import model_dir

        model_dir()
    except Exception:   # the package is missing: asks fall back to the lexical order anyway
        return False
    return True


def unit_records(text_units: pl.DataFrame):
    """Each unit as ask's search builds its record (text, previous, continuation: the same
    neighbours and cuts as query/retrieve.antecedents and continuations)."""
    import polars as pl

    from provrag.store.neighbours import next_head, previous_tail

    cols = [schema.ID, schema.HRID, schema.TEXT, schema.DOCUMENT_ID, schema.CHAR_START, schema.CHAR_END]
    df = text_units.select(cols).filter(pl.col(schema.CHAR_START).is_not_null())
    df = df.sort([schema.DOCUMENT_ID, schema.CHAR_START, schema.HRID])
    by_doc = pl.col(schema.DOCUMENT_ID)
    df = df.with_columns(pl.col(schema.TEXT).shift(1).over(by_doc).alias("p_text"),
                         pl.col(schema.CHAR_START).shift(1).over(by_doc).alias("p_start"),
                         pl.col(schema.TEXT).shift(-1).over(by_doc).alias("n_text"),
                         pl.col(schema.CHAR_START).shift(-1).over(by_doc).alias("n_start"))
    for row in df.iter_rows(named=True):
        rec = {"text": row[schema.TEXT]}
        if row["n_start"] is not None:
            nxt = next_head(row[schema.CHAR_END], row["n_start"], row["n_text"])
            if nxt is not None:
                rec["continuation"] = nxt
        if row["p_start"] is not None:
            prv = previous_tail(row[schema.CHAR_START], row["p_start"], row["p_text"])
            if prv is not None:
                rec["previous"] = prv
        yield rec
    # a unit without offsets is read without neighbours
    for text in text_units.filter(pl.col(schema.CHAR_START).is_null())[schema.TEXT].to_list():
        yield {"text": text}


def paragraph_texts(text_units: pl.DataFrame) -> list[str]:
    """The distinct paragraph texts of every unit, as the answerer cuts them."""
    from provrag.engines.offline.answer.scoring import paragraph_texts as of_record

    seen: dict[str, None] = {}
    for rec in unit_records(text_units):
        for text in of_record(rec):
            seen.setdefault(text, None)
    return list(seen)


def write_passage_vectors(run) -> int:
    """Embed (or take from the previous index) every paragraph's vector and write them; returns
    how many were embedded here (0 when the configuration does not read them)."""
    from provrag.embeddings.minilm import MiniLMEmbedder
    from provrag.store.passages import digest, stored_passages, write_passages

    if not wanted(run.cfg) or run.text_units is None:
        return 0
    texts = paragraph_texts(run.text_units)
    embedder = MiniLMEmbedder()
    stored = stored_passages(run.previous.path) if run.previous is not None and not run.full else None
    # the previous index's vectors of paragraphs still here (none when other weights made them)
    known = stored.find(texts, embedder.weights_sha256) if stored is not None else {}
    vectors = np.zeros((len(texts), embedder.dim), np.float32)
    todo = []
    for i, t in enumerate(texts):
        v = known.get(t)
        if v is not None:
            vectors[i] = v
        else:
            todo.append(i)
    step = 256
    with stage(run.progress, "passages", len(todo)) as task:
        for s in range(0, len(todo), step):
            rows = todo[s:s + step]
            vectors[rows] = embedder.embed([texts[i] for i in rows])
            task.advance(len(rows))
    write_passages(run.tmp, [digest(t) for t in texts], vectors, embedder.weights_sha256)
    return len(todo)
