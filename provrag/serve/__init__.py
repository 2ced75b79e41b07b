"""provrag over HTTP and MCP: one IndexService (service.py) behind a FastAPI app (app.py) and
MCP tools (mcp_tools.py). Every response body is a typed result's `to_json()`, the same
document the CLI prints with `--json`."""
