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

import logging
import os
import threading
import time
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.serve.opened import IndexUnavailable, OpenIndex, manifest_identity, served_version, stamp_of
from provrag.serve.queue import ComputeQueue
from provrag.store.traces import made_via

MAX_QUESTION_CHARS = 2_000
MAX_ANSWER_CHARS = 50_000
MAX_QUOTE_CHARS = 2_000
MAX_TOP_K = 50
MAX_TRACES = 1_000
# asks and verifies at once: one per core. Each request's MiniLM pass takes its share of the
# cores (provrag/cores.py: every core alone, one when the slots are full), so requests side by side
# do not start more threads than there are cores (the thrash that made one slot per two cores
# the rule before: 8 concurrent asks on 2 cores gave 0.64 req/s against 0.92 one at a time)
COMPUTE_SLOTS = max(1, os.cpu_count() or 1)
# asks and verifies that may wait for a compute slot; one more is refused at once (HTTP 429 with
# Retry-After) rather than queued without end: a crowd gets a fast "come back in N s", never a
# request that times out after minutes. Each waiting request holds one of the 40 threads of the
# server's pool (anyio's default), so the bound leaves threads for resolve, traces and health.
MAX_WAITING = 24
# and at most this long a wait, estimated from recent run times: 24 asks of 16 s each on one slot
# made the last one wait 400 s (the soak on ~9,500 units); past it the answer is 429 at once
MAX_WAIT_S = 120.0
REAPPEAR_WAIT_S = 2.0   # an index folder briefly absent (a rebuild's two-rename fallback): wait this long

log = logging.getLogger("provrag.serve")


class RequestTooLarge(UsageError):
    """A question, answer or top_k beyond the server's bounds (one-line message)."""


class DocumentNotFound(UsageError):
    """No such document or page, or no drawable page image for it (one-line message)."""


def bounded(name: str, text: str | None, limit: int) -> str | None:
    if text is not None and len(text) > limit:
        raise RequestTooLarge(f"{name} is {len(text):,} characters; the server takes at most {limit:,}")
    return text


def _warming(cfg: Config):
    """The engine's warm-up of what a server reads; none when the engine cannot be made (a bad
    setting: every ask and verify says so in one line, as without it)."""
    from provrag.engines import get_engine

    try:
        return get_engine(cfg).warming("serve")
    except Exception:  # noqa: BLE001 - reported by each request that needs the engine
        return nullcontext()


class IndexService:
    """The index at `index_path` with config `cfg`, answered request by request (thread-safe)."""

    def __init__(self, index_path, cfg: Config):
        self.index_path = Path(index_path)
        self.cfg = cfg
        self.lock = threading.Lock()
        self.current = OpenIndex(self.index_path)   # fail at start-up, not at the first request
        self.kind = self.current.reader.kind
        self.reopened = 0
        self.compute = ComputeQueue(COMPUTE_SLOTS, MAX_WAITING, MAX_WAIT_S)
        # the models asks and verifies read, loaded on a thread while the server starts listening
        # (engines/offline/warm.py): the first question does not wait for them; close() joins it
        self.warm_up = ExitStack()
        self.warm_up.enter_context(_warming(cfg))

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
    def borrowed(self):
        """(the version, an IndexReader of it through a cursor of its own), for one request."""
        twin = None
        while twin is None:          # retired between fresh() and lend(): take the new version
            opened = self.fresh()
            twin = opened.lend()
        served_version.set((opened.identity or (None,))[0])
        ok = False
        try:
            yield opened, twin
            ok = True
        finally:
            opened.give_back(twin, reusable=ok)

    @contextmanager
    def reader(self):
        """An IndexReader of the current index through a cursor of its own, for one request."""
        with self.borrowed() as (_, twin):
            yield twin

    def on_one_version(self, work):
        """`work(reader)` on the current version of the index.

        A rebuild swaps the index folder while requests run, and DuckDB reads the tables by path:
        a request reading when the swap comes can fail halfway, however the pipeline wraps it (a
        parquet footer of one version, the bytes of the next: "TProtocolException: Invalid data",
        "attempted range … file size"; found by kill -9 trials while serving). A request that
        failed while the version it started on was replaced runs again on the new version (at
        most twice); a failure on an unchanged index is the request's own and is raised."""
        for attempt in range(3):
            with self.borrowed() as (opened, r):
                try:
                    return work(r)
                except Exception:
                    if attempt == 2 or stamp_of(opened.watched) == opened.stamp:
                        raise
            log.info("a request met a rebuild of %s: run again on the new version", self.index_path)

    def close(self) -> None:
        self.warm_up.close()
        self.current.retire()

    # ---- the CLI's commands ----------------------------------------------------------------------

    def ask(self, question: str, method: str | None = None):
        """`provrag ask QUESTION [--method M]`: an AskResult, its trace stored in the index."""
        from provrag.pipelines.ask import run_ask

        bounded("question", question, MAX_QUESTION_CHARS)
        with self.compute.turn(), made_via("server"):
            result = self.on_one_version(lambda r: run_ask(question, self.index_path, self.cfg, method=method,
                                                           reader=r))
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
        with made_via("server"):
            return self.on_one_version(lambda r: run_resolve(self.index_path, answer, self.cfg, top_k=top_k,
                                                             trace_id=trace_id, reader=r))

    def verify(self, answer: str | None = None, question: str | None = None, trace_id: str | None = None):
        """`provrag verify --answer A [--question Q]` or `--trace ID`: a VerifyResult, its trace stored."""
        from provrag.pipelines.verify import run_verify

        bounded("answer", answer, MAX_ANSWER_CHARS)
        bounded("question", question, MAX_QUESTION_CHARS)
        if trace_id is not None and answer is None:
            self.trace(trace_id)
        with self.compute.turn(), made_via("server"):
            result = self.on_one_version(lambda r: run_verify(self.index_path, self.cfg, answer=answer,
                                                              trace_id=trace_id, question=question, reader=r))
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

    # ---- what the web app browses (provrag/serve/catalog.py) ---------------------------------------

    def overview(self):
        """The index's documents (status and why, pages, units, OCR'd pages) and rows per table."""
        from provrag.serve import catalog

        with self.reader() as r:
            return catalog.overview(r)

    def document(self, key: str):
        return self._found(lambda r, c: c.document(r, key), f"no document {key!r} in the index")

    def unit(self, unit_id: str):
        return self._found(lambda r, c: c.unit_text(r, unit_id), f"no text unit {unit_id!r} in the index")

    def units(self, document: str, offset: int = 0, limit: int = 100):
        return self._found(lambda r, c: c.units_of(r, document, offset, limit),
                           f"no document {document!r} in the index")

    def reports(self, level: int | None = None, offset: int = 0, limit: int = 50):
        """(community reports, best rank first, of one level or all; their total; the levels)."""
        from provrag.serve import catalog

        with self.reader() as r:
            return (*catalog.reports(r, level, offset, limit), catalog.levels(r))

    def report(self, community: int):
        return self._found(lambda r, c: c.report(r, community), f"no community report {community} in the index")

    def _found(self, look, missing: str):
        """look(reader, catalog)'s result; DocumentNotFound (404) with `missing` when it is None."""
        from provrag.serve import catalog

        with self.reader() as r:
            found = look(r, catalog)
        if found is None:
            raise DocumentNotFound(missing)
        return found

    def retrievals(self, trace_id: str) -> list[dict]:
        """The trace's rows of the `retrievals` provenance table (store/provenance.py): why each
        candidate was retrieved — rank, score by component, the question's words that drove it."""
        from provrag.store.provenance import retrieval_rows

        return retrieval_rows(self.trace(trace_id))

    def html_report(self, trace_id: str, max_pages: int = 8) -> str:
        """`provrag report --trace ID`: the HTML audit report of a stored trace, as text."""
        import tempfile

        from provrag.pipelines.report import run_report

        with tempfile.TemporaryDirectory(prefix="provrag-report-") as tmp:
            out = Path(tmp) / "report.html"
            with self.compute.turn():
                run_report(self.index_path, out, trace_id=trace_id, max_pages=max_pages, cfg=self.cfg)
            return out.read_text(encoding="utf-8")

    # ---- what only a server needs ----------------------------------------------------------------

    def health(self) -> dict:
        """What is served: the index (kind, version, each table's rows) and the engine answering."""
        from provrag import __version__

        def read(r):
            return r, r.manifest(), {t: r.count(t) for t, f in r.tables.items() if f is not None}, r.embedder()

        r, m, tables, embedder = self.on_one_version(read)
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
        docs = Docs(self.index_path, None, open_reader=False)    # the manifest is all state() reads
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
        rows = self.on_one_version(lambda r: r.con.execute(
            "SELECT path, 0 AS pref FROM documents WHERE id = $d UNION ALL "
            "SELECT path, 1 FROM documents WHERE CAST(human_readable_id AS VARCHAR) = $d UNION ALL "
            "SELECT path, 2 FROM documents WHERE path = $d UNION ALL "
            "SELECT path, 3 FROM documents WHERE title = $d ORDER BY pref", {"d": document}).fetchall())
        best = [p for p, pref in rows if pref == rows[0][1]] if rows else []
        if not best:
            raise DocumentNotFound(f"no document {document!r} in the index")
        if len(set(best)) > 1:
            raise UsageError(f"document {document!r} names {len(set(best))} documents; give its id or path")
        if best[0] is None:
            raise DocumentNotFound(f"document {document!r} has no file path in the index")
        return best[0]
