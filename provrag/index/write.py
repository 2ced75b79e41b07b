"""Stage 8 — write: the run's tables as the contract's parquet files, the embedder, the BM25 terms.

The one place a frame becomes Arrow (tables.to_arrow: the contract's columns and types, the
run's own columns left out). Everything goes into the run's temporary folder; the pipeline
swaps it into place afterwards (store/writer.py), so readers never see half an index.
"""
from __future__ import annotations

from provrag.embeddings.base import EMBEDDER_DIR
from provrag.index.ids import REGISTRY
from provrag.index.state import IndexRun
from provrag.index.tables import to_arrow
from provrag.store import schema
from provrag.store import writer as store

_ROWS = 4096  # rows of a table made Arrow and written at once (one row group each)
# text_units: DuckDB decodes a whole row group to return one unit of it (the ranked units of a question,
# found by row position): 512 units (~0.5 MB of text) a group keep that read the same at 10k or 1M units
_UNIT_ROWS = 512


def write_frame(folder, name: str, df) -> int:
    """One table's frame as `folder/name.parquet`, a slice of rows at a time (to_arrow copies:
    polars' types → the contract's); returns its rows."""
    rows = _UNIT_ROWS if name == schema.TEXT_UNITS else _ROWS
    store.write_parts(folder, name, schema.SCHEMAS[name],
                      (to_arrow(name, df.slice(start, rows)) for start in range(0, max(df.height, 1), rows)))
    return df.height


def write_index(run: IndexRun) -> None:
    """Every table the stages left in `run`, the embeddings, the fitted embedder and the term
    table into `run.tmp`."""
    import numpy as np
    import pyarrow as pa

    from provrag.index.passages import write_passage_vectors
    from provrag.store.neighbours import write_unit_neighbours
    from provrag.store.terms import write_terms
    from provrag.store.vectors import write_vectors

    tables = {schema.DOCUMENTS: run.documents, schema.TEXT_UNITS: run.text_units, schema.ENTITIES: run.entities,
              schema.RELATIONSHIPS: run.relationships, schema.COMMUNITIES: run.communities,
              schema.COMMUNITY_REPORTS: run.community_reports}  # keywords: written by the skeleton stage
    if run.sections is not None:
        tables[schema.SECTIONS] = run.sections
    for name, df in tables.items():
        write_frame(run.tmp, name, df)
    vec_type = pa.list_(pa.float32())
    ids = run.text_units[schema.ID].to_list()
    vectors = pa.array([], vec_type)
    if ids:  # the matrix as one flat buffer and its row offsets: no Python object per number or row
        dim = run.vectors.shape[1]
        offsets = pa.array(np.arange(0, (len(ids) + 1) * dim, dim, dtype=np.int32))
        vectors = pa.ListArray.from_arrays(offsets, pa.array(np.ascontiguousarray(run.vectors, np.float32).reshape(-1)))
    store.write_table(run.tmp, schema.EMBEDDINGS, pa.table({schema.ID: pa.array(ids, pa.string()), "vector": vectors},
                                                           schema=schema.SCHEMAS[schema.EMBEDDINGS]))
    run.embedder.save(run.tmp / EMBEDDER_DIR)
    write_vectors(run.tmp, ids, run.vectors)  # dense retrieval's memory-mapped IVF (store/vectors.py), rebuilt every run
    write_unit_neighbours(run.tmp, run.text_units)  # each unit's previous and next, by row (store/neighbours.py)
    # the BM25 term table of ask/verify retrieval (an update tokenizes only new units)
    write_terms(run.tmp, run.text_units, previous=run.previous.path if run.previous and not run.full else None)
    store.write_table(run.tmp, REGISTRY, run.ids.to_arrow())  # every number ever given out (index/ids.py)
    # the paragraphs' MiniLM vectors an offline ask reads instead of embedding them (index/passages.py)
    write_passage_vectors(run)
