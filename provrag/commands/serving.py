"""Commands that hand an index to other programs: `serve` (HTTP + MCP), `mcp` (MCP over stdio,
the way desktop agent clients start a tool) and `sql` (read-only SQL over the index and its
provenance tables). Each is a thin wrapper over provrag/serve/ or provrag/store/sql.py."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from provrag.commands.common import ConfigOpt, IndexOpt, JsonOpt, console, emit_json, load_cfg, usage


def serve(
    index_dir: Path = IndexOpt,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (0.0.0.0 serves every interface: "
                                                          "use --token-env then)."),
    port: int = typer.Option(8507, "--port", "-p", help="TCP port."),
    token_env: Optional[str] = typer.Option(None, "--token-env",
                                            help="Require `Authorization: Bearer <token>`, the token being the "
                                                 "value of this environment variable."),
    config: Optional[Path] = ConfigOpt,
):
    """Serve an index over HTTP (REST under /v1, OpenAPI at /docs) and MCP (at /mcp).

    Every response is the document the CLI prints with --json for the same input.

    \b
    Example:
      provrag serve --index output
      curl -s localhost:8507/v1/ask -H 'content-type: application/json' -d '{"question": "Who leads the team?"}'
      PROVRAG_TOKEN=s3cret provrag serve --index output --host 0.0.0.0 --token-env PROVRAG_TOKEN
    """
    from provrag.serve.memory import prefer_system_pool

    prefer_system_pool()       # before provrag.serve.app imports pyarrow (serve/memory.py says why)
    from provrag.serve.app import serve as run_server

    # the app checks --token-env and warns about a non-loopback --host (provrag/serve/app.py)
    if not 0 < port < 65536:
        usage(f"--port must be between 1 and 65535 (got {port})")
    run_server(index_dir, load_cfg(config), host=host, port=port, token_env=token_env)


def mcp(
    index_dir: Path = IndexOpt,
    config: Optional[Path] = ConfigOpt,
):
    """Serve an index as MCP tools over stdio (ask, resolve_citations, verify_answer, explain_trace, list_traces).

    Desktop agent clients start it themselves; their config names the command.

    \b
    Example (an MCP client's config):
      {"mcpServers": {"provrag": {"command": "provrag", "args": ["mcp", "--index", "/path/to/output"]}}}
    """
    from provrag.serve.memory import prefer_system_pool

    prefer_system_pool()       # before pyarrow is imported (serve/memory.py)
    from provrag.serve.mcp_tools import run_stdio

    run_stdio(index_dir, load_cfg(config))


def sql(
    query: str = typer.Argument(..., help="One read-only SQL statement (DuckDB); '-' reads it from stdin."),
    index_dir: Path = IndexOpt,
    limit: int = typer.Option(1000, "--limit", "-n", help="At most this many rows."),
    timeout: float = typer.Option(10.0, "--timeout", help="Seconds before the query is stopped."),
    as_json: bool = JsonOpt,
):
    """Query the index and its provenance tables with read-only SQL (DuckDB).

    Tables: documents, text_units, entities, relationships, communities, community_reports,
    traces (one row per ask/verify), retrievals (each candidate a query retrieved: rank, score,
    its components and the query terms that drove it; candidate_id is its `Sources (n)` number),
    citations (each citation of an answer resolved to document and page, with verify's verdict).
    Writes, DDL and file access are refused.

    \b
    Example:
      provrag sql "SELECT question, rank, score FROM retrievals WHERE candidate_id = 3" --index output
      provrag sql "SELECT document, page FROM citations WHERE trace_id =
                   (SELECT trace_id FROM traces ORDER BY created DESC LIMIT 1)" --index output --json
    """
    import sys

    from provrag.store.sql import run_sql

    if query == "-":
        query = sys.stdin.read()
    if limit < 1:
        usage(f"--limit must be at least 1 (got {limit})")
    if timeout <= 0:
        usage(f"--timeout must be positive (got {timeout})")
    result = run_sql(index_dir, query, timeout_s=timeout, limit=limit)
    if as_json:
        emit_json(result.to_json())
    else:
        from provrag.views.sql import sql_table

        console().print(sql_table(result))
