"""The index over time: what the previous index in `--out` was, what changed in DOCS since,
and the history manifest.json keeps (CONTRACT.md §7).

`provrag index DOCS --out INDEX` over an existing provrag index is an update: this module reads
the previous run's manifest, compares the folder's files with it (by path and sha256), and
says whether anything that shapes the index changed at all. When nothing did — same files,
same bytes, same index settings, same provrag — the run stops there and leaves the index as it
is ("up to date"): a re-run over an unchanged folder costs one hash per file.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from provrag import __version__
from provrag.index import ocr
from provrag.store import schema

# config sections that shape the index (query-time sections — search, resolve, verify — do not)
INDEX_SECTIONS = ("load", "chunk", "embeddings", "skeleton", "extract", "communities", "reports", "llm")
HISTORY_KEPT = 50          # runs kept in manifest.json's history (the registry keeps every id forever)
PATHS_LISTED = 100         # paths listed per change kind in one history entry (the count is always whole)
# packages whose versions are recorded in the manifest (those installed)
RECORDED_PACKAGES = ("docling-slim", "docling-parse", "pypdfium2", "duckdb", "polars", "pyarrow", "scikit-learn",
                     "networkx", "graspologic-native", "openai", "tiktoken")


@dataclass
class Changes:
    """Documents added, changed (same path, other bytes) and removed since the previous run."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0

    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def to_json(self, limit: int | None = None) -> dict:
        def listed(paths: list[str]) -> list[str]:
            return paths if limit is None else paths[:limit]

        return {"added": listed(self.added), "changed": listed(self.changed), "removed": listed(self.removed),
                "counts": {"added": len(self.added), "changed": len(self.changed), "removed": len(self.removed),
                           "unchanged": self.unchanged}}


@dataclass
class PreviousIndex:
    """The provrag index a run updates: its folder and manifest."""

    path: Path
    manifest: dict

    @classmethod
    def at(cls, out: Path) -> PreviousIndex | None:
        """The provrag index at `out`, or None (no folder, not provrag's, unreadable manifest)."""
        try:
            manifest = json.loads((Path(out) / schema.MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(manifest, dict) or "provrag_version" not in manifest:
            return None
        if not (Path(out) / f"{schema.TEXT_UNITS}.parquet").is_file():
            return None
        return cls(Path(out), manifest)

    @property
    def run(self) -> int:
        """The previous run's number (an index made before versions existed counts as run 1)."""
        return int(self.manifest.get("run") or 1)

    def documents(self) -> dict[str, tuple[str | None, str]]:
        """path → (sha256, status) of the files the previous run saw."""
        return {d.get("path"): (d.get("sha256"), d.get("status")) for d in self.manifest.get("documents") or []
                if isinstance(d, dict) and d.get("path") is not None}

    def failures(self) -> dict[str, str | None]:
        """path → error of the files that failed in the previous run (as `failures` says of a run)."""
        return {d.get("path"): d.get("error") for d in self.manifest.get("documents") or []
                if isinstance(d, dict) and d.get("status") == schema.STATUS_FAILED}

    def history(self) -> list[dict]:
        h = self.manifest.get("history")
        return [e for e in h if isinstance(e, dict)] if isinstance(h, list) else []

    def index_settings(self) -> dict:
        cfg = self.manifest.get("config") or {}
        return {k: cfg.get(k) for k in INDEX_SECTIONS}


def document_changes(previous: PreviousIndex | None, documents) -> Changes:
    """What the run's documents frame changes against the previous index's files."""
    now = {p: (h, s) for p, h, s in documents.select("path", "sha256", "status").iter_rows()}
    if previous is None:
        return Changes(added=sorted(now))
    before = previous.documents()
    out = Changes(removed=sorted(set(before) - set(now)))
    for path, state in now.items():
        if path not in before:
            out.added.append(path)
        elif before[path] != state:
            out.changed.append(path)
        else:
            out.unchanged += 1
    out.added.sort()
    out.changed.sort()
    return out


def up_to_date(previous: PreviousIndex | None, changes: Changes, cfg, documents) -> bool:
    """Nothing that shapes the index changed: same files and bytes, same index settings, same
    software (provrag, parsers, the OCR engine: a newly installed tesseract reads scans the
    last run could not), and every file that failed failed the same way as last time.

    A failed file never makes a folder stale by itself: failures are never cached, so `load`
    has just read it again (a fix of the environment shows as a new status or error, hence an
    update); the same failure again changes nothing in the index. (It used to: any failure made
    every re-run a full update — new run number, same index hash.)"""
    if previous is None or changes.any():
        return False
    if not written_by_this_version(previous.path):
        return False
    if previous.manifest.get("provrag_version") != __version__:
        return False
    if previous.manifest.get("versions") != software_versions():
        return False
    settings = cfg.to_dict()
    if {k: settings.get(k) for k in INDEX_SECTIONS} != previous.index_settings():
        return False
    return failures(documents) == previous.failures()


def written_by_this_version(index: Path) -> bool:
    """The index holds every file this version of provrag writes for its questions. One written
    before INDEX/retrieval/unit_neighbours.npy (2026-11-29) is written again by the next run (an
    update: the documents' caches make it quick), and its questions then read it."""
    from provrag.store.neighbours import NEIGHBOURS
    from provrag.store.postings import folder_of

    return (folder_of(index) / NEIGHBOURS).is_file()


def failures(documents) -> dict[str, str | None]:
    """path → error of the run's failed documents."""
    failed = documents.filter(documents["status"] == schema.STATUS_FAILED)
    return dict(failed.select("path", "error").iter_rows())


def history_entry(run: int, version: str, mode: str, changes: Changes, ids: dict) -> dict:
    """One run in manifest.json's history: when, what it did to the documents and to the ids."""
    return {"run": run, "index_version": version, "mode": mode,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "documents": changes.to_json(limit=PATHS_LISTED), "ids": ids}


def history(previous: PreviousIndex | None, entry: dict) -> list[dict]:
    """The previous history plus this run's entry, the last HISTORY_KEPT runs."""
    past = previous.history() if previous is not None else []
    return (past + [entry])[-HISTORY_KEPT:]


def software_versions() -> dict:
    """provrag's, the parsing and modelling packages' and the OCR engine's versions (manifest.json)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"provrag": __version__}
    for pkg in RECORDED_PACKAGES:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    out["ocr_engine"] = ocr.engine()  # what read the scanned pages, or None: not installed
    return out
