"""`provrag index`: documents in, a GraphRAG-compatible index with pages out.

Read top to bottom, this file is the pipeline: load → chunk → embed → skeleton → extract →
communities → reports → write. Each stage is a small function over the run's typed state
(provrag/index/state.py: which stage makes which table) that calls into provrag/index/.
Everything is written into a temporary folder and swapped into place at the end
(provrag/store/writer.py), so a failed or interrupted run leaves the previous index untouched.

Over an existing index the run is an update (provrag/index/versions.py): after `load` it
knows which files were added, changed or removed; when none was and no index setting changed,
it stops ("up to date"). Otherwise every stage runs, but each reuses what the previous index
already holds for unchanged content (parse results, vectors, model replies, reports: caches
keyed by content), so the result is what a full rebuild gives and costs what changed. Every
table's numbers come from the index's id registry (provrag/index/ids.py): a unit, entity,
relationship or community keeps its `human_readable_id` while its content stays, and an old
citation never points at other text. `--full` ignores every cache (the registry stays).
"""
from __future__ import annotations

import time
from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.executors import make_executor
from provrag.index.progress import step
from provrag.index.state import IndexRun
from provrag.index.summary import IndexSummary, manifest
from provrag.store import schema
from provrag.store import writer as store
from provrag.store.paths import escape_path, printable


class IndexBuildError(UsageError):
    """The run cannot start or cannot finish (bad output folder, broken config)."""


# ---- the stages, in order ---------------------------------------------------------------

def load(run: IndexRun) -> None:
    """Every file under DOCS → the documents table (failed and skipped files included), and
    what changed since the previous index."""
    from provrag.index.load import documents_frame, load_folder
    from provrag.index.versions import document_changes

    run.documents = documents_frame(load_folder(run.docs, run.cfg, cache=run.cache("parse"), progress=run.progress,
                                                  executor=run.executor))
    run.changes = document_changes(run.previous, run.documents)


def chunk(run: IndexRun) -> None:
    """Documents → text units on sentence boundaries and pages; documents learn their units;
    both get their stable numbers."""
    from provrag.index.chunk import chunk_stage, link_units

    text_units = chunk_stage(run.documents, run.cfg, run.progress, cache=run.cache("chunk"), executor=run.executor)
    run.documents = run.ids.number_frame(schema.DOCUMENTS, link_units(run.documents, text_units))
    run.text_units = run.ids.number_frame(schema.TEXT_UNITS, text_units)


def embed(run: IndexRun) -> None:
    """One vector per text unit, and the fitted embedder that will embed questions alike."""
    from provrag.index.embed import embed_stage, previous_vectors

    def prepare(embedder) -> None:
        # an embedder that calls a server counts its requests with the engine's (one usage
        # line in the manifest) and caches its replies beside the model's (re-runs are free)
        if hasattr(embedder, "share_usage"):
            embedder.share_usage(run.engine.usage)
        if hasattr(embedder, "attach_cache"):
            embedder.attach_cache(run.cache("embed"))

    def reuse():  # the previous index's vectors, asked for only by an embedder that embeds text by text
        return previous_vectors(run.previous, run.cfg) if not run.full else None

    run.embedder, run.vectors = embed_stage(run.text_units, run.cfg, run.progress, prepare=prepare, reuse=reuse,
                                          executor=run.executor)


def skeleton(run: IndexRun) -> None:
    """KET-RAG: the β of units worth graph extraction, and the keyword graph of every unit."""
    from provrag.index.skeleton import skeleton_stage

    from provrag.index.write import write_frame

    run.text_units, keywords = skeleton_stage(run.text_units, run.vectors, run.cfg, run.progress)
    release_freed_memory()  # the ranking's garbage, before Arrow takes more for the write
    # no later stage reads the keywords table: written now rather than held through four stages
    # (one 64-character unit id per word and unit: 226 MB on a 50 MB text file)
    run.written[schema.KEYWORDS] = write_frame(run.tmp, schema.KEYWORDS, keywords)


def extract(run: IndexRun) -> None:
    """The engine's entities and relationships of the skeleton units, merged GraphRAG's way."""
    from provrag.index.extract import extract_stage

    # offline extraction is deterministic: its batches and summaries are cached whole. A model's replies are
    # cached per call by the engine itself, so a failed call is retried next run, not frozen.
    cache = run.cache("extract") if run.engine.name == "offline" else None
    entities, relationships, run.text_units = extract_stage(run.text_units, run.engine, run.cfg, run.progress,
                                                             cache=cache, executor=run.executor)
    run.entities = run.ids.number_frame(schema.ENTITIES, entities)
    run.relationships = run.ids.number_frame(schema.RELATIONSHIPS, relationships)


def communities(run: IndexRun) -> None:
    """Hierarchical Leiden over the entity graph, numbered by the registry."""
    from provrag.index.communities import communities_stage
    from provrag.index.ids import community_numbers

    run.communities = community_numbers(run.ids, communities_stage(run.entities, run.relationships, run.cfg))


def sections(run: IndexRun) -> None:
    """Each document's parts: its outline or headings, else where its topic shifts; key phrases
    and a central statement each (what global search lists as a document's themes)."""
    from provrag.index.sections import sections_stage

    run.sections = sections_stage(run.documents, run.text_units, run.vectors, run.cfg, run.progress)


def reports(run: IndexRun) -> None:
    """One community report per community, written by the engine (or reused: same input,
    same report)."""
    from provrag.index.ids import register_reports
    from provrag.index.reports import reports_stage

    run.community_reports = reports_stage(run.communities, run.entities, run.relationships, run.text_units,
                                          run.engine, run.cfg, run.progress, cache=run.cache("reports"),
                                          executor=run.executor, sections=run.sections,
                                          document_titles=dict(run.documents.select("id", "title").rows()))
    register_reports(run.ids, run.community_reports, run.communities)


def write(run: IndexRun) -> None:
    """The tables, embeddings, embedder, BM25 terms and id registry into the run's temporary
    folder (ids no run saw this time are retired first)."""
    from provrag.index.write import write_index

    run.id_counts = run.ids.retire_unseen()
    write_index(run)


STAGES = [load, chunk, embed, skeleton, extract, communities, sections, reports, write]


# ---- the run ---------------------------------------------------------------------------

def run_index(docs: Path, out: Path, cfg: Config, progress=None, wait=None, full: bool = False) -> IndexSummary:
    """Build or update the index of `docs` in `out`; returns the summary the CLI prints.

    One run at a time writes `out` (store/lock.py): when another holds it, `wait=None` raises
    IndexBusy at once, and a function `wait(line)` is told whom this run waits for, then waits.
    `full`: rebuild everything from the files, reusing no cache (ids stay stable all the same)."""
    from provrag.store.lock import IndexLock

    with IndexLock(out, wait=wait):
        docs, out = Path(docs).absolute(), Path(out).absolute()
        if not (docs.is_dir() or docs.is_file()):  # `index FILE` indexes that one file
            raise IndexBuildError(f"no such file or folder: {escape_path(docs)}")
        if printable(str(out)) != str(out):  # a raw byte in the name: pyarrow and DuckDB take paths as UTF-8 text
            raise IndexBuildError(f"the index folder's path must be UTF-8 text: {escape_path(out)}")
        try:
            tmp = store.begin(out)
        except store.WriteError as e:
            raise IndexBuildError(str(e)) from None
        try:
            with make_executor(cfg) as executor:  # Ray joined or started here, for this run only
                return _build(docs, out, tmp, cfg, progress, full, executor)
        except OSError as e:
            store.abort(tmp)
            if not out_of_space(e):
                raise
            before = "the previous index is unchanged" if (out / schema.MANIFEST).is_file() else "no index was written"
            raise IndexBuildError(f"cannot write the index to {escape_path(out)}: no space left on the device "
                                  f"({before}; free some space and run again)") from None
        except BaseException:
            store.abort(tmp)
            raise


def out_of_space(e: OSError) -> bool:
    """A write refused for lack of space or quota (pyarrow's writers raise OSError without an
    errno: their message says it)."""
    import errno

    return e.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(e) \
        or "Disk quota exceeded" in str(e)


def release_freed_memory() -> None:
    """Give the memory a finished stage freed back to the system. glibc's malloc and Arrow's
    pool keep freed blocks for reuse, so without this each stage would start from the last
    one's peak rather than from what the run holds (on a 50 MB text file: 100–300 MB a stage)."""
    import ctypes
    import gc
    import sys

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: its allocator keeps its own policy
        pass
    if "pyarrow" in sys.modules:  # imported by a stage already: never imported just for this
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def _build(docs: Path, out: Path, tmp: Path, cfg: Config, progress, full: bool, executor) -> IndexSummary:
    from provrag.engines import get_engine
    from provrag.index.ids import IdRegistry
    from provrag.index.versions import PreviousIndex, up_to_date

    engine = get_engine(cfg)  # a ConfigError (unknown engine, missing key) before any work
    previous = PreviousIndex.at(out)
    run = IndexRun(docs=docs, out=out, tmp=tmp, cfg=cfg, engine=engine, progress=progress, previous=previous,
                   full=full, executor=executor,
                   ids=IdRegistry.load(out if previous else None, (previous.run + 1) if previous else 1))
    engine.attach_cache(run.cache("llm"))
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    for stage in STAGES:
        t0 = time.perf_counter()
        with step(run.progress, stage.__name__):  # a log gets one line per stage
            stage(run)
            release_freed_memory()  # inside the step: its time is the stage's, as the log says
        timings[stage.__name__] = round(time.perf_counter() - t0, 3)
        if stage is load and not full and up_to_date(previous, run.changes, cfg, run.documents):
            store.abort(tmp)
            return IndexSummary.up_to_date(previous, run.changes, round(time.perf_counter() - t_all, 3))
    timings["total"] = round(time.perf_counter() - t_all, 3)
    summary = IndexSummary.of(run, timings)
    store.write_manifest(tmp, manifest(run, summary))
    store.commit(tmp, out)
    return summary
