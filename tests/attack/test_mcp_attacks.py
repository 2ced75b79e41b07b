"""The MCP server under attack, over stdio (`provrag mcp`, raw lines on its stdin, the way a
broken client writes them) and over streamable HTTP (`provrag serve`'s /mcp, raw POST bodies):
malformed JSON-RPC, unknown tools, wrong argument types, a client that disconnects mid-call.
Each mistake gets a JSON-RPC error (an unreadable line: -32700 or -32600; an unknown tool: -32602)
or, for arguments of the wrong type, the tool error MCP prescribes (isError, one line naming the
argument), and the server keeps serving: a good call after all of them is answered."""
from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
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


FIRST_ANSWER_S = 600   # the first call loads the index and the models: minutes on a loaded 2-core machine
ANSWER_FLOOR_S = 120   # no reply deadline is shorter than this
ANSWER_FACTOR = 30     # a reply may take this many times a normal answer of the same run


class StdioServer:
    """`provrag mcp --index I` with raw lines on stdin and one JSON reply per line read back.

    Replies are read by a thread into a queue: select() on the pipe's buffered reader missed a
    reply that arrived together with the one before it (readline() had already pulled it into
    Python's buffer, so the pipe looked empty until the deadline), which read as a server that
    never answered (the FlakyFailure of the first `make fuzz` run).

    A reply's deadline is measured, not guessed: ANSWER_FACTOR times the median round trip of the
    good calls answered so far in this run (never under ANSWER_FLOOR_S), so a machine at load 20
    is not reported as a hang while a line the server never answers still fails. After a missed
    reply the server is spoiled (its late answer would be read as the next one): every later
    reply fails the same way, so Hypothesis reports the failure instead of a FlakyFailure."""

    def __init__(self, index, env, stderr_path):
        self.stderr_path = stderr_path
        self.stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(provrag_command("mcp", "--index", str(index)), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self.read_replies, daemon=True).start()
        self.normal_s: list[float] = []
        self.missed: str | None = None

    def read_replies(self) -> None:
        for line in self.proc.stdout:            # until EOF: then b"" says the server closed its stdout
            self.replies.put(line)
        self.replies.put(b"")

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def deadline_s(self) -> float:
        if not self.normal_s:
            return FIRST_ANSWER_S
        recent = sorted(self.normal_s[-20:])
        return max(ANSWER_FLOOR_S, ANSWER_FACTOR * recent[len(recent) // 2])

    def reply(self, timeout: float | None = None) -> dict:
        """The next reply; an AssertionError naming the load and the server's stderr if none comes in time."""
        if not self.missed:
            allowed = timeout or self.deadline_s()
            try:
                line = self.replies.get(timeout=allowed)
            except queue.Empty:
                line = b""
            if line:
                return json.loads(line)
            said = open(self.stderr_path, "rb").read()[-600:].decode(errors="replace")
            recent = sorted(self.normal_s[-20:])
            self.missed = (f"no reply within {allowed:.0f} s (normal answers of this run: median "
                           f"{f'{recent[len(recent) // 2]:.3f} s' if recent else '-'}; load {os.getloadavg()[0]:.1f} "
                           f"on {os.cpu_count()} cores; server "
                           f"{'running' if self.proc.poll() is None else f'exited {self.proc.returncode}'}); "
                           f"its stderr ends: {said!r}")
        raise AssertionError(self.missed)     # one place: a replay fails where the first run did

    def good_call(self, timeout: float | None = None) -> dict:
        """GOOD_CALL answered, its round trip counted as a normal answer of this run."""
        t0 = time.monotonic()
        self.send(json.dumps(GOOD_CALL).encode())
        reply = self.reply(timeout)
        assert reply.get("id") == 999 and not reply["result"].get("isError"), reply
        assert reply["result"]["structuredContent"]["sources"], reply
        self.normal_s.append(time.monotonic() - t0)
        return reply

    def close(self, timeout: float = 180) -> int:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()
        return self.proc.returncode


@pytest.fixture
def stdio(small_served_index, serve_env, tmp_path):
    server = StdioServer(small_served_index, serve_env, tmp_path / "stderr.log")
    server.send(json.dumps(INIT).encode())
    assert server.reply(FIRST_ANSWER_S)["result"]["serverInfo"]
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    server.good_call(FIRST_ANSWER_S)
    server.normal_s.clear()           # the first call loaded the index: not a normal answer
    server.good_call(FIRST_ANSWER_S)
    yield server
    server.close()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(errors="replace")


def test_stdio_every_bad_line_gets_an_error_and_the_server_keeps_serving(stdio):
    for line, expected in BAD_LINES:
        stdio.send(line)
        check_reply(stdio.reply(), expected, request_id(line))
    stdio.send(b"not json\n" + json.dumps(GOOD_CALL).encode())     # two lines in one write: both answered
    assert stdio.reply()["error"]["code"] == -32700 and stdio.reply()["id"] == 999
    stdio.good_call()


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
    t0 = time.monotonic()
    stdio.send(line)
    stdio.send(json.dumps(GOOD_CALL).encode())
    for _ in range(2):
        reply = stdio.reply()
        if reply.get("id") == 999 and "result" in reply:
            stdio.normal_s.append(time.monotonic() - t0)
            break
        assert "error" in reply or "result" in reply, reply
    else:
        raise AssertionError(f"the good call after {line[:60]!r} got no answer")
    assert stdio.proc.poll() is None


def test_stdio_client_that_disconnects_mid_call_ends_the_server_cleanly(small_served_index, serve_env, tmp_path):
    """The client closes stdin while an ask runs: the server ends (exit 0), without a traceback,
    within a few times what a whole ask took in this run (an ask left running for a client that
    is gone, or a server that never exits, fails; a loaded machine does not)."""
    question = {"question": "How do I install add-on packages in R?"}
    server = StdioServer(small_served_index, serve_env, tmp_path / "stderr.log")
    server.send(json.dumps(INIT).encode())
    assert server.reply(FIRST_ANSWER_S)
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    t0 = time.monotonic()
    server.send(call(4, "ask", question))
    assert server.reply(FIRST_ANSWER_S)["result"]["structuredContent"]["answer"]
    whole_ask_s = time.monotonic() - t0        # the first ask, models loaded: longer than the next
    server.send(call(5, "ask", question))
    time.sleep(0.3)
    allowed = max(30.0, 3 * whole_ask_s)
    t0 = time.monotonic()
    code = server.close(timeout=allowed)
    took = time.monotonic() - t0
    assert code == 0 and took < allowed, (code, took, whole_ask_s)
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
    for path, body in bodies * budget(ci=1, full=2):      # each hang-up once in CI, twice under make fuzz
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                      f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body.encode())}\r\n"
                      f"\r\n{body}".encode())
            time.sleep(0.05)     # the call has started; the client goes away
    assert httpx.get(server.url + "/v1/health", timeout=120).status_code == 200
    good = post_mcp(server, json.dumps(GOOD_CALL).encode())
    assert good.status_code == 200 and good.json()["result"]["structuredContent"]["sources"]
    asked = httpx.post(server.url + "/v1/ask", json={"question": "What did Alice see?"}, timeout=300)
    assert asked.status_code == 200 and asked.json()["answer"]
    # the hung-up MCP calls reached the tool: a Host without the port was refused at the door
    # (the SDK's DNS-rebinding check), which tested nothing of a call cut off mid-way
    assert "Traceback" not in server.output() and "Invalid Host header" not in server.output()
