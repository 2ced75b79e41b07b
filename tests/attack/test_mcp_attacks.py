"""The MCP server under attack, over stdio (`provrag mcp`, raw lines on its stdin, the way a
broken client writes them) and over streamable HTTP (`provrag serve`'s /mcp, raw POST bodies):
malformed JSON-RPC, unknown tools, wrong argument types, a client that disconnects mid-call.
Each mistake gets a JSON-RPC error (an unreadable line: -32700 or -32600; an unknown tool: -32602)
or, for arguments of the wrong type, the tool error MCP prescribes (isError, one line naming the
argument), and the server keeps serving: a good call after all of them is answered."""
from __future__ import annotations

import json
import select
import socket
import subprocess
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.attack.conftest import budget, count
from tests.serve.conftest import provrag_command

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attack", "version": "1"}}}
GOOD_CALL = {"jsonrpc": "2.0", "id": 999, "method": "tools/call",
             "params": {"name": "resolve_citations", "arguments": {"answer": "Lincoln spoke [Data: Sources (1)]."}}}


def call(rid, name, arguments):
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


# (line, what must come back: a JSON-RPC error code, or "tool error" for isError)
BAD_LINES = [
    (b"not json at all", -32700), (b'{"jsonrpc":"2.0","id":2', -32700), (b"\xff\xfe\x00\x01", -32700),
    (b"[]", -32600), (b"42", -32600), (b"null", -32600), (b'"text"', -32600), (b'{"jsonrpc":"2.0","id":7}', -32600),
    (b'{"id":8,"method":"tools/list"}', -32600), (b'{"jsonrpc":"1.0","id":9,"method":"tools/list"}', -32600),
    (b'{"jsonrpc":"2.0","id":10,"method":"no/such/method"}', -32601),
    (call(11, "no_such_tool", {}), -32602), (call(12, "", {}), -32602), (call(13, "ask\u0000", {}), -32602),
    (call(14, "ask", {"question": 42}), "tool error"), (call(15, "ask", {"question": None}), "tool error"),
    (call(16, "ask", {}), "tool error"), (call(17, "list_traces", {"n": "five"}), "tool error"),
    (call(18, "resolve_citations", {"answer": "x", "top_k": 1e308}), "tool error"),
    (call(19, "resolve_citations", {"answer": ["x"]}), "tool error"),
    (call(20, "verify_answer", {"answer": "x", "question": {"a": 1}}), "tool error"),
    (call(21, "explain_trace", {"trace_id": "z" * 65}), "tool error"),
    (call(22, "ask", {"question": "x", "method": "psychic"}), "tool error"),
    (call(23, "list_traces", {"n": 1, "unknown_argument": 1}), None),   # ignored extra argument: answered either way
    (b'{"jsonrpc":"2.0","id":24,"method":"tools/call","params":"not an object"}', -32600),
]


def check_reply(reply: dict, expected, rid) -> None:
    if expected == "tool error":
        assert reply.get("result", {}).get("isError") is True, reply
        text = reply["result"]["content"][0]["text"]
        assert "\n" not in text and "Traceback" not in text and len(text) < 400, text
    elif expected is None:
        assert "result" in reply or "error" in reply, reply
    else:
        assert reply.get("error", {}).get("code") == expected, reply
        assert "\n" not in reply["error"]["message"], reply
    if rid is not None:
        assert reply.get("id") == rid, reply


def request_id(line: bytes):
    try:
        doc = json.loads(line)
    except ValueError:
        return None
    return doc.get("id") if isinstance(doc, dict) and isinstance(doc.get("id"), int) else None


class StdioServer:
    """`provrag mcp --index I` with raw lines on stdin and one JSON reply per line read back."""

    def __init__(self, index, env, stderr_path):
        self.stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(provrag_command("mcp", "--index", str(index)), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 120) -> dict | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else b""
        return json.loads(line) if line else None

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=180)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()
        return self.proc.returncode


@pytest.fixture
def stdio(small_served_index, serve_env, tmp_path):
    server = StdioServer(small_served_index, serve_env, tmp_path / "stderr.log")
    server.send(json.dumps(INIT).encode())
    assert server.reply()["result"]["serverInfo"]
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield server
    server.close()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(errors="replace")


def test_stdio_every_bad_line_gets_an_error_and_the_server_keeps_serving(stdio):
    for line, expected in BAD_LINES:
        stdio.send(line)
        reply = stdio.reply()
        assert reply is not None, f"no reply to {line[:60]!r}"
        check_reply(reply, expected, request_id(line))
    stdio.send(json.dumps(GOOD_CALL).encode())
    good = stdio.reply()
    assert good["id"] == 999 and not good["result"].get("isError") and good["result"]["structuredContent"]["sources"]


@settings(max_examples=budget(ci=25, full=400), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(line=st.one_of(st.binary(max_size=200).filter(lambda b: b"\n" not in b and b"\r" not in b and b.strip()),
                      st.text(max_size=200).map(lambda t: t.encode()).filter(
                          lambda b: b"\n" not in b and b"\r" not in b and b.strip() and b"\x85" not in b),
                      st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                                   lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                       st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "x"]),
                                       inner, max_size=4), max_leaves=8).map(lambda v: json.dumps(v).encode())))
def test_stdio_any_line_is_answered_or_ignored_and_the_server_keeps_serving(stdio, line):
    """Any line at all: the server answers it (a request or garbage) or, a notification or a
    response, stays silent; then a good call still gets its answer, with its own id."""
    count("mcp stdio: any line")
    stdio.send(line)
    stdio.send(json.dumps(GOOD_CALL).encode())
    for _ in range(2):
        reply = stdio.reply()
        assert reply is not None, f"no reply after {line[:60]!r}"
        if reply.get("id") == 999 and "result" in reply:
            break
        assert "error" in reply or "result" in reply, reply
    else:
        raise AssertionError(f"the good call after {line[:60]!r} got no answer")
    assert stdio.proc.poll() is None


def test_stdio_client_that_disconnects_mid_call_ends_the_server_cleanly(small_served_index, serve_env, tmp_path):
    """The client closes stdin while an ask runs: the server ends (exit 0), without a traceback."""
    server = StdioServer(small_served_index, serve_env, tmp_path / "stderr.log")
    server.send(json.dumps(INIT).encode())
    assert server.reply()
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    server.send(call(5, "ask", {"question": "How do I install add-on packages in R?"}))
    time.sleep(0.3)
    t0 = time.monotonic()
    code = server.close()
    assert code == 0 and time.monotonic() - t0 < 180   # the running ask ends first (seconds; minutes on a loaded machine)
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(errors="replace")


# ---- streamable HTTP -------------------------------------------------------------------------

MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post_mcp(server, body: bytes) -> httpx.Response:
    return httpx.post(server.url + "/mcp", content=body, headers=MCP_HEADERS, timeout=120)


def test_http_every_bad_body_gets_an_error_and_the_server_keeps_serving(server):
    for line, expected in BAD_LINES:
        r = post_mcp(server, line)
        assert r.status_code < 500, (line, r.status_code, r.text[:200])
        if r.status_code == 202:          # a notification-shaped body: accepted, nothing to answer
            assert expected in (-32600, None), line
            continue
        if r.status_code == 200:
            check_reply(r.json(), expected, request_id(line))
        else:   # refused by the SDK's transport: a JSON-RPC error all the same (its message is the SDK's)
            assert r.status_code in (400, 406, 415, 422) and expected not in ("tool error", None), (line, r.text)
            assert r.json()["error"]["code"] in (-32700, -32600, -32602) and r.json()["id"] is None, (line, r.text)
    good = post_mcp(server, json.dumps(GOOD_CALL).encode()).json()
    assert good["id"] == 999 and good["result"]["structuredContent"]["sources"]
    assert "Traceback" not in server.output()


def test_http_clients_that_disconnect_mid_call_leave_the_server_serving(server):
    """Clients send an ask (REST and MCP) and hang up before the answer: the next requests are answered."""
    port = int(server.url.rsplit(":", 1)[1])
    bodies = [("/v1/ask", json.dumps({"question": "What did Lincoln say about emancipation?"})),
              ("/mcp", call(31, "ask", {"question": "What is the asymptote package?"}).decode()),
              ("/v1/verify", json.dumps({"answer": "Lincoln spoke of emancipation [Data: Sources (1)]."}))]
    for path, body in bodies * 2:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body.encode())}\r\n"
                      f"\r\n{body}".encode())
            time.sleep(0.05)     # the call has started; the client goes away
    assert httpx.get(server.url + "/v1/health", timeout=120).status_code == 200
    good = post_mcp(server, json.dumps(GOOD_CALL).encode())
    assert good.status_code == 200 and good.json()["result"]["structuredContent"]["sources"]
    asked = httpx.post(server.url + "/v1/ask", json={"question": "What did Alice see?"}, timeout=300)
    assert asked.status_code == 200 and asked.json()["answer"]
    assert "Traceback" not in server.output()
