"""`provrag index`: documents in, a GraphRAG-compatible index with pages out.

Read top to bottom, this file is the pipeline: load → chunk → embed → skeleton → extract →
communities → reports → write. Each stage is a small function over the run's typed state
(provrag/index/state.py: which stage makes which table) that calls into provrag/index/.
Everything is written into a temporary folder and swapped into place at the end
(provrag/store/writer.py), so a failed or interrupted run leaves the previous index untouched.
"""
from __future__ import annotations

import time
from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.index.state import IndexRun
from provrag.index.summary import IndexSummary, manifest
from provrag.store import writer as store
from provrag.store.cache import Cache


class IndexBuildError(UsageError):
    """The run cannot start or cannot finish (bad output folder, broken config)."""


# ---- the stages, in order ---------------------------------------------------------------

def load(run: IndexRun) -> None:
    """Every file under DOCS → the documents table (failed and skipped files included)."""
    from provrag.index.load import documents_frame, load_folder

    cache = Cache(run.tmp / "cache", run.out / "cache", namespace="parse")
    run.documents = documents_frame(load_folder(run.docs, run.cfg, cache=cache, progress=run.progress))


def chunk(run: IndexRun) -> None:
    """Documents → text units on sentence boundaries and pages; documents learn their units."""
    from provrag.index.chunk import chunk_stage, link_units

    run.text_units = chunk_stage(run.documents, run.cfg, run.progress)
    run.documents = link_units(run.documents, run.text_units)


def embed(run: IndexRun) -> None:
    """One vector per text unit, and the fitted embedder that will embed questions alike."""
    from provrag.index.embed import embed_stage

    def prepare(embedder) -> None:
        # an embedder that calls a server counts its requests with the engine's (one usage
        # line in the manifest) and caches its replies beside the model's (re-runs are free)
        if hasattr(embedder, "share_usage"):
            embedder.share_usage(run.engine.usage)
        if hasattr(embedder, "attach_cache"):
            embedder.attach_cache(Cache(run.tmp / "cache", run.out / "cache", namespace="embed"))

    run.embedder, run.vectors = embed_stage(run.text_units, run.cfg, run.progress, prepare=prepare)


def skeleton(run: IndexRun) -> None:
    """KET-RAG: the β of units worth graph extraction, and the keyword graph of every unit."""
    from provrag.index.skeleton import skeleton_stage

    run.text_units, run.keywords = skeleton_stage(run.text_units, run.vectors, run.cfg, run.progress)


def extract(run: IndexRun) -> None:
    """The engine's entities and relationships of the skeleton units, merged GraphRAG's way."""
    from provrag.index.extract import extract_stage

    run.entities, run.relationships, run.text_units = extract_stage(run.text_units, run.engine, run.cfg, run.progress)


def communities(run: IndexRun) -> None:
    """Hierarchical Leiden over the entity graph."""
    from provrag.index.communities import communities_stage

    run.communities = communities_stage(run.entities, run.relationships, run.cfg)


def reports(run: IndexRun) -> None:
    """One community report per community, written by the engine."""
    from provrag.index.reports import reports_stage

    run.community_reports = reports_stage(run.communities, run.entities, run.relationships, run.text_units,
                                          run.engine, run.cfg, run.progress)


def write(run: IndexRun) -> None:
    """The tables, embeddings, embedder and BM25 terms into the run's temporary folder."""
    from provrag.index.write import write_index

    write_index(run)


STAGES = [load, chunk, embed, skeleton, extract, communities, reports, write]


# ---- the run ---------------------------------------------------------------------------

def run_index(docs: Path, out: Path, cfg: Config, progress=None) -> IndexSummary:
    """Build the index of `docs` into `out`; returns the summary the CLI prints."""
    from provrag.engines import get_engine

    docs, out = Path(docs).absolute(), Path(out).absolute()
    if not docs.is_dir():
        raise IndexBuildError(f"no such folder: {docs}")
    try:
        tmp = store.begin(out)
    except store.WriteError as e:
        raise IndexBuildError(str(e)) from None
    try:
        engine = get_engine(cfg)  # a ConfigError (unknown engine, missing key) before any work
    except BaseException:
        store.abort(tmp)
        raise
    engine.attach_cache(Cache(tmp / "cache", out / "cache", namespace="llm"))
    run = IndexRun(docs=docs, out=out, tmp=tmp, cfg=cfg, engine=engine, progress=progress)
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    try:
        for stage in STAGES:
            t0 = time.perf_counter()
            stage(run)
            timings[stage.__name__] = round(time.perf_counter() - t0, 3)
        timings["total"] = round(time.perf_counter() - t_all, 3)
        summary = IndexSummary.of(run, timings)
        store.write_manifest(tmp, manifest(run, summary))
        store.commit(tmp, out)
    except BaseException:
        store.abort(tmp)
        raise
    return summary
