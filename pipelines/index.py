"""`provrag index`: documents in, a GraphRAG-compatible index with pages out.

The pipeline is the list STAGES, read top to bottom: each stage takes the run's state
(tables so far) and adds its own. Everything is written into a temporary folder and
swapped into place at the end (provrag/store/writer.py), so a failed or interrupted run leaves
the previous index untouched.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import asdict
from pathlib import Path

from provrag.errors import UsageError
from provrag.config import Config
from provrag import __version__
from provrag.store import schema
from provrag.store import writer as store
from provrag.store.cache import Cache


class IndexBuildError(UsageError):
    """The run cannot start or cannot finish (bad output folder, broken config)."""


# ---- stages: state -> state ------------------------------------------------------------

def stage_load(st: dict) -> None:
    from provrag.index.load import load_folder

    cache = Cache(st["tmp"] / "cache", st["out"] / "cache", namespace="parse")
    docs = load_folder(st["docs"], st["cfg"], cache=cache, progress=st["progress"])
    rows = []
    for i, d in enumerate(docs):
        r = asdict(d)
        r["id"] = schema.content_id("document", r["path"], r["sha256"] or "")
        r["human_readable_id"] = i
        r["text"] = r["text"] or ""
        r["page_labels"] = r["page_labels"] or None  # null where the format or file prints none
        r["metadata"] = {str(k): str(v) for k, v in (r.get("metadata") or {}).items()}
        rows.append(r)
    st["documents"] = rows


def stage_chunk(st: dict) -> None:
    from provrag.index.chunk import chunk_stage

    st["units"] = chunk_stage(st["documents"], st["cfg"], st["progress"])


def stage_embed(st: dict) -> None:
    from provrag.index.embed import embed_stage

    def prepare(emb) -> None:
        # an embedder that calls a server counts its requests with the engine's (one usage
        # line in the manifest) and caches its replies beside the model's (re-runs are free)
        if hasattr(emb, "share_usage"):
            emb.share_usage(st["engine"].usage)
        if hasattr(emb, "attach_cache"):
            emb.attach_cache(Cache(st["tmp"] / "cache", st["out"] / "cache", namespace="embed"))

    st["embedder"], st["vectors"] = embed_stage(st["units"], st["cfg"], st["progress"], prepare=prepare)


def stage_skeleton(st: dict) -> None:
    from provrag.index.skeleton import skeleton_stage

    st["units"], st["keywords"] = skeleton_stage(st["units"], st["vectors"], st["cfg"], st["progress"])


def stage_extract(st: dict) -> None:
    import polars as pl

    from provrag.index.extract import extract_stage

    units = pl.from_arrow(schema.to_arrow(schema.TEXT_UNITS, st["units"]))
    ents, rels, units = extract_stage(units, st["engine"], st["cfg"], st["progress"])
    st["entities"], st["relationships"], st["text_units"] = ents, rels, units


def stage_communities(st: dict) -> None:
    from provrag.index.communities import communities_stage

    st["communities"] = communities_stage(st["entities"], st["relationships"], st["cfg"])


def stage_reports(st: dict) -> None:
    from provrag.index.reports import reports_stage

    st["community_reports"] = reports_stage(st["communities"], st["entities"], st["relationships"],
                                            st["text_units"], st["engine"], st["cfg"], st["progress"])


def stage_write(st: dict) -> None:
    import pyarrow as pa

    tmp = st["tmp"]
    by_doc: dict[str, list[str]] = {}
    for u in st["units"]:
        by_doc.setdefault(u["document_id"], []).append(u["id"])
    for d in st["documents"]:
        d["text_unit_ids"] = by_doc.get(d["id"], [])
    store.write_table(tmp, schema.DOCUMENTS, schema.to_arrow(schema.DOCUMENTS, st["documents"]))
    for name in (schema.TEXT_UNITS, schema.ENTITIES, schema.RELATIONSHIPS, schema.COMMUNITIES, schema.COMMUNITY_REPORTS):
        store.write_table(tmp, name, _as_arrow(name, st[name]))
    store.write_table(tmp, schema.KEYWORDS, schema.to_arrow(schema.KEYWORDS, st["keywords"]))
    vec_type = pa.list_(pa.float32())
    emb = pa.table({"id": pa.array([u["id"] for u in st["units"]], pa.string()),
                    "vector": pa.array(list(st["vectors"]), vec_type) if len(st["units"]) else pa.array([], vec_type)},
                   schema=schema.SCHEMAS[schema.EMBEDDINGS])
    store.write_table(tmp, schema.EMBEDDINGS, emb)
    st["embedder"].save(tmp / "embedder")
    try:  # the BM25 term table used by ask/verify retrieval
        from provrag.store.terms import write_terms
    except ImportError:
        write_terms = None
    if write_terms is not None:
        write_terms(tmp, st["units"])


def _as_arrow(name: str, table):
    """Polars frame or row list → an Arrow table with exactly the contract's schema."""
    target = schema.SCHEMAS[name]
    if isinstance(table, list):
        return schema.to_arrow(name, table)
    at = table.to_arrow()
    return schema.to_arrow(name, at.select([c for c in target.names if c in at.column_names]).to_pylist())


STAGES = [
    ("load", stage_load),
    ("chunk", stage_chunk),
    ("embed", stage_embed),
    ("skeleton", stage_skeleton),
    ("extract", stage_extract),
    ("communities", stage_communities),
    ("reports", stage_reports),
    ("write", stage_write),
]


# ---- the run ---------------------------------------------------------------------------

def run_index(docs: Path, out: Path, cfg: Config, progress=None) -> dict:
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
    st = {"docs": docs, "out": out, "tmp": tmp, "cfg": cfg, "progress": progress, "engine": engine}
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    try:
        for name, fn in STAGES:
            t0 = time.perf_counter()
            fn(st)
            timings[name] = round(time.perf_counter() - t0, 3)
        timings["total"] = round(time.perf_counter() - t_all, 3)
        summary = _summary(st, timings)
        store.write_manifest(tmp, _manifest(st, summary, timings))
        store.commit(tmp, out)
    except BaseException:
        store.abort(tmp)
        raise
    return summary


def _summary(st: dict, timings: dict) -> dict:
    docs = st["documents"]
    status = [d["status"] for d in docs]
    units = st["units"]
    return {
        "index": str(st["out"]),
        "documents": len(docs),
        "documents_ok": status.count(schema.STATUS_OK),
        "documents_failed": status.count(schema.STATUS_FAILED),
        "documents_skipped": status.count(schema.STATUS_SKIPPED),
        "problems": [{"path": d["path"], "status": d["status"], "error": d["error"]}
                     for d in docs if d["status"] != schema.STATUS_OK],
        "pages": sum(d["n_pages"] or 0 for d in docs if d["status"] == schema.STATUS_OK),
        "text_units": len(units),
        "skeleton_units": sum(1 for u in units if u["is_skeleton"]),
        "keywords": len(st["keywords"]),
        "entities": _rows(st["entities"]),
        "relationships": _rows(st["relationships"]),
        "communities": _rows(st["communities"]),
        "community_reports": _rows(st["community_reports"]),
        "engine": st["engine"].name,
        "llm": st["engine"].usage.to_dict(),
        "seconds": timings.get("total"),
        "timings": timings,
    }


def _rows(t) -> int:
    return len(t) if isinstance(t, list) else t.height


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"provrag": __version__}
    for pkg in ("docling-slim", "docling-parse", "pypdfium2", "duckdb", "polars", "pyarrow", "scikit-learn",
                "networkx", "graspologic-native", "openai", "tiktoken"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def _manifest(st: dict, summary: dict, timings: dict) -> dict:
    cfg, engine = st["cfg"], st["engine"]
    n_units, n_sk = summary["text_units"], summary["skeleton_units"]
    manifest = {
        "provrag_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "docs_root": str(st["docs"]),
        "documents": [{"path": d["path"], "sha256": d["sha256"], "status": d["status"]} for d in st["documents"]],
        "config": cfg.to_dict(),
        "versions": _versions(),
        "counts": {k: summary[k] for k in ("documents", "documents_ok", "documents_failed", "documents_skipped", "pages",
                                           "text_units", "skeleton_units", "keywords", "entities", "relationships",
                                           "communities", "community_reports")},
        "skeleton": {"beta": cfg.skeleton.beta, "units": n_sk, "of": n_units,
                     "fraction": round(n_sk / n_units, 4) if n_units else 0.0},
        "engine": {"llm": engine.name, "model": engine.model, "embedder": st["embedder"].name,
                   "embedding_dim": st["embedder"].dim},
        "llm": engine.usage.to_dict(),
        "timings": timings,
    }
    try:
        from provrag.engines.openai.client import full_extraction_estimate
    except ImportError:
        full_extraction_estimate = None
    if full_extraction_estimate is not None and engine.name != "offline":
        manifest["extraction_cost"] = full_extraction_estimate(st["text_units"], cfg, usage=engine.usage)
    return manifest
