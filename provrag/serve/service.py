"""One index served to many requests: what `provrag serve` and `provrag mcp` call.

The CLI opens the index, loads the embedder and answers one question per process; a server
answers many, so the service keeps what is costly to load between requests (the opened index
with its DuckDB views and embedder; the MiniLM weights stay loaded in the process) and gives
each request a DuckDB cursor of its own (`IndexReader.cursor`: one connection must not run two
queries at once, and the query code's temp tables belong to a connection). Cursors are pooled,
so a cursor's temp tables (BM25 term view, resolve lookups) serve the next request too.

An index rebuilt underneath a running server is picked up at the next request: `provrag index`
puts a finished folder in place in one rename, so the service compares manifest.json's stat
(inode, mtime, size) at each request and, when it changed, its content (index_version, run,
created); a new version is opened whole and swapped in, never a half-written one. Requests
still running on the old version finish on it; its connection closes when the last one ends.

Every method returns the same typed result as the pipeline the CLI calls, so a response body
is that result's `to_json()`, never a second serializer.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.store.traces import made_via

MAX_QUESTION_CHARS = 2_000
MAX_ANSWER_CHARS = 50_000
MAX_QUOTE_CHARS = 2_000
MAX_TOP_K = 50
MAX_TRACES = 1_000
IDLE_CURSORS = 8        # cursors kept for reuse; more concurrent requests each get a fresh one
# asks and verifies at once: each runs the MiniLM encoder on every core (BLAS threads); more at
# once only thrash (measured: 8 concurrent asks on 2 cores gave 0.64 req/s against 0.92 for one at a time)
COMPUTE_SLOTS = max(1, (os.cpu_count() or 2) // 2)
REAPPEAR_WAIT_S = 2.0   # an index folder briefly absent (a rebuild's two-rename fallback): wait this long

log = logging.getLogger("provrag.serve")


class RequestTooLarge(UsageError):
    """A question, answer or top_k beyond the server's bounds (one-line message)."""


class DocumentNotFound(UsageError):
    """No such document or page, or no drawable page image for it (one-line message)."""


class IndexUnavailable(UsageError):
    """The served index cannot be read right now: gone, unreadable, or being replaced."""


def bounded(name: str, text: str | None, limit: int) -> str | None:
    if text is not None and len(text) > limit:
        raise RequestTooLarge(f"{name} is {len(text):,} characters; the server takes at most {limit:,}")
    return text


def manifest_identity(folder: Path) -> tuple | None:
    """What names an index's content: (index_version, run, created) of its manifest.json, or
    None without a readable one (a GraphRAG folder: then its stat alone tells a change)."""
    try:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (m.get("index_version"), m.get("run"), m.get("created")) if isinstance(m, dict) else None


class OpenIndex:
    """One version of the index, opened once: its reader, what identifies it, the cursors it lends."""

    def __init__(self, index_path: Path):
        from provrag.store.reader import IndexNotFound, open_index

        try:
            self.reader = open_index(index_path)
        except IndexNotFound as e:
            raise IndexUnavailable(str(e)) from None
        self.reader.embedder()      # loaded now, shared by every cursor
        manifest = self.reader.path / "manifest.json"
        self.watched = manifest if manifest.is_file() else self.reader.tables["text_units"]
        self.stamp = stamp_of(self.watched)
        self.identity = manifest_identity(self.reader.path)
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
            return self.idle.pop() if self.idle else self.reader.cursor()

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


class IndexService:
    """The index at `index_path` with config `cfg`, answered request by request (thread-safe)."""

    def __init__(self, index_path, cfg: Config):
        self.index_path = Path(index_path)
        self.cfg = cfg
        self.lock = threading.Lock()
        self.current = OpenIndex(self.index_path)   # fail at start-up, not at the first request
        self.kind = self.current.reader.kind
        self.reopened = 0
        self.compute = threading.BoundedSemaphore(COMPUTE_SLOTS)

    # ---- the index, fresh at each request --------------------------------------------------------

    def fresh(self) -> OpenIndex:
        """The current version of the index, reopened first if it was rebuilt since the last request."""
        cur = self.current
        if stamp_of(cur.watched) == cur.stamp:
            return cur
        with self.lock:
            cur = self.current
            stamp = stamp_of(cur.watched)
            waited = 0.0
            while stamp is None and waited < REAPPEAR_WAIT_S:   # between a rebuild's two renames
                time.sleep(0.05)
                waited += 0.05
                stamp = stamp_of(cur.watched)
            if stamp is None:
                raise IndexUnavailable(f"the index at {self.index_path} is gone (deleted or being replaced)")
            if stamp == cur.stamp:
                return cur
            if cur.identity is not None and manifest_identity(cur.reader.path) == cur.identity:
                cur.stamp = stamp        # touched or rewritten with the same content: keep it open
                return cur
            new = OpenIndex(self.index_path)
            self.current, self.reopened = new, self.reopened + 1
            cur.retire()
            log.info("index %s changed (index_version %s → %s): reopened", self.index_path,
                     (cur.identity or (None,))[0], (new.identity or (None,))[0])
            return new

    @contextmanager
    def reader(self):
        """An IndexReader of the current index through a cursor of its own, for one request."""
        twin = None
        while twin is None:          # retired between fresh() and lend(): take the new version
            opened = self.fresh()
            twin = opened.lend()
        ok = False
        try:
            yield twin
            ok = True
        finally:
            opened.give_back(twin, reusable=ok)

    def close(self) -> None:
        self.current.retire()

    # ---- the CLI's commands ----------------------------------------------------------------------

    def ask(self, question: str, method: str | None = None):
        """`provrag ask QUESTION [--method M]`: an AskResult, its trace stored in the index."""
        from provrag.pipelines.ask import run_ask

        bounded("question", question, MAX_QUESTION_CHARS)
        with self.compute, self.reader() as r, made_via("server"):
            result = run_ask(question, self.index_path, self.cfg, method=method, reader=r)
        if result.trace_error:
            log.warning("ask %s: %s", result.trace_id, result.trace_error)
        return result

    def resolve(self, answer: str | None = None, top_k: int | None = None, trace_id: str | None = None):
        """`provrag resolve ANSWER [--top K]` (or `--trace ID`): a ResolveResult."""
        from provrag.pipelines.resolve import run_resolve

        if top_k is not None and not 1 <= top_k <= MAX_TOP_K:
            raise RequestTooLarge(f"top_k must be between 1 and {MAX_TOP_K} (got {top_k})")
        bounded("answer", answer, MAX_ANSWER_CHARS)
        if trace_id is not None:
            self.trace(trace_id)       # a missing trace is "not found", not bad input
        with self.reader() as r, made_via("server"):
            return run_resolve(self.index_path, answer, self.cfg, top_k=top_k, trace_id=trace_id, reader=r)

    def verify(self, answer: str | None = None, question: str | None = None, trace_id: str | None = None):
        """`provrag verify --answer A [--question Q]` or `--trace ID`: a VerifyResult, its trace stored."""
        from provrag.pipelines.verify import run_verify

        bounded("answer", answer, MAX_ANSWER_CHARS)
        bounded("question", question, MAX_QUESTION_CHARS)
        if trace_id is not None and answer is None:
            self.trace(trace_id)
        with self.compute, self.reader() as r, made_via("server"):
            result = run_verify(self.index_path, self.cfg, answer=answer, trace_id=trace_id, question=question,
                                reader=r)
        if result.trace_error:
            log.warning("verify %s: %s", result.trace_id, result.trace_error)
        return result

    def traces(self, n: int = 20, text: str | None = None, kind: str | None = None) -> list[dict]:
        """`provrag log --index I [-n N] [TEXT] [--kind K] --json`: the newest stored traces."""
        from provrag.store.traces import list_traces

        if not 0 <= n <= MAX_TRACES:
            raise RequestTooLarge(f"n must be between 0 and {MAX_TRACES} (got {n})")
        return list_traces(self.index_path, n=n, text=text, kind=kind)

    def trace(self, trace_id: str, fmt: str = "json") -> dict:
        """`provrag trace ID --index I --format json|prov`; TraceNotFound when there is none."""
        from provrag.store.traces import load_trace

        if fmt not in ("json", "prov"):
            raise UsageError(f"unknown format '{fmt}' (expected json or prov)")
        with made_via("server"):       # `last`: the newest ask this server answered
            t = load_trace(trace_id, self.index_path)
        if fmt == "prov":
            from provrag.query.trace import to_prov

            return to_prov(t)
        return t

    # ---- what only a server needs ----------------------------------------------------------------

    def health(self) -> dict:
        """What is served: the index (kind, version, each table's rows) and the engine answering."""
        from provrag import __version__

        with self.reader() as r:
            m = r.manifest()
            tables = {t: r.count(t) for t, f in r.tables.items() if f is not None}
            embedder = r.embedder()
        llm = self.cfg.llm
        return {"status": "ok", "provrag_version": __version__, "index": str(r.path), "kind": r.kind,
                "index_version": m.get("index_version"), "run": m.get("run"), "created": m.get("created"),
                "tables": tables,
                "engine": {"llm": llm.engine, "model": None if llm.engine == "offline" else llm.model,
                           "embedder": embedder.name if embedder is not None else None},
                "reopened": self.reopened}

    def page_image(self, document: str, page: int, quote: str | None = None) -> dict:
        """Physical page `page` of a PDF document of the index as a PNG, `quote` highlighted as the
        HTML report draws it (audit/pages.render_page: {"png", "found", "match", …}).

        `document` is the documents table's id, human_readable_id, path or title (what a source's
        "document" and "path" say). Only a file that is still the one indexed is drawn."""
        from provrag.audit.documents import Docs, is_pdf
        from provrag.audit.pages import RenderError, render_page

        bounded("quote", quote, MAX_QUOTE_CHARS)
        path = self.document_path(document)
        if not is_pdf({"path": path, "page_start": page}):
            raise DocumentNotFound(f"document {document} ({path}) is not a PDF: it has no page images")
        docs = Docs(self.index_path, None)
        try:
            state, message, file = docs.state(path)
        finally:
            docs.close()
        if state != "ok":
            raise DocumentNotFound(message)
        try:
            return render_page(file, page, quote)
        except RenderError as e:
            raise DocumentNotFound(f"document {document}: {e}") from None

    def document_path(self, document: str) -> str:
        """documents.path of the one document named by id, human_readable_id, path or title."""
        with self.reader() as r:
            rows = r.con.execute(
                "SELECT path, 0 AS pref FROM documents WHERE id = $d UNION ALL "
                "SELECT path, 1 FROM documents WHERE CAST(human_readable_id AS VARCHAR) = $d UNION ALL "
                "SELECT path, 2 FROM documents WHERE path = $d UNION ALL "
                "SELECT path, 3 FROM documents WHERE title = $d ORDER BY pref", {"d": document}).fetchall()
        best = [p for p, pref in rows if pref == rows[0][1]] if rows else []
        if not best:
            raise DocumentNotFound(f"no document {document!r} in the index")
        if len(set(best)) > 1:
            raise UsageError(f"document {document!r} names {len(set(best))} documents; give its id or path")
        if best[0] is None:
            raise DocumentNotFound(f"document {document!r} has no file path in the index")
        return best[0]
