"""What a finished index run reports: the summary the CLI prints and the index's manifest.json.

Both are read off the run's tables (state.py) once every stage has run, so the counts a user
sees, the counts in the manifest and the tables on disk cannot disagree.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field

from provrag import __version__
from provrag.index.state import IndexRun
from provrag.index import ocr
from provrag.index.tables import OCR_PAGES, OCR_WAITING, PAGES
from provrag.index.versions import history, history_entry, software_versions
from provrag.store import schema
from provrag.store.paths import escape_path

# the summary's counts that manifest.json keeps under "counts"
MANIFEST_COUNTS = ("documents", "documents_ok", "documents_failed", "documents_skipped", "pages", "pages_ocr",
                   "pages_without_text", "text_units", "skeleton_units", "keywords", "entities", "relationships", "communities", "community_reports")


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
    pages_ocr: int              # of which the text is OCR output (provrag/index/ocr.py)
    pages_without_text: int     # of which still hold no text (blank, or no OCR engine installed)
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
    # the index over time (index/versions.py, index/ids.py)
    index_version: str | None = None   # content version of the index now in place
    run: int | None = None             # this run's number in the index's history
    mode: str = "first"                # first | update | full | up to date
    changes: dict | None = None        # documents added / changed / removed since the previous run
    ids: dict | None = None            # per table: ids added, changed, retired, live
    # scanned pages OCR could not read (no Tesseract, or [load] ocr off): their files, and what to do
    waiting_for_ocr: list[str] = field(default_factory=list)   # paths: failed, or indexed without those pages
    ocr_hint: str | None = None        # how to have them read (None when nothing waits)

    @classmethod
    def of(cls, run: IndexRun, timings: dict[str, float]) -> IndexSummary:
        docs = run.documents
        status = docs["status"].to_list()
        ok = docs.filter(docs["status"] == schema.STATUS_OK)
        return cls(
            index=escape_path(run.out),  # any byte sequence, printable (store/paths.py)
            documents=docs.height,
            documents_ok=status.count(schema.STATUS_OK),
            documents_failed=status.count(schema.STATUS_FAILED),
            documents_skipped=status.count(schema.STATUS_SKIPPED),
            problems=[{"path": p, "status": s, "error": e}
                      for p, s, e in docs.select("path", "status", "error").iter_rows() if s != schema.STATUS_OK],
            pages=sum(n or 0 for n in ok["n_pages"].to_list()),
            pages_ocr=sum(len(p) for p in ok[OCR_PAGES].to_list() if p),
            pages_without_text=sum(1 for pages in ok[PAGES].to_list() for _, start, end in pages or () if start == end),
            text_units=run.text_units.height,
            skeleton_units=sum(1 for s in run.text_units["is_skeleton"].to_list() if s),
            keywords=run.written[schema.KEYWORDS],
            entities=run.entities.height,
            relationships=run.relationships.height,
            communities=run.communities.height,
            community_reports=run.community_reports.height,
            engine=run.engine.name,
            llm=run.engine.usage.to_dict(),
            seconds=timings.get("total"),
            timings=timings,
            index_version=run.ids.version() if run.ids is not None else None,
            run=run.ids.run if run.ids is not None else None,
            mode="full" if run.full and run.previous else ("update" if run.previous else "first"),
            changes=run.changes.to_json() if run.changes is not None else None,
            ids=run.id_counts,
            **waiting_for_ocr(docs, run.cfg.load.ocr),
        )

    @classmethod
    def up_to_date(cls, previous, changes, seconds: float) -> IndexSummary:
        """The summary of a run that found nothing to do: the previous index's own counts."""
        m = previous.manifest
        counts = m.get("counts") or {}
        problems = [{"path": d.get("path"), "status": d.get("status"), "error": d.get("error")}
                    for d in m.get("documents") or [] if isinstance(d, dict) and d.get("status") != schema.STATUS_OK]
        return cls(index=escape_path(previous.path), problems=problems,
                   **{k: int(counts.get(k) or 0) for k in MANIFEST_COUNTS},
                   engine=(m.get("engine") or {}).get("llm") or "", llm={"calls": 0, "cached": 0, "failed": 0},
                   seconds=seconds, timings={"total": seconds}, index_version=m.get("index_version"),
                   run=m.get("run"), mode="up to date", changes=changes.to_json(), ids=None,
                   waiting_for_ocr=list(m.get("waiting_for_ocr") or []), ocr_hint=m.get("ocr_hint"))

    def to_json(self) -> dict:
        return asdict(self)


def waiting_for_ocr(documents, ocr_on: bool) -> dict:
    """The documents whose scanned pages OCR could not read, and what to do about it."""
    paths = [p for p, pages in documents.select("path", OCR_WAITING).iter_rows() if pages] \
        if OCR_WAITING in documents.columns else []
    return {"waiting_for_ocr": paths, "ocr_hint": ocr.how_to_read(ocr_on) if paths else None}


def manifest(run: IndexRun, summary: IndexSummary) -> dict:
    """manifest.json: what was indexed, with which settings, versions and engines, and the counts."""
    cfg, engine = run.cfg, run.engine
    n_units, n_sk = summary.text_units, summary.skeleton_units
    out = {
        "provrag_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "docs_root": escape_path(run.docs),
        "documents": [{"path": p, "sha256": h, "status": s} | ({"error": e} if e else {})
                      for p, h, s, e in run.documents.select("path", "sha256", "status", "error").iter_rows()],
        "config": cfg.to_dict(),
        "versions": software_versions(),
        "counts": {k: getattr(summary, k) for k in MANIFEST_COUNTS},
        "waiting_for_ocr": summary.waiting_for_ocr, "ocr_hint": summary.ocr_hint,  # an up-to-date run says them again
        "skeleton": {"beta": cfg.skeleton.beta, "units": n_sk, "of": n_units,
                     "fraction": round(n_sk / n_units, 4) if n_units else 0.0},
        "engine": {"llm": engine.name, "model": engine.model, "embedder": run.embedder.name,
                   "embedding_dim": run.embedder.dim},
        "llm": engine.usage.to_dict(),
        "timings": summary.timings,
        "index_version": summary.index_version,
        "run": summary.run,
        "history": history(run.previous, history_entry(summary.run or 1, summary.index_version or "", summary.mode,
                                                        run.changes, summary.ids or {})),
    }
    if engine.name != "offline":
        from provrag.engines.openai.cost import full_extraction_estimate

        out["extraction_cost"] = full_extraction_estimate(run.text_units, cfg, usage=engine.usage)
    return out
