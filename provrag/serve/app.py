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

import logging
import os
import re
import sys
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Annotated, Literal

from fastapi import FastAPI, Query
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from provrag.errors import ProvragError
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
    served_version,
)
from provrag.serve.queue import ServerBusy
from provrag.serve.gate import Gate, error_body, json_body

MAX_TRACE_ID_CHARS = 64
VERSION_HEADER = "X-Provrag-Index-Version"   # on every response made on the index: the version it read
LOOPBACK = ("127.0.0.1", "localhost", "::1")
API_PREFIXES = ("/v1/", "/mcp", "/openapi.json")   # everything else is the web app (provrag/serve/web/)

log = logging.getLogger("provrag.serve")


class Strict(BaseModel):
    """Request bodies refuse fields they do not know: a typo ("questoin") is an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


# some character that str.strip() keeps: a blank question or answer is refused by the schema (422), as a
# client generated from /openapi.json knows, not later by the pipeline. The characters are spelled out
# (exactly those str.isspace() calls whitespace) instead of \s, which means other characters to each
# reader of the pattern: JSON Schema's ECMA-262 regexes keep \x1c-\x1f and \x85, pydantic's Rust regex
# does not keep \x85, Python's strip() keeps neither; Schemathesis found "\x85\x85" valid by the schema
# and refused as blank by the server.
NOT_BLANK = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def json_integer(value):
    """An integer as JSON Schema's `integer` means it: a number without a fraction (2 and 2.0),
    never true/false or "2". pydantic's lax int read JSON true as 1 (Schemathesis: `"top_k": true`
    answered 200) and its strict int refused 19.0, which the schema allows."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not value.is_integer()):
        raise ValueError("must be an integer")
    return int(value)


def text_integer(value):
    """An integer in a URL (query or path): digits, with an optional minus, and nothing else; lax
    int also read "0.0" as 0, a value the schema's `integer` does not spell."""
    if isinstance(value, str) and not re.fullmatch(r"-?[0-9]+", value):
        raise ValueError("must be an integer")
    return value


class AskRequest(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, pattern=NOT_BLANK, description="The question.")
    method: Literal["auto", "global", "local", "basic"] | None = Field(
        None, description="Search method (default: [search] default_method of the server's config).")


# "exactly one of answer or trace_id" in the schema itself, so a client generated from
# /openapi.json (or a fuzzer) knows `{}` is refused: a string in one field, the other absent or null
EXACTLY_ONE = {"oneOf": [{"required": [f], "properties": {f: {"type": "string"}}} for f in ("answer", "trace_id")]}


class AnswerOrTrace(Strict):
    """An answer given as text, or as the stored ask trace that holds it: exactly one of the two."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=EXACTLY_ONE)

    answer: str | None = Field(None, min_length=1, max_length=MAX_ANSWER_CHARS, pattern=NOT_BLANK,
                               description="The answer text, with its [Data: …] citations.")
    trace_id: str | None = Field(None, min_length=1, max_length=MAX_TRACE_ID_CHARS,
                                 description="Instead of answer: the answer of this stored ask trace ('last': the newest ask this server answered).")

    @model_validator(mode="after")
    def exactly_one(self):
        if (self.answer is None) == (self.trace_id is None):
            raise ValueError("give exactly one of answer or trace_id")
        return self


class ResolveRequest(AnswerOrTrace):
    # the bounds before the validator: after it, pydantic's schema spells them "ge"/"le", not minimum/maximum
    top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K), BeforeValidator(json_integer)] | None = Field(
        None, description="Sources per cited sentence.")


class VerifyRequest(AnswerOrTrace):
    question: str | None = Field(None, max_length=MAX_QUESTION_CHARS,
                                 description="The question it answers (makes short answers checkable).")


# ---- responses and errors ---------------------------------------------------------------------------

class ErrorBody(BaseModel):
    """Every error response: one line saying what went wrong and, where it helps, what to do."""

    error: str


def declared(*statuses: int, result: dict | None = None) -> dict:
    """The `responses` of a route for /openapi.json: its 200 document (`result`: a JSON schema)
    and exactly the error statuses it can answer, each an ErrorBody. Every route may also answer
    401 (a token is set), 413 (body over the bound) and 503 (the index unreadable), so those are
    always declared."""
    why = {400: "Bad input (one line)", 401: "Missing or wrong bearer token", 404: "No such trace, document or page",
           413: "Request body or a field over the server's bound", 422: "The request does not match this schema",
           429: "Too many requests waiting: retry after Retry-After seconds", 503: "The index cannot be read now"}
    out: dict = {200: {"content": {"application/json": {"schema": result}}}} if result is not None else {}
    for status in sorted({*statuses, 401, 413, 503}):
        out[status] = {"model": ErrorBody, "description": why[status]}
        if status == 429:
            out[status]["headers"] = {"Retry-After": {"schema": {"type": "integer"},
                                                      "description": "Seconds to wait before retrying"}}
    return out


def document_with(*keys: str) -> dict:
    """The schema of a result document: a JSON object that has at least these keys."""
    return {"type": "object", "required": list(keys)}

def status_of(e: ProvragError) -> int:
    """The CLI's exit-code meaning as an HTTP status."""
    from provrag.config import ConfigError
    from provrag.store.reader import IndexNotFound
    from provrag.store.traces import TraceNotFound

    if isinstance(e, ServerBusy):
        return 429
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
        if e.get("type") == "string_pattern_mismatch" and e.get("ctx", {}).get("pattern") == NOT_BLANK:
            msg = "must not be blank"
        parts.append(f"{where}: {msg}" if where else msg)
    status = 413 if any(e.get("type") in ("string_too_long", "too_long") for e in errors) else 422
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return status, "; ".join(parts) + more


def for_pages(request) -> bool:
    """A request to the web app (provrag/serve/web/): its errors are pages, not JSON lines. A path
    that matches no route belongs to the app only for a browser (Accept: text/html); a program that
    mistypes a path gets the one-line JSON the API answers with."""
    if request.url.path.startswith(API_PREFIXES):
        return False
    return request.scope.get("route") is not None or "text/html" in request.headers.get("accept", "")


def add_error_handlers(app: FastAPI) -> None:
    from provrag.serve.web.render import error_page

    def refuse(request, status: int, message: str, headers: dict | None = None):
        if for_pages(request):
            first = (message or "").strip().splitlines()
            return error_page(request, status, first[0] if first else f"HTTP {status}")
        return error_body(status, message, headers)

    @app.exception_handler(ProvragError)
    async def provrag_error(request, exc: ProvragError):
        retry = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, ServerBusy) else None
        return refuse(request, status_of(exc), str(exc) or type(exc).__name__, retry)

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc: RequestValidationError):
        return refuse(request, *validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, exc: StarletteHTTPException):
        return refuse(request, exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def internal(request, exc: Exception):
        import duckdb

        if isinstance(exc, duckdb.IOException):     # a table file vanished under a running query
            return error_body(503, f"index unreadable: {str(exc).splitlines()[0][:200]}")
        # Starlette re-raises after this response, so the server log gets the traceback
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        return error_body(500, f"internal error: {type(exc).__name__}{': ' + first if first else ''}")


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
    """The ASGI app over `service`: the REST API under /v1, OpenAPI at /docs, MCP at /mcp, the web app at /.
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

    # /docs is the web app's (Swagger UI served from the wheel, provrag/serve/web/docs.py): FastAPI's
    # own /docs and /redoc load their scripts from a CDN, blank on a machine without internet
    app = FastAPI(title="provrag", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="A provenance-first GraphRAG: every response is the document `provrag … --json` "
                              "prints for the same input. MCP (streamable HTTP) at /mcp; the web app at /.")
    add_error_handlers(app)
    add_routes(app, service)
    from provrag.serve.web import add_web

    add_web(app, service, on_loopback=host in LOOPBACK, token=token)
    if mcp is not None:
        app.router.routes.append(Route("/mcp", endpoint=mcp[0]))
    app.add_middleware(Gate, token=token)
    return app


def versioned(doc, headers: dict | None = None) -> Response:
    """A result as JSON, with the header naming the index version it was made on (the version the
    request's cursor read: a rebuild may swap the index between two requests, never inside one)."""
    version = served_version.get()
    return json_body(doc, headers=(headers or {}) | ({VERSION_HEADER: version} if version else {}))


def add_routes(app: FastAPI, service: IndexService) -> None:
    @app.post("/v1/ask", summary="provrag ask QUESTION --json",
              responses=declared(400, 422, 429, result=document_with("trace_id", "question", "answer", "sources",
                                                                     "index_version")))
    def ask(body: AskRequest) -> Response:
        return versioned(service.ask(body.question, method=body.method).to_json())

    @app.post("/v1/resolve", summary="provrag resolve ANSWER --json",
              responses=declared(400, 404, 422, result=document_with("answer", "citations", "sources", "unresolved",
                                                                     "index")))
    def resolve(body: ResolveRequest) -> Response:
        return versioned(service.resolve(body.answer, top_k=body.top_k, trace_id=body.trace_id).to_json())

    @app.post("/v1/verify", summary="provrag verify --answer A [--question Q] | --trace ID --json",
              responses=declared(400, 404, 422, 429, result=document_with("trace_id", "claims", "summary")))
    def verify(body: VerifyRequest) -> Response:
        return versioned(service.verify(answer=body.answer, question=body.question, trace_id=body.trace_id).to_json())

    @app.get("/v1/traces", summary="provrag log --json",
             responses=declared(422, result={"type": "array", "items": document_with("trace_id", "kind")}))
    def traces(n: Annotated[int, Query(ge=0, le=MAX_TRACES), BeforeValidator(text_integer)] = 20,
               text: str | None = Query(None, max_length=200),
               kind: Literal["ask", "verify"] | None = None) -> Response:
        return json_body(service.traces(n=n, text=text, kind=kind))

    @app.get("/v1/traces/{trace_id}", summary="provrag trace ID --format json|prov",
             responses=declared(404, 422, result={"type": "object"}))
    def trace(trace_id: str = PathParam(max_length=MAX_TRACE_ID_CHARS),
              format: Literal["json", "prov"] = "json") -> Response:
        return json_body(service.trace(trace_id, fmt=format))

    @app.get("/v1/health", summary="The index served (kind, version, tables and rows) and the engine",
             responses=declared(result=document_with("status", "kind", "index_version", "tables", "engine")))
    def health() -> Response:
        return versioned(service.health())

    # {document:path}: a document in a subfolder is named by its path, slashes included
    # ("manuals/r/R-FAQ.pdf"); found by the soak, where every page of such a document was a 404
    @app.get("/v1/documents/{document:path}/pages/{page}", summary="A PDF page as PNG, the quote highlighted",
             response_class=Response,
             responses={**declared(400, 404, 422), 200: {"content": {"image/png": {}}}})
    def page_image(document: Annotated[str, PathParam(max_length=200)],
                   page: Annotated[int, PathParam(ge=1, le=100_000), BeforeValidator(text_integer)],
                   quote: str | None = Query(None, max_length=MAX_QUOTE_CHARS)) -> Response:
        drawn = service.page_image(document, page, quote)
        version = served_version.get()
        return Response(drawn["png"], media_type="image/png",
                        headers={"X-Provrag-Quote-Found": "true" if drawn["found"] else "false",
                                 "X-Provrag-Match": str(drawn["match"] or ""), "Cache-Control": "no-store"}
                        | ({VERSION_HEADER: version} if version else {}))


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
    from provrag.serve.memory import long_running

    with long_running():      # RSS flat under a crowd (the soak): glibc arenas bounded and trimmed
        service = IndexService(index_path, cfg)
        app = create_app(service, token=token, host=host)
        uvicorn.run(app, host=host, port=port, log_level="info", access_log=False, server_header=False)
