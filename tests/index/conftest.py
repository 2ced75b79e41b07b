"""Fixtures of the index stage tests: the Operation Dulce novella through the real stages.

Built once per session and shared by the extract, communities and reports tests (frames are
immutable, so no test can spoil them for the next).
"""
from __future__ import annotations

import polars as pl
import pytest

from provrag.config import load_config
from provrag.engines.offline import OfflineEngine
from provrag.index.chunk import chunk_stage
from provrag.index.communities import communities_stage
from provrag.index.embed import embed_stage
from provrag.index.extract import extract_stage
from provrag.index.reports import reports_stage
from provrag.index.skeleton import skeleton_stage
from provrag.index.tables import PAGES, frame
from provrag.store import schema


@pytest.fixture(scope="session")
def dulce_units(dulce) -> pl.DataFrame:
    """The novella's text units through the real chunk → embed → skeleton stages (a page-less document)."""
    cfg = load_config()
    text = (dulce / "source" / "Operation Dulce v2 1 1.md").read_text(encoding="utf-8")
    docs = frame(schema.DOCUMENTS, [{"id": schema.content_id("document", "dulce"), "status": "ok", "text": text}])
    docs = docs.with_columns(pl.lit(None, dtype=pl.List(pl.List(pl.Int64))).alias(PAGES))
    units = chunk_stage(docs, cfg)
    _, vecs = embed_stage(units, cfg)
    units, _ = skeleton_stage(units, vecs, cfg)
    return units


@pytest.fixture(scope="session")
def dulce_graph(dulce_units):
    """(entities, relationships, text_units) of the novella's skeleton, offline engine."""
    cfg = load_config()
    return extract_stage(dulce_units, OfflineEngine(cfg), cfg)


@pytest.fixture(scope="session")
def dulce_communities(dulce_graph) -> pl.DataFrame:
    ents, rels, _ = dulce_graph
    return communities_stage(ents, rels, load_config())


@pytest.fixture(scope="session")
def dulce_reports(dulce_graph, dulce_communities) -> pl.DataFrame:
    ents, rels, units = dulce_graph
    cfg = load_config()
    return reports_stage(dulce_communities, ents, rels, units, OfflineEngine(cfg), cfg)
