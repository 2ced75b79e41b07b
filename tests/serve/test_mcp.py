"""The MCP tools driven by the mcp SDK's own client, the way an agent reaches them: over stdio (a
`provrag mcp --index I` subprocess, as a desktop client starts it) and over streamable HTTP (a
`provrag serve --index I --port P` subprocess, endpoint /mcp). Real index (../shared/corpora/small),
a real answer from `ask`, its verdicts from `verify_answer` with document and page."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.serve.conftest import provrag_command

TOOLS = {"ask", "resolve_citations", "verify_answer", "explain_trace", "list_traces"}
QUESTION = "How do I install add-on packages in R?"   # answered from R-FAQ.pdf in the small corpus


async def round_trip(client: Client) -> dict:
    """What an agent does: list the tools, ask, verify the answer, resolve it, look at the traces,
    and make two mistakes. Returns what the assertions look at."""
    listed = (await client.list_tools()).tools
    asked = await client.call_tool("ask", {"question": QUESTION})
    answer = asked.structured_content["answer"]
    verified = await client.call_tool("verify_answer", {"answer": answer, "question": QUESTION})
    resolved = await client.call_tool("resolve_citations", {"answer": answer, "top_k": 2})
    traces = await client.call_tool("list_traces", {"n": 5, "kind": "verify"})
    explained = await client.call_tool("explain_trace", {"trace_id": asked.structured_content["trace_id"]})
    no_trace = await client.call_tool("explain_trace", {"trace_id": "abcdef0123"})
    bad_top_k = await client.call_tool("resolve_citations", {"answer": answer, "top_k": 0})
    return {"tools": {t.name: t for t in listed}, "asked": asked, "verified": verified, "resolved": resolved,
            "traces": traces, "explained": explained, "errors": [no_trace, bad_top_k]}


def check_round_trip(seen: dict, small_corpus: Path) -> None:
    tools = seen["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"], tool.name
        assert "Returns" in tool.description, f"{tool.name}: the description must say what it returns"
    assert tools["ask"].input_schema["required"] == ["question"]
    assert set(tools["ask"].input_schema["properties"]["method"]["anyOf"][0]["enum"]) == {"auto", "local", "global",
                                                                                          "basic"}
    assert tools["verify_answer"].input_schema["required"] == ["answer"]
    assert tools["explain_trace"].input_schema["required"] == ["trace_id"]
    assert tools["resolve_citations"].input_schema["properties"]["top_k"]["anyOf"][0]["minimum"] == 1

    asked = seen["asked"]
    assert not asked.is_error and asked.structured_content["sources"], "ask found no source"
    assert any(s["document"] == "R-FAQ" for s in asked.structured_content["sources"])

    verified = seen["verified"]
    assert not verified.is_error
    claims = verified.structured_content["claims"]
    assert claims and all(c["verdict"] in ("supported", "contradicted", "unsupported") for c in claims)
    assert any(c["verdict"] == "supported" for c in claims), "a cited answer from the index had no supported claim"
    evidence = [e for c in claims for e in c["cited"] + c["evidence"]]
    assert evidence
    files = {p.name for p in small_corpus.iterdir() if p.is_file()}
    for e in evidence:                      # every piece of evidence names a document and a real page
        assert e["document"] and e["path"] in files, e
        assert isinstance(e["page_start"], int) and e["page_start"] >= 1, e
    summary = verified.structured_content["summary"]
    assert summary["claims"] == len(claims)
    assert summary["supported"] == sum(c["verdict"] == "supported" for c in claims)
    # the text block is the same document, as one JSON line (what `provrag verify --json` prints)
    assert "\n" not in verified.content[0].text
    assert json.loads(verified.content[0].text) == verified.structured_content

    resolved = seen["resolved"].structured_content
    assert resolved["sources"] and all(s["page_start"] for s in resolved["sources"])
    rows = seen["traces"].structured_content["traces"]
    assert rows and rows[0]["trace_id"] == verified.structured_content["trace_id"]
    assert {r["kind"] for r in rows} == {"verify"}
    explained = seen["explained"].structured_content
    assert explained["trace_id"] == seen["asked"].structured_content["trace_id"] and explained["stages"]

    for err in seen["errors"]:               # a tool error, one line, no traceback
        assert err.is_error and len(err.content) == 1
        text = err.content[0].text
        assert "\n" not in text and "Traceback" not in text and len(text) < 300, text
    assert "no trace abcdef0123" in seen["errors"][0].content[0].text
    assert "top_k" in seen["errors"][1].content[0].text


def test_stdio_agent_round_trip(small_served_index, small_corpus, serve_env, tmp_path):
    """`provrag mcp --index I` as a desktop client starts it (its default, minimal environment);
    stdout carries nothing but protocol messages: any other line would reach the message handler
    as a parse error."""
    faults: list[Exception] = []

    async def on_message(message):
        if isinstance(message, Exception):
            faults.append(message)

    command = provrag_command("mcp", "--index", str(small_served_index))
    # what a client config's "env" adds to the client's minimal default environment
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"XDG_DATA_HOME": serve_env["XDG_DATA_HOME"]})

    async def main(errlog):
        async with Client(stdio_client(params, errlog=errlog), message_handler=on_message) as client:
            return await round_trip(client)

    with open(tmp_path / "stderr.log", "w") as errlog:     # the server's stderr: a real file, the subprocess needs its fd
        seen = anyio.run(main, errlog)
    check_round_trip(seen, small_corpus)
    assert faults == [], f"non-protocol output on stdout: {faults[:2]}"
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def test_stdio_bad_index_fails_at_start_with_one_line(tmp_path):
    run = subprocess.run(provrag_command("mcp", "--index", str(tmp_path / "missing")), input="",
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().count("\n") == 0 and "missing" in run.stderr, run.stderr


def test_http_agent_round_trip(server, small_corpus):
    """The MCP endpoint of `provrag serve` (/mcp) with the SDK's streamable-HTTP client."""
    async def main():
        async with Client(f"{server.url}/mcp") as client:
            return await round_trip(client)

    check_round_trip(anyio.run(main), small_corpus)
    assert "Traceback" not in server.output()
