"""What a finished index run reports: the summary the CLI prints and the index's manifest.json.

Both are read off the run's tables (state.py) once every stage has run, so the counts a user
sees, the counts in the manifest and the tables on disk cannot disagree.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass

from provrag import __version__
from provrag.index.state import IndexRun
from provrag.store import schema

# the summary's counts that manifest.json keeps under "counts"
MANIFEST_COUNTS = ("documents", "documents_ok", "documents_failed", "documents_skipped", "pages", "text_units",
                   "skeleton_units", "keywords", "entities", "relationships", "communities", "community_reports")
# packages whose versions are recorded in the manifest (those installed)
RECORDED_PACKAGES = ("docling-slim", "docling-parse", "pypdfium2", "duckdb", "polars", "pyarrow", "scikit-learn",
                     "networkx", "graspologic-native", "openai", "tiktoken")


@dataclass
class IndexSummary:
    """`provrag index`'s result: `to_json()` is what `index --json` prints."""

    index: str
    documents: int
    documents_ok: int
    documents_failed: int
    documents_skipped: int
    problems: list[dict]        # {"path", "status", "error"} of every file not indexed, in path order
    pages: int                  # physical pages of the documents indexed
    text_units: int
    skeleton_units: int
    keywords: int
    entities: int
    relationships: int
    communities: int
    community_reports: int
    engine: str
    llm: dict                   # engines.base.Usage.to_dict()
    seconds: float | None
    timings: dict[str, float]   # seconds per stage, and "total"

    @classmethod
    def of(cls, run: IndexRun, timings: dict[str, float]) -> IndexSummary:
        docs = run.documents
        status = docs["status"].to_list()
        ok = docs.filter(docs["status"] == schema.STATUS_OK)
        return cls(
            index=str(run.out),
            documents=docs.height,
            documents_ok=status.count(schema.STATUS_OK),
            documents_failed=status.count(schema.STATUS_FAILED),
            documents_skipped=status.count(schema.STATUS_SKIPPED),
            problems=[{"path": p, "status": s, "error": e}
                      for p, s, e in docs.select("path", "status", "error").iter_rows() if s != schema.STATUS_OK],
            pages=sum(n or 0 for n in ok["n_pages"].to_list()),
            text_units=run.text_units.height,
            skeleton_units=sum(1 for s in run.text_units["is_skeleton"].to_list() if s),
            keywords=run.keywords.height,
            entities=run.entities.height,
            relationships=run.relationships.height,
            communities=run.communities.height,
            community_reports=run.community_reports.height,
            engine=run.engine.name,
            llm=run.engine.usage.to_dict(),
            seconds=timings.get("total"),
            timings=timings,
        )

    def to_json(self) -> dict:
        return asdict(self)


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"provrag": __version__}
    for pkg in RECORDED_PACKAGES:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def manifest(run: IndexRun, summary: IndexSummary) -> dict:
    """manifest.json: what was indexed, with which settings, versions and engines, and the counts."""
    cfg, engine = run.cfg, run.engine
    n_units, n_sk = summary.text_units, summary.skeleton_units
    out = {
        "provrag_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "docs_root": str(run.docs),
        "documents": [{"path": p, "sha256": h, "status": s}
                      for p, h, s in run.documents.select("path", "sha256", "status").iter_rows()],
        "config": cfg.to_dict(),
        "versions": _versions(),
        "counts": {k: getattr(summary, k) for k in MANIFEST_COUNTS},
        "skeleton": {"beta": cfg.skeleton.beta, "units": n_sk, "of": n_units,
                     "fraction": round(n_sk / n_units, 4) if n_units else 0.0},
        "engine": {"llm": engine.name, "model": engine.model, "embedder": run.embedder.name,
                   "embedding_dim": run.embedder.dim},
        "llm": engine.usage.to_dict(),
        "timings": summary.timings,
    }
    if engine.name != "offline":
        from provrag.engines.openai.cost import full_extraction_estimate

        out["extraction_cost"] = full_extraction_estimate(run.text_units, cfg, usage=engine.usage)
    return out
