"""`provrag serve`: the CLI's contract over HTTP (FastAPI), and the MCP tools at /mcp.

Each POST answers with exactly the document the CLI prints with `--json` for the same input:
the typed result's `to_json()` through `results.json_document`, the CLI's own serializer.
Errors are one JSON line, `{"error": "…"}`, with the CLI's exit-code meaning as an HTTP status
(bad input 400/422, not found 404, too large 413, index unreadable 503); an unexpected failure
is a 500 whose body says only its type and first line, the traceback going to the server log.

The endpoints are plain `def` functions: FastAPI runs them in its thread pool, so a slow ask
never blocks the event loop and concurrent requests each get their own DuckDB cursor
(service.py). An optional bearer token guards everything, /docs and /mcp included.
"""
from __future__ import annotations

import hmac
import logging
import os
import sys
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Literal

from fastapi import FastAPI, Query
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from provrag.errors import ProvragError
from provrag.results import json_document
from provrag.serve.service import (
    MAX_ANSWER_CHARS,
    MAX_QUESTION_CHARS,
    MAX_QUOTE_CHARS,
    MAX_TOP_K,
    MAX_TRACES,
    DocumentNotFound,
    IndexService,
    IndexUnavailable,
    RequestTooLarge,
)

MAX_BODY_BYTES = 1 << 20          # a request body beyond this is refused before it is parsed
MAX_TRACE_ID_CHARS = 64
LOOPBACK = ("127.0.0.1", "localhost", "::1")

log = logging.getLogger("provrag.serve")


class Strict(BaseModel):
    """Request bodies refuse fields they do not know: a typo ("questoin") is an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


class AskRequest(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question.")
    method: Literal["auto", "global", "local", "basic"] | None = Field(
        None, description="Search method (default: [search] default_method of the server's config).")


class AnswerOrTrace(Strict):
    """An answer given as text, or as the stored ask trace that holds it: exactly one of the two."""

    answer: str | None = Field(None, min_length=1, max_length=MAX_ANSWER_CHARS,
                               description="The answer text, with its [Data: …] citations.")
    trace_id: str | None = Field(None, min_length=1, max_length=MAX_TRACE_ID_CHARS,
                                 description="Instead of answer: the answer of this stored ask trace ('last': the newest ask this server answered).")

    @model_validator(mode="after")
    def exactly_one(self):
        if (self.answer is None) == (self.trace_id is None):
            raise ValueError("give exactly one of answer or trace_id")
        return self


class ResolveRequest(AnswerOrTrace):
    top_k: int | None = Field(None, ge=1, le=MAX_TOP_K, description="Sources per cited sentence.")


class VerifyRequest(AnswerOrTrace):
    question: str | None = Field(None, max_length=MAX_QUESTION_CHARS,
                                 description="The question it answers (makes short answers checkable).")


# ---- responses and errors ---------------------------------------------------------------------------

def json_body(obj, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json_document(obj) + "\n", status_code=status, media_type="application/json", headers=headers)


def error_body(status: int, message: str, headers: dict | None = None) -> Response:
    line = (message or "").strip().splitlines()
    return json_body({"error": line[0] if line else f"HTTP {status}"}, status, headers)


def status_of(e: ProvragError) -> int:
    """The CLI's exit-code meaning as an HTTP status."""
    from provrag.config import ConfigError
    from provrag.store.reader import IndexNotFound
    from provrag.store.traces import TraceNotFound

    if isinstance(e, RequestTooLarge):
        return 413
    if isinstance(e, (TraceNotFound, DocumentNotFound)):
        return 404
    if isinstance(e, (IndexUnavailable, IndexNotFound, ConfigError)):
        return 503        # the server's index or settings, not the request, are at fault
    return 400 if e.exit_code == 2 else 409


def validation_message(exc: RequestValidationError) -> tuple[int, str]:
    """(status, one line) for pydantic's errors, an unknown field named first (a typo explains
    the "field required" that comes with it); 413 when a bound on size was crossed."""
    errors = sorted(exc.errors(), key=lambda e: e.get("type") != "extra_forbidden")
    if not errors:
        return 422, "invalid request"
    first = errors[0]
    if first.get("type") == "json_invalid":
        return 400, f"the body is not valid JSON: {first.get('ctx', {}).get('error', first.get('msg'))}"
    parts = []
    for e in errors[:3]:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        if not where and e.get("type") in ("model_attributes_type", "dict_type", "missing"):
            return 422, "the body must be a JSON object (Content-Type: application/json)"
        msg = " ".join(str(e.get("msg", "invalid")).removeprefix("Value error, ").split())
        parts.append(f"{where}: {msg}" if where else msg)
    status = 413 if any(e.get("type") in ("string_too_long", "too_long") for e in errors) else 422
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return status, "; ".join(parts) + more


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProvragError)
    async def provrag_error(request, exc: ProvragError):
        return error_body(status_of(exc), str(exc) or type(exc).__name__)

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc: RequestValidationError):
        return error_body(*validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, exc: StarletteHTTPException):
        return error_body(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def internal(request, exc: Exception):
        import duckdb

        if isinstance(exc, duckdb.IOException):     # a table file vanished under a running query
            return error_body(503, f"index unreadable: {str(exc).splitlines()[0][:200]}")
        # Starlette re-raises after this response, so the server log gets the traceback
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        return error_body(500, f"internal error: {type(exc).__name__}{': ' + first if first else ''}")


class Gate:
    """ASGI middleware in front of everything (docs and /mcp too): the bearer token when one is
    set (constant-time comparison), and a body-size bound checked before any body is read."""

    def __init__(self, app, token: str | None, max_body: int = MAX_BODY_BYTES):
        self.app, self.max_body = app, max_body
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        refusal = None
        if self.expected is not None and not hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
            refusal = error_body(401, "missing or wrong bearer token (Authorization: Bearer <token>)",
                                 {"WWW-Authenticate": "Bearer"})
        elif headers.get(b"content-length", b"0").isdigit() and int(headers.get(b"content-length", b"0")) > self.max_body:
            refusal = error_body(413, f"request body over {self.max_body:,} bytes")
        if refusal is not None:
            return await refusal(scope, receive, send)
        return await self.app(scope, receive, send)


# ---- the app ------------------------------------------------------------------------------------------

def mcp_endpoint(service: IndexService, host: str):
    """(ASGI endpoint, lifespan) of the MCP tools (provrag/serve/mcp_tools.py), or None when that
    module is absent (the HTTP API then runs alone)."""
    try:
        from provrag.serve.mcp_tools import mcp_asgi_app
    except ModuleNotFoundError as e:
        if e.name not in ("provrag.serve.mcp_tools", "mcp"):
            raise
        log.warning("MCP endpoint not served: %s", e)
        return None
    return mcp_asgi_app(service, host=host)


def create_app(service: IndexService, token: str | None = None, host: str = "127.0.0.1") -> FastAPI:
    """The ASGI app over `service`: the REST API under /v1, OpenAPI at /docs, MCP at /mcp.
    `token`: require `Authorization: Bearer <token>` on every request."""
    mcp = mcp_endpoint(service, host)

    @asynccontextmanager
    async def lifespan(app):
        async with AsyncExitStack() as stack:
            if mcp is not None:
                await stack.enter_async_context(mcp[1]())
            yield
        service.close()

    from provrag import __version__

    app = FastAPI(title="provrag", version=__version__, lifespan=lifespan,
                  description="A provenance-first GraphRAG: every response is the document `provrag … --json` "
                              "prints for the same input. MCP (streamable HTTP) at /mcp.")
    add_error_handlers(app)
    add_routes(app, service)
    if mcp is not None:
        app.router.routes.append(Route("/mcp", endpoint=mcp[0]))
    app.add_middleware(Gate, token=token)
    return app


def add_routes(app: FastAPI, service: IndexService) -> None:
    @app.post("/v1/ask", summary="provrag ask QUESTION --json")
    def ask(body: AskRequest) -> Response:
        return json_body(service.ask(body.question, method=body.method).to_json())

    @app.post("/v1/resolve", summary="provrag resolve ANSWER --json")
    def resolve(body: ResolveRequest) -> Response:
        return json_body(service.resolve(body.answer, top_k=body.top_k, trace_id=body.trace_id).to_json())

    @app.post("/v1/verify", summary="provrag verify --answer A [--question Q] | --trace ID --json")
    def verify(body: VerifyRequest) -> Response:
        return json_body(service.verify(answer=body.answer, question=body.question, trace_id=body.trace_id).to_json())

    @app.get("/v1/traces", summary="provrag log --json")
    def traces(n: int = Query(20, ge=0, le=MAX_TRACES), text: str | None = Query(None, max_length=200),
               kind: Literal["ask", "verify"] | None = None) -> Response:
        return json_body(service.traces(n=n, text=text, kind=kind))

    @app.get("/v1/traces/{trace_id}", summary="provrag trace ID --format json|prov")
    def trace(trace_id: str = PathParam(max_length=MAX_TRACE_ID_CHARS),
              format: Literal["json", "prov"] = "json") -> Response:
        return json_body(service.trace(trace_id, fmt=format))

    @app.get("/v1/health", summary="The index served (kind, version, tables and rows) and the engine")
    def health() -> Response:
        return json_body(service.health())

    @app.get("/v1/documents/{document}/pages/{page}", summary="A PDF page as PNG, the quote highlighted",
             response_class=Response, responses={200: {"content": {"image/png": {}}}})
    def page_image(document: str = PathParam(max_length=200), page: int = PathParam(ge=1, le=100_000),
                   quote: str | None = Query(None, max_length=MAX_QUOTE_CHARS)) -> Response:
        drawn = service.page_image(document, page, quote)
        return Response(drawn["png"], media_type="image/png",
                        headers={"X-Provrag-Quote-Found": "true" if drawn["found"] else "false",
                                 "X-Provrag-Match": str(drawn["match"] or ""), "Cache-Control": "no-store"})


def serve(index_path, cfg, host: str = "127.0.0.1", port: int = 8507, token_env: str | None = None) -> None:
    """`provrag serve`: open the index (a bad one fails here, one line), then serve until stopped.
    A non-loopback `host` is warned about on stderr; `token_env` names the environment variable
    holding the bearer token every request must present."""
    import uvicorn

    from provrag.errors import UsageError

    token = None
    if token_env is not None:
        token = os.environ.get(token_env) or None
        if token is None:
            raise UsageError(f"--token-env {token_env}: that environment variable is not set or empty")
    if host not in LOOPBACK:
        print(f"warning: serving on {host}: anyone who can reach this machine can query the index"
              + ("" if token else " (no --token-env: no authentication)"), file=sys.stderr, flush=True)
    service = IndexService(index_path, cfg)
    app = create_app(service, token=token, host=host)
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False, server_header=False)
