"""provrag as MCP tools, so an agent can check its own claims against an index before it states them.

Five tools, each a thin call into `IndexService` (never into the pipelines directly, so HTTP, MCP and
the CLI answer with one code path) whose result is the typed result's `to_json()`: the very document
`provrag … --json` prints, sent as the tool's structured content and, for clients that only read
text, as one JSON line. A mistake the caller can fix (a provrag `UsageError`, arguments outside the
input schema) comes back as a tool error with a one-line message the model can act on; anything
else is the SDK's generic "Error executing tool X", its traceback kept in the server's log (stderr).

Two ways to serve them (mcp SDK 2.x, `MCPServer`, formerly FastMCP):
  - `run_stdio(index_path, cfg)`: `provrag mcp --index I`, the way desktop agent clients start a
    tool. stdout carries protocol messages only: the SDK points fd 1 at stderr while it serves.
  - `mcp_asgi_app(service)`: the streamable-HTTP endpoint `provrag serve` routes at /mcp.
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, CallToolResult, ErrorData, JSONRPCError,
                       TextContent, ToolAnnotations)
from pydantic import Field, ValidationError

from provrag.errors import ProvragError
from provrag.serve.service import (
    MAX_ANSWER_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TOP_K,
    IndexService,
)

MAX_TRACES = 200        # list_traces: rows per call (an agent pages with `text`/`kind`, not with thousands)

INSTRUCTIONS = (
    "provrag answers from one document index with citations that resolve to a document and a physical "
    "page, and checks answers claim by claim. Before stating facts from these documents, call "
    "verify_answer on your draft (pass the question too) and keep only claims whose verdict is "
    "'supported'; cite them by document and page from the evidence. Use ask to get a cited answer, "
    "resolve_citations to turn [Data: Sources (n)] markers into pages and quotes, list_traces and "
    "explain_trace to audit earlier runs."
)

# The result of every tool: the CLI's --json document as structured content (a JSON object).
JsonResult = Annotated[CallToolResult, dict[str, Any]]

Question = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS,
                                description="The question, in plain language.")]
Answer = Annotated[str, Field(min_length=1, max_length=MAX_ANSWER_CHARS,
                              description="The answer text to check or resolve; may contain [Data: …] citations.")]
Method = Literal["auto", "local", "global", "basic"]


class ProvragMCPServer(MCPServer):
    """MCPServer whose argument errors read as one line ("question: Field required") instead of
    pydantic's multi-line dump: an agent re-reads the message to fix its call, and a one-line
    message is what the CLI and the HTTP API give for the same mistake.

    Two protocol mistakes get the JSON-RPC error the specifications prescribe, where the SDK gives
    none or a tool result: a call of a tool that does not exist (-32602, as MCP's spec shows it),
    and over stdio a line that is not JSON (-32700) or not a JSON-RPC message (-32600): the SDK
    drops such a line with a debug log, and a client that sent it waits forever for its answer.
    Wrong argument types stay tool errors (isError): MCP asks for that, so the model can fix its call."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if name not in {tool.name for tool in await self.list_tools()}:
            known = ", ".join(sorted(tool.name for tool in await self.list_tools()))
            raise MCPError(INVALID_PARAMS, f"unknown tool {name[:80]!r} (the tools: {known})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(f"Error executing tool {name}: {argument_errors(cause)}") from cause
            raise


    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, with a JSON-RPC error written back for every unreadable line."""
        import anyio
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage

        async with stdio_server() as (read_stream, write_stream):
            readable_in, readable_out = anyio.create_memory_object_stream(0)

            async def answer_unreadable_lines():
                async with readable_in:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await write_stream.send(SessionMessage(rpc_error_of(item)))
                        else:
                            await readable_in.send(item)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable_lines)
                await self._lowlevel_server.run(readable_out, write_stream,
                                                self._lowlevel_server.create_initialization_options())


def rpc_error_of(error: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read as a message: -32700
    when it is not JSON, -32600 when it is JSON but not a JSON-RPC message (answered with its id
    when it has a usable one, else null, as JSON-RPC 2.0 says)."""
    problems = error.errors(include_url=False) if isinstance(error, ValidationError) else []
    if not problems or any(p.get("type") == "json_invalid" for p in problems):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message="Parse error: the line is not JSON (one JSON-RPC message per line)"))
    # a "missing" error's input is the whole message: the first dict among them holds its id
    sent = next((p["input"] for p in problems if isinstance(p.get("input"), dict) and "id" in p["input"]), None)
    rid = sent.get("id") if isinstance(sent, dict) else None
    rid = rid if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)) else None
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(
        code=INVALID_REQUEST, message='Invalid request: not a JSON-RPC 2.0 message (jsonrpc "2.0" and a '
                                      'method, or a result or an error)'))


def argument_errors(error: ValidationError) -> str:
    """Every failed argument as `name: why`, on one line."""
    parts = []
    for e in error.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return "invalid arguments: " + "; ".join(parts)


def as_tool_result(doc: Any) -> CallToolResult:
    """The CLI's --json document (same serializer settings as `emit_json`) as one JSON text block and
    as structured content; round-tripping through JSON makes both exactly what the CLI prints."""
    text = json.dumps(doc, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=json.loads(text))


def calling(service_call, *args, **kwargs) -> CallToolResult:
    """Run one service call; a provrag error becomes a tool error with its one-line message."""
    try:
        result = service_call(*args, **kwargs)
    except ProvragError as e:
        raise ToolError(" ".join(str(e).split())) from e
    return as_tool_result(result.to_json() if hasattr(result, "to_json") else result)


def build_server(service: IndexService) -> ProvragMCPServer:
    """The five tools over one open index. Tools are sync functions: the SDK runs each on a worker
    thread, and IndexService is thread-safe, so concurrent calls do not block the event loop."""
    server = ProvragMCPServer("provrag", title="provrag: answers with pages, claims checked",
                              instructions=INSTRUCTIONS, log_level="WARNING")
    reads = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    records = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                              open_world_hint=False)

    @server.tool(annotations=records)
    def ask(question: Question,
            method: Annotated[Method | None, Field(description=(
                "Search method: local (entities the question names), global (community reports, for "
                "'main themes' questions), basic (text passages), auto (provrag chooses). Default: the "
                "configured search.default_method, normally auto."))] = None,
            ) -> JsonResult:
        """Answer a question from the index with [Data: Sources (n)] citations.

        Returns {trace_id, question, method, answer, abstained, confidence, citations, sources,
        unresolved}: each source gives document, path, page_start/page_end (physical pages),
        page_label and the quote that backs the cited sentence; after the cited ones, sources whose
        via is "further passage (not cited)" are the pages retrieval ranked next, not support.
        abstained=true means nothing in the index answers: the sources are then the closest
        passages, not support. The run is stored as
        a trace (explain_trace with trace_id shows how the answer was found)."""
        return calling(service.ask, question, method=method)

    @server.tool(annotations=reads)
    def resolve_citations(answer: Answer,
                          top_k: Annotated[int | None, Field(ge=1, le=MAX_TOP_K, description=(
                              "Sources kept per cited sentence (default: the index's [resolve] top_k)."))] = None,
                          ) -> JsonResult:
        """Resolve every [Data: Sources (n)] / [Data: Entities (n)] / [Data: Reports (n)] citation of
        an answer to the document, physical page and quote it stands on, without asking anything.

        Returns {answer, citations, sources, unresolved, dead_ends, problems, index}: sources are best
        first per sentence (sentence_index) with document, page_start/page_end, page_label, quote;
        unresolved lists cited ids the index does not hold; problems lists citation markup that
        could not be read. Nothing is judged: use verify_answer to check the claims."""
        return calling(service.resolve, answer, top_k=top_k)

    @server.tool(annotations=records)
    def verify_answer(answer: Answer,
                      question: Annotated[str | None, Field(max_length=MAX_QUESTION_CHARS, description=(
                          "The question the answer replies to: makes short answers ('Delhi') checkable."))] = None,
                      ) -> JsonResult:
        """Check each claim of an answer against the index (call it on your draft before stating it).

        Returns {trace_id, question, method, source, claims, summary}. Each claim has text, verdict
        (supported | contradicted | unsupported), score, and evidence: passages with document,
        page_start/page_end, page_label, quote, their own label and route (cited, retrieved or both).
        summary counts the verdicts and gives supported_ratio and citation recall/precision. State
        only supported claims, citing the evidence's document and page; reword or drop the others."""
        return calling(service.verify, answer=answer, question=question)

    @server.tool(annotations=reads)
    def explain_trace(trace_id: Annotated[str, Field(min_length=1, max_length=64, description=(
            "A trace id from ask or verify_answer (a unique prefix of 4+ characters is enough), or "
            "'last' for the newest ask this server answered."))]) -> JsonResult:
        """The stored record of one ask or verify run: how the answer was found and checked.

        Returns the trace as `provrag trace ID --format json` prints it: question, method and why it
        was chosen, each stage with its timing, the retrieved candidates, the answer, citations and
        their sources by document and page (for verify: each claim's verdict and evidence)."""
        return calling(service.trace, trace_id)

    @server.tool(annotations=reads)
    def list_traces(n: Annotated[int, Field(ge=1, le=MAX_TRACES, description="At most this many, newest first.")] = 20,
                    text: Annotated[str | None, Field(max_length=MAX_QUESTION_CHARS, description=(
                        "Only traces whose question, answer, method or id contains this."))] = None,
                    kind: Annotated[Literal["ask", "verify"] | None, Field(
                        description="Only traces of this kind.")] = None,
                    ) -> JsonResult:
        """The stored ask and verify runs on this index, newest first.

        Returns {traces: [...]}: each row has trace_id, kind, created, question, method, engine,
        model, answer, n_citations, n_sources, n_unresolved, total_ms, index (the rows
        `provrag log --json` prints). Pass a trace_id to explain_trace for the whole record."""
        return calling(lambda: {"traces": service.traces(n=n, text=text, kind=kind)})

    return server


def mcp_asgi_app(service: IndexService, host: str = "127.0.0.1"):
    """The MCP streamable-HTTP endpoint over `service`, for the HTTP server: `(endpoint, lifespan)`.

    - `endpoint` is a plain ASGI app that ignores the path: add it as a Starlette route at /mcp
      (`app.router.routes.append(Route("/mcp", endpoint))`; a Route, not a Mount, so `/mcp` itself
      answers instead of redirecting to `/mcp/`).
    - `lifespan()` is an async context manager that must be entered for as long as the server runs
      (inside the FastAPI app's lifespan): it runs the SDK's session manager, and requests fail
      until it is entered. It can be entered once per endpoint.
    Stateless, JSON responses: every tool call is one POST answered with one JSON body, so any
    number of clients can call concurrently and no session outlives its request. `host` is the
    address served: on loopback the SDK refuses requests whose Host/Origin is not local (DNS
    rebinding); on any other address that check is off (protect it with the bearer token).
    """
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

    server = build_server(service)
    # builds the session manager (the Starlette app it returns is not used: provrag serve routes it)
    server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host)
    manager = server.session_manager
    return StreamableHTTPASGIApp(manager), manager.run


def run_stdio(index_path, cfg) -> None:
    """`provrag mcp --index INDEX`: serve the tools over stdin/stdout until the client closes them.

    The index is opened before serving, so a bad path fails at once with the CLI's one-line error
    and exit 2 instead of a server that errors on every call."""
    import contextlib
    import sys

    from provrag.serve.memory import long_running

    with long_running():      # a long-lived process too: the same allocator settings as `provrag serve`
        with contextlib.redirect_stdout(sys.stderr):   # nothing but protocol messages on stdout
            service = IndexService(index_path, cfg)
        build_server(service).run("stdio")
