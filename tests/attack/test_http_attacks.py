"""Hand-made attacks on `provrag serve` that a schema-driven fuzzer does not make: bodies of 10 MB
(with and without Content-Length), invalid UTF-8, deep JSON nesting, path traversal and NUL bytes
in the page-image route, negative and huge page numbers; and what the server promises under a
crowd: a bounded compute queue answering 429 with Retry-After, and every answer made on the index
naming its version. Each attack gets a 4xx with one line of JSON, and the server keeps serving."""
from __future__ import annotations

import http.client
import json
import threading
import time

import httpx
import pytest

from provrag.serve.queue import ComputeQueue, ServerBusy

TEN_MB = 10 * 1024 * 1024


def raw_post(server, path: str, body: bytes, chunked: bool, timeout: float = 120) -> tuple[int, bytes, float]:
    """POST `body` over a plain connection (chunked: no Content-Length); (status, body, seconds)."""
    port = int(server.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    t0 = time.monotonic()
    conn.putrequest("POST", path)
    conn.putheader("Content-Type", "application/json")
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders()
    try:
        step = 1 << 16
        for i in range(0, len(body), step):
            piece = body[i:i + step]
            conn.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        if chunked:
            conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass                      # the server answered and closed before the whole body was sent
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data, time.monotonic() - t0


def one_line_json_error(data: bytes) -> str:
    doc = json.loads(data)
    assert list(doc) == ["error"] and "\n" not in doc["error"], doc
    return doc["error"]


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
@pytest.mark.parametrize("path", ["/v1/ask", "/v1/verify", "/mcp"])
def test_a_10_mb_body_is_refused_with_413_and_the_server_keeps_serving(server, path, chunked):
    """Regression (chunked): a body without Content-Length was read whole into memory, then parsed."""
    body = b'{"question": "' + b"a" * TEN_MB + b'"}'
    status, data, seconds = raw_post(server, path, body, chunked)
    assert status == 413, (status, data[:200])
    assert "request body over" in one_line_json_error(data)
    assert httpx.get(server.url + "/v1/health", timeout=60).status_code == 200
    assert "Traceback" not in server.output()


@pytest.mark.parametrize(("body", "says"), [
    (b'{"question": "\xff\xfe caf\xe9"}', "body"),
    (b"[" * 100_000 + b"]" * 100_000, "body"),
    (b'{"question": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_000 + b"}", "body"),
    (b'{"question": "x", "question": "y", "method": "basic", "method": []}', "method"),
    (b"\x00" * 1000, "not valid JSON"),
    (b"", "JSON object"),
])
def test_malformed_bodies_get_a_4xx_with_one_line(server, body, says):
    for path in ("/v1/ask", "/v1/resolve", "/v1/verify"):
        status, data, _ = raw_post(server, path, body, chunked=False)
        assert 400 <= status < 500, (path, status, data[:200])
        assert says in one_line_json_error(data)
    assert httpx.get(server.url + "/v1/health", timeout=60).status_code == 200
    assert "Traceback" not in server.output()


def schema_patterns(node) -> set[str]:
    """Every `pattern` in a JSON Schema document."""
    if isinstance(node, dict):
        return {node["pattern"]} if isinstance(node.get("pattern"), str) else set().union(
            *(schema_patterns(v) for v in node.values()))
    return set().union(*(schema_patterns(v) for v in node)) if isinstance(node, list) else set()


@pytest.mark.parametrize("text", ["\x85\x85", "\x1c\x1d\x1e\x1f", " \t\u3000\u2028\xa0", "\ufeff", "\u200b", "x\x85"])
def test_blank_means_one_thing_to_the_schema_and_to_the_server(server, text):
    """A question or answer is refused as blank exactly when the published pattern says so, and
    the pattern spells out its characters: `\\s` means other characters to JSON Schema's ECMA-262
    regexes, to pydantic's Rust regex and to Python (Schemathesis found {"question": "\\x85\\x85"}
    valid by the schema and refused by the server as blank)."""
    import re

    patterns = schema_patterns(httpx.get(server.url + "/openapi.json", timeout=60).json())
    assert len(patterns) == 1 and not re.search(r"\\[sSwWdDbB]", next(iter(patterns))), patterns
    blank = re.search(next(iter(patterns)), text) is None
    assert blank == (text.strip() == "")            # the schema's blank is the pipeline's blank
    r = httpx.post(server.url + "/v1/resolve", json={"answer": text}, timeout=120)
    assert r.status_code == (422 if blank else 200), (text, r.status_code, r.text[:200])


@pytest.mark.parametrize("top_k, status", [(True, 422), (False, 422), ("3", 422), (2.5, 422), (2.0, 200), (2, 200)])
def test_top_k_is_an_integer_to_the_server_as_to_the_schema(server, top_k, status):
    """`top_k` is JSON Schema's "integer" in /openapi.json: a number without a fraction, 2.0 included.
    Schemathesis (make fuzz) found pydantic's lax int answering `"top_k": true` with 200, and its
    strict int refusing 19.0; each non-integer is refused and each integer is not."""
    r = httpx.post(server.url + "/v1/resolve", json={"answer": "Lincoln [Data: Sources (1)].", "top_k": top_k},
                   timeout=120)
    assert r.status_code == status, (top_k, r.status_code, r.text[:200])


@pytest.mark.parametrize("url", ["/v1/traces?n=0.0", "/v1/traces?n=1e1", "/v1/documents/R-FAQ.pdf/pages/1.0"])
def test_an_integer_in_a_url_is_digits(server, url):
    """Lax int read "0.0" in a query as 0 (Schemathesis: a value the schema's integer does not spell)."""
    r = httpx.get(server.url + url, timeout=120)
    assert r.status_code == 422, (url, r.status_code, r.text[:200])


@pytest.mark.parametrize("document", [
    "..%2F..%2Fetc%2Fpasswd", "..%2F..%2F..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "%2F%2Fetc%2Fpasswd",
    "..", "...", "%2E%2E", "R-FAQ.pdf%00", "R-FAQ%00.pdf", "%00", "..%5C..%5Cetc%5Cpasswd",
    "R-FAQ.pdf%2F..%2F..%2F..%2Fetc%2Fpasswd", "licenses%2F..%2F..%2F..%2Fetc%2Fpasswd", "~root%2F.ssh%2Fid_rsa",
    "file%3A%2F%2F%2Fetc%2Fpasswd", "%252E%252E%252Fetc%252Fpasswd",
])
@pytest.mark.parametrize("page", ["1", "2"])
def test_page_image_route_never_reads_outside_the_index_documents(server, document, page):
    r = httpx.get(f"{server.url}/v1/documents/{document}/pages/{page}", timeout=60)
    assert r.status_code in (404, 422), (document, r.status_code)
    assert r.headers["content-type"] == "application/json" and list(r.json()) == ["error"]


@pytest.mark.parametrize("page", ["0", "-1", "-99999999999999999999", "100001", "99999999999999999999999999",
                                  "1e9", "1.5", "NaN", "0x10", "%00", "1%00"])
def test_negative_and_huge_page_numbers_are_422(server, page):
    r = httpx.get(f"{server.url}/v1/documents/R-FAQ/pages/{page}", timeout=60)
    assert r.status_code == 422, (page, r.status_code, r.text[:200])
    assert list(r.json()) == ["error"]


def test_a_page_past_the_end_is_404_and_a_real_one_is_drawn(server):
    assert httpx.get(f"{server.url}/v1/documents/R-FAQ/pages/99999", timeout=60).status_code == 404
    drawn = httpx.get(f"{server.url}/v1/documents/R-FAQ/pages/1", timeout=120)
    assert drawn.status_code == 200 and drawn.content[:4] == b"\x89PNG"


def test_the_schema_says_exactly_one_of_answer_or_trace_id(server):
    """Regression: `{}` fitted the declared schema of /v1/resolve and /v1/verify, yet was refused."""
    spec = httpx.get(server.url + "/openapi.json", timeout=30).json()
    for model in ("ResolveRequest", "VerifyRequest"):
        one_of = spec["components"]["schemas"][model]["oneOf"]
        assert sorted(branch["required"] for branch in one_of) == [["answer"], ["trace_id"]]
    for path in ("/v1/resolve", "/v1/verify"):
        r = httpx.post(server.url + path, json={}, timeout=30)
        assert r.status_code == 422 and "exactly one" in r.json()["error"]


def test_every_error_status_the_server_answers_is_declared(server):
    """Regression: /openapi.json declared only 200 and FastAPI's 422 (with a body the server never
    sends); the server answers 400, 401, 404, 413, 429 and 503 too, each as {"error": "..."}."""
    spec = httpx.get(server.url + "/openapi.json", timeout=30).json()
    error_ref = "#/components/schemas/ErrorBody"
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            declared = op["responses"]
            assert {"401", "413", "503"} <= set(declared), (method, path, sorted(declared))
            for status, response in declared.items():
                if status != "200":
                    assert response["content"]["application/json"]["schema"]["$ref"] == error_ref, (path, status)
    answered = [("post", "/v1/ask", {"question": "   "}, 422), ("post", "/v1/ask", {"question": "x" * 2001}, 413),
                ("post", "/v1/resolve", {"trace_id": "0123456789ab"}, 404), ("get", "/v1/traces/ffffffffff", None, 404),
                ("get", "/v1/documents/R-FAQ/pages/99999", None, 404), ("post", "/v1/verify", {"answer": 1}, 422)]
    for method, path, body, status in answered:
        r = httpx.request(method.upper(), server.url + path, json=body, timeout=120)
        assert r.status_code == status, (path, r.status_code, r.text[:200])
        template = path if "pages" not in path and "traces/" not in path else (
            "/v1/documents/{document}/pages/{page}" if "pages" in path else "/v1/traces/{trace_id}")
        assert str(status) in spec["paths"][template][method]["responses"], (path, status)
    assert "429" in spec["paths"]["/v1/ask"]["post"]["responses"]
    assert "Retry-After" in spec["paths"]["/v1/ask"]["post"]["responses"]["429"]["headers"]


def test_every_answer_names_the_index_version_it_was_made_on(server, small_served_index):
    version = json.loads((small_served_index / "manifest.json").read_text())["index_version"]
    asked = httpx.post(server.url + "/v1/ask", json={"question": "What did Lincoln say about emancipation?"},
                       timeout=300)
    assert asked.headers["x-provrag-index-version"] == version == asked.json()["index_version"]
    for method, path, body in [("POST", "/v1/resolve", {"answer": asked.json()["answer"]}),
                               ("POST", "/v1/verify", {"trace_id": asked.json()["trace_id"]}),
                               ("GET", "/v1/health", None), ("GET", "/v1/documents/R-FAQ/pages/1", None)]:
        r = httpx.request(method, server.url + path, json=body, timeout=300)
        assert r.status_code == 200 and r.headers["x-provrag-index-version"] == version, (path, r.status_code)


# ---- the bounded queue ----------------------------------------------------------------------

def test_the_compute_queue_refuses_past_its_bound_with_a_retry_after():
    queue = ComputeQueue(slots=1, waiting=1)
    holding, release, waited = threading.Event(), threading.Event(), threading.Event()

    def hold():
        with queue.turn():
            holding.set()
            release.wait(30)

    def wait_turn():
        with queue.turn():
            waited.set()

    first, second = threading.Thread(target=hold), threading.Thread(target=wait_turn)
    first.start()
    assert holding.wait(10)
    second.start()
    deadline = time.monotonic() + 10
    while queue.admitted < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(ServerBusy) as busy:       # one running, one waiting: the third is refused at once
        with queue.turn():
            pass
    assert busy.value.retry_after_s >= 1 and "retry in" in str(busy.value)
    release.set()
    first.join(10)
    second.join(10)
    assert waited.is_set() and queue.admitted == 0
    with queue.turn():                            # and served again once there is room
        pass


def test_a_busy_server_answers_429_with_retry_after(small_served_index, monkeypatch, serve_env):
    from starlette.testclient import TestClient

    from provrag.config import load_config
    from provrag.serve.app import create_app
    from provrag.serve.service import IndexService

    monkeypatch.setenv("XDG_DATA_HOME", serve_env["XDG_DATA_HOME"])
    service = IndexService(small_served_index, load_config())
    service.compute = ComputeQueue(slots=1, waiting=0)
    with service.compute.turn():                  # the one slot is taken, nobody may wait
        with TestClient(create_app(service)) as client:
            for path, body in (("/v1/ask", {"question": "Who?"}), ("/v1/verify", {"answer": "R is free."})):
                r = client.post(path, json=body)
                assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1, (path, r.status_code, r.text)
                assert list(r.json()) == ["error"] and "busy" in r.json()["error"]
            assert client.get("/v1/health").status_code == 200      # cheap routes are not queued
            assert client.post("/v1/resolve", json={"answer": "R [Data: Sources (1)]."}).status_code == 200


# ---- a rebuild under a running request --------------------------------------------------------

def test_a_request_that_meets_a_rebuild_runs_again_on_the_new_version(tmp_path, small_corpus, monkeypatch):
    """Regression (found by the kill -9 trials while serving: two asks answered 500 "TProtocolException:
    Invalid data" and "attempted range … file size"): DuckDB reads the tables by path, so a request
    reading when `provrag index` swaps the folder fails halfway. It runs again on the new version,
    and its answer names that version; a failure on an unchanged index is not retried."""
    import shutil

    import duckdb

    from provrag.config import load_config
    from provrag.pipelines.index import run_index
    from provrag.serve.service import IndexService, served_version
    from tests.attack import crash

    docs, idx, other = tmp_path / "docs", tmp_path / "idx", tmp_path / "other"
    docs.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sotu.txt")
    cfg = load_config()
    run_index(docs, idx, cfg)
    (docs / "note.txt").write_text("The Halcyon boiler runs at 40 bar.\n")
    shutil.copytree(idx, other)
    run_index(docs, other, cfg)
    new_version = json.loads((other / "manifest.json").read_text())["index_version"]
    service = IndexService(idx, cfg)
    calls = []

    def swapped_mid_request(r):
        calls.append(r)
        if len(calls) == 1:              # the first attempt: the folder is replaced under it, then it fails
            crash.put_in_place(other, idx)
            raise duckdb.InvalidInputException("TProtocolException: Invalid data")
        return r.count("documents")

    assert service.on_one_version(swapped_mid_request) == 2
    assert len(calls) == 2 and served_version.get() == new_version

    def broken(r):
        calls.append(r)
        raise duckdb.InvalidInputException("a real failure")

    with pytest.raises(duckdb.InvalidInputException):
        service.on_one_version(broken)
    assert len(calls) == 3               # not retried: the index did not change
    service.close()


def test_the_queue_also_refuses_a_wait_longer_than_its_bound():
    """Regression (the soak on ~9,500 units): 24 waiting asks of ~16 s on one slot made the last
    one wait ~400 s before its turn; past the estimated wait bound the answer is 429 at once."""
    queue = ComputeQueue(slots=1, waiting=24, max_wait_s=5)
    queue.mean_s = 10.0
    release, holding = threading.Event(), threading.Event()

    def hold():
        with queue.turn():
            holding.set()
            release.wait(30)

    running = threading.Thread(target=hold)
    running.start()
    assert holding.wait(10)
    with pytest.raises(ServerBusy) as busy:      # one ahead of it: a wait of ~10 s > 5 s
        with queue.turn():
            pass
    assert busy.value.retry_after_s == 10
    release.set()
    running.join(10)


def test_a_pdf_in_a_subfolder_has_page_images(tmp_path, small_corpus, monkeypatch):
    """Regression (the soak: every page image of the ~9,500-unit index was a 404): the route took
    one path segment, so a document named by its path in a subfolder ("squad/x.pdf") never matched."""
    import shutil

    from starlette.testclient import TestClient

    from provrag.config import load_config
    from provrag.pipelines.index import run_index
    from provrag.serve.app import create_app
    from provrag.serve.service import IndexService

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    docs = tmp_path / "docs"
    (docs / "manuals" / "r").mkdir(parents=True)
    shutil.copyfile(small_corpus / "R-FAQ.pdf", docs / "manuals" / "r" / "R-FAQ.pdf")
    run_index(docs, tmp_path / "idx", load_config())
    service = IndexService(tmp_path / "idx", load_config())
    with TestClient(create_app(service)) as client:
        drawn = client.get("/v1/documents/manuals/r/R-FAQ.pdf/pages/1")
        assert drawn.status_code == 200 and drawn.content[:4] == b"\x89PNG"
        for bad in ("manuals/r/../../../etc/passwd", "manuals/r/R-FAQ.pdf/../../x", "/etc/passwd"):
            r = client.get(f"/v1/documents/{bad}/pages/1")
            assert r.status_code in (404, 422) and list(r.json()) == ["error"], (bad, r.status_code)
