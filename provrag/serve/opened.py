"""One version of a served index, opened once: its reader, what identifies it (manifest.json's
stat and content), and the DuckDB cursors it lends to requests. IndexService (service.py) keeps
the current one and swaps in a new one when `provrag index` replaces the folder."""
from __future__ import annotations

import os
import threading
from contextvars import ContextVar
from pathlib import Path

from provrag.errors import UsageError

IDLE_CURSORS = 8        # cursors kept for reuse; more concurrent requests each get a fresh one


class IndexUnavailable(UsageError):
    """The served index cannot be read right now: gone, unreadable, or being replaced."""


# the index version (manifest's index_version) the current request read: set where the request
# borrows its cursor, read by the HTTP layer for the X-Provrag-Index-Version header
served_version: ContextVar[str | None] = ContextVar("served_version", default=None)


def manifest_identity(folder: Path) -> tuple | None:
    """What names an index's content: (index_version, run, created) of its manifest.json, or
    None without a readable one (a GraphRAG folder: then its stat alone tells a change)."""
    from provrag.store.manifest import read_manifest

    m = read_manifest(folder)
    return (m.get("index_version"), m.get("run"), m.get("created")) if m is not None else None


class OpenIndex:
    """One version of the index, opened once: its reader, what identifies it, the cursors it lends."""

    def __init__(self, index_path: Path):
        from provrag.store.reader import IndexNotFound, open_index
        from provrag.query.graph_lookups import GraphLookups
        from provrag.store.units import KeptUnits

        try:
            self.reader = open_index(index_path)
        except IndexNotFound as e:
            raise IndexUnavailable(str(e)) from None
        self.reader.embedder()      # loaded now, shared by every cursor
        manifest = self.reader.path / "manifest.json"
        self.watched = manifest if manifest.is_file() else self.reader.tables["text_units"]
        self.stamp = stamp_of(self.watched)
        self.identity = manifest_identity(self.reader.path)
        self.kept_units = KeptUnits()
        self.graph_lookups = GraphLookups()    # the graph's maps, read once per version
        self.lock = threading.Lock()
        self.idle: list = []
        self.lent = 0
        self.retired = False

    def lend(self):
        """A reader through a cursor of its own; None once retired (the caller takes the newer version)."""
        with self.lock:
            if self.retired:
                return None
            self.lent += 1
            if self.idle:
                return self.idle.pop()
            twin = self.reader.cursor()
            twin.kept_units = self.kept_units      # unit rows read once per version, by every request
            twin.graph_lookups = self.graph_lookups
            return twin

    def give_back(self, twin, reusable: bool) -> None:
        with self.lock:
            self.lent -= 1
            if reusable and not self.retired and len(self.idle) < IDLE_CURSORS:
                self.idle.append(twin)
            else:
                twin.close()
            if self.retired and self.lent == 0:
                self.reader.close()

    def retire(self) -> None:
        """No new requests; the connection closes once the running ones have ended."""
        with self.lock:
            self.retired = True
            for twin in self.idle:
                twin.close()
            self.idle.clear()
            if self.lent == 0:
                self.reader.close()


def stamp_of(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size
