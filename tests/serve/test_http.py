"""`provrag serve` driven over real HTTP (httpx) as a subprocess on a free port, on a real index of
../shared/corpora/small: every response equals the CLI's `--json` for the same input, bad input
gets a 4xx with one line, 20 concurrent asks all succeed, the bearer token is enforced, and an
index rebuilt underneath the running server is served at the next request."""
from __future__ import annotations

import json
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.serve.conftest import ServerProcess, provrag_command

QUESTION = "How do I install add-on packages in R?"      # R-FAQ.pdf
QUESTIONS = [QUESTION, "What did Lincoln say about the emancipation proclamation?",
             "What is the asymptote package for LaTeX?", "What did Alice see through the looking-glass?",
             "What is the scope of the Debian developer's reference?"]
VOLATILE = {"trace_id", "created", "started", "ended", "ms", "total_ms", "trace_file", "stored_in"}


def cli_json(env: dict, *args: str):
    run = subprocess.run(provrag_command(*args, "--json"), env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    return json.loads(run.stdout)


def cli_text(env: dict, *args: str) -> str:
    run = subprocess.run(provrag_command(*args), env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    return run.stdout


def without(doc, keys=VOLATILE):
    """The document with its ids and times (durations: any "…_ms") left out, at every depth."""
    if isinstance(doc, dict):
        return {k: without(v, keys) for k, v in doc.items() if k not in keys and not k.endswith("_ms")}
    if isinstance(doc, list):
        return [without(v, keys) for v in doc]
    return doc


def post(server, path: str, body, **kw) -> httpx.Response:
    return httpx.post(server.url + path, json=body, headers=server.headers, timeout=kw.pop("timeout", 120), **kw)


def test_ask_resolve_verify_trace_round_trip_equals_the_cli(server, small_served_index, serve_env):
    idx = str(small_served_index)
    asked = post(server, "/v1/ask", {"question": QUESTION})
    assert asked.status_code == 200 and asked.headers["content-type"] == "application/json"
    ask = asked.json()
    assert ask["sources"] and not ask["abstained"]
    assert any(s["path"] == "R-FAQ.pdf" and isinstance(s["page_start"], int) for s in ask["sources"])
    cli_ask = cli_json(serve_env, "ask", QUESTION, "--index", idx)
    assert without(ask) == without(cli_ask)
    # the stored traces of the two runs: the same content apart from ids and times
    served_trace = httpx.get(f"{server.url}/v1/traces/{ask['trace_id']}", timeout=30).json()
    cli_trace = json.loads(cli_text(serve_env, "trace", cli_ask["trace_id"], "--index", idx, "--format", "json"))
    # whose each is differs, and says so (`--trace last` of the CLI never takes the server's)
    assert (served_trace.pop("via"), served_trace.pop("os_user")) == ("server", None)
    assert cli_trace.pop("via") == "cli" and cli_trace.pop("os_user")
    assert without(served_trace) == without(cli_trace)
    assert served_trace["answer"] == ask["answer"]

    resolved = post(server, "/v1/resolve", {"answer": ask["answer"], "top_k": 2})
    assert resolved.status_code == 200
    assert resolved.json() == cli_json(serve_env, "resolve", ask["answer"], "--index", idx, "--top", "2")
    assert resolved.json()["sources"] and not resolved.json()["unresolved"]
    by_trace = post(server, "/v1/resolve", {"trace_id": ask["trace_id"]}).json()
    assert by_trace == cli_json(serve_env, "resolve", "--trace", ask["trace_id"], "--index", idx)

    verified = post(server, "/v1/verify", {"trace_id": ask["trace_id"]})
    assert verified.status_code == 200
    verify = verified.json()
    assert verify["claims"] and {c["verdict"] for c in verify["claims"]} <= {"supported", "contradicted", "unsupported"}
    assert any(e.get("page_start") for c in verify["claims"] for e in c["evidence"])
    assert without(verify) == without(cli_json(serve_env, "verify", "--trace", ask["trace_id"], "--index", idx))
    by_answer = post(server, "/v1/verify", {"answer": ask["answer"], "question": QUESTION}).json()
    assert without(by_answer) == without(cli_json(serve_env, "verify", "--answer", ask["answer"],
                                                  "--question", QUESTION, "--index", idx))

    listed = httpx.get(server.url + "/v1/traces", params={"n": 50, "kind": "verify"}, timeout=30)
    assert listed.status_code == 200 and verify["trace_id"] in {t["trace_id"] for t in listed.json()}
    assert all(t["kind"] == "verify" for t in listed.json())
    assert without(listed.json()[:3]) == without(cli_json(serve_env, "log", "--index", idx, "-n", "3",
                                                          "--kind", "verify"))
    prov = httpx.get(f"{server.url}/v1/traces/{verify['trace_id']}", params={"format": "prov"}, timeout=30).json()
    assert "@context" in prov and prov == json.loads(
        cli_text(serve_env, "trace", verify["trace_id"], "--index", idx, "--format", "prov"))


@pytest.mark.parametrize(("path", "body", "status", "says"), [
    ("/v1/ask", {"questoin": "typo"}, 422, "questoin"),
    ("/v1/ask", {"question": ""}, 422, "question"),
    ("/v1/ask", {"question": "   "}, 422, "question"),
    ("/v1/ask", {"question": "\x1f\t"}, 422, "question"),
    ("/v1/verify", {"answer": " \n "}, 422, "answer"),
    ("/v1/ask", {"question": "x", "method": "psychic"}, 422, "method"),
    ("/v1/ask", {"question": "x" * 2001}, 413, "2000"),
    ("/v1/ask", [1, 2], 422, "JSON object"),
    ("/v1/ask", "not json{", 400, "not valid JSON"),
    ("/v1/resolve", {"answer": "x [Data: Sources (1)]", "top_k": 0}, 422, "top_k"),
    ("/v1/resolve", {"answer": "x [Data: Sources (1)]", "top_k": 51}, 422, "top_k"),
    ("/v1/resolve", {"top_k": 3}, 422, "exactly one"),
    ("/v1/resolve", {"trace_id": "0123456789ab"}, 404, "no trace"),
    ("/v1/verify", {"answer": "a", "trace_id": "abcd"}, 422, "exactly one"),
    ("/v1/verify", {"trace_id": "zz-not-hex"}, 404, "not a trace id"),
    ("/v1/verify", {"answer": "y" * 50_001}, 413, "50000"),
])
def test_bad_bodies_get_a_4xx_with_one_line(server, path, body, status, says):
    if isinstance(body, str):
        r = httpx.post(server.url + path, content=body, headers={"content-type": "application/json"}, timeout=30)
    else:
        r = post(server, path, body)
    assert r.status_code == status, r.text
    doc = r.json()
    assert list(doc) == ["error"] and "\n" not in doc["error"] and says in doc["error"].replace(",", "")
    assert "Traceback" not in server.output()


def test_gets_not_found_and_refused(server):
    for url, status in [("/v1/traces/ffffffffff", 404), ("/v1/traces/abc", 404), ("/nothing/here", 404),
                        ("/v1/traces?n=-1", 422), ("/v1/traces?kind=other", 422),
                        ("/v1/traces/last?format=xml", 422), ("/v1/documents/no-such-doc/pages/1", 404)]:
        r = httpx.get(server.url + url, timeout=30)
        assert r.status_code == status, (url, r.text)
        assert list(r.json()) == ["error"], url
    r = httpx.get(server.url + "/v1/ask", timeout=30)
    assert r.status_code == 405 and list(r.json()) == ["error"]
    big = httpx.post(server.url + "/v1/verify", content=b"{" + b" " * (1 << 20) + b"}",
                     headers={"content-type": "application/json"}, timeout=30)
    assert big.status_code == 413 and "body" in big.json()["error"]


def test_twenty_concurrent_asks_all_succeed(server):
    alone = {q: post(server, "/v1/ask", {"question": q}).json() for q in QUESTIONS}
    wanted = [QUESTIONS[i % len(QUESTIONS)] for i in range(20)]
    with ThreadPoolExecutor(20) as pool:
        replies = list(pool.map(lambda q: post(server, "/v1/ask", {"question": q}, timeout=300), wanted))
    assert [r.status_code for r in replies] == [200] * 20, [r.text[:200] for r in replies if r.status_code != 200]
    docs = [r.json() for r in replies]
    assert len({d["trace_id"] for d in docs}) == 20
    for q, d in zip(wanted, docs):   # each answer is the one the question gets alone
        assert d["question"] == q and d["answer"] == alone[q]["answer"]
        assert [s["text_unit_id"] for s in d["sources"]] == [s["text_unit_id"] for s in alone[q]["sources"]]
    stored = {t["trace_id"] for t in httpx.get(server.url + "/v1/traces", params={"n": 200}, timeout=30).json()}
    assert {d["trace_id"] for d in docs} <= stored


def test_health_and_openapi(server, small_served_index):
    health = httpx.get(server.url + "/v1/health", timeout=30).json()
    manifest = json.loads((small_served_index / "manifest.json").read_text())
    assert health["kind"] == "provrag" and health["index_version"] == manifest["index_version"]
    assert health["tables"]["text_units"] == manifest["counts"]["text_units"] > 0
    assert health["tables"]["documents"] == manifest["counts"]["documents"]
    assert health["engine"]["llm"] == "offline"
    spec = httpx.get(server.url + "/openapi.json", timeout=30).json()
    assert {"/v1/ask", "/v1/resolve", "/v1/verify", "/v1/traces", "/v1/traces/{trace_id}", "/v1/health",
            "/v1/documents/{document}/pages/{page}"} <= set(spec["paths"])
    ask_schema = spec["components"]["schemas"]["AskRequest"]
    assert ask_schema["additionalProperties"] is False and ask_schema["properties"]["question"]["maxLength"] == 2000
    assert httpx.get(server.url + "/docs", timeout=30).status_code == 200


def test_page_image_is_the_reports_rendering(server, small_corpus):
    from provrag.audit.pages import render_page

    ask = post(server, "/v1/ask", {"question": QUESTION}).json()
    src = next(s for s in ask["sources"] if s["path"] == "R-FAQ.pdf")
    r = httpx.get(f"{server.url}/v1/documents/R-FAQ/pages/{src['page_start']}", params={"quote": src["quote"]},
                  timeout=60)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content[:4] == b"\x89PNG"
    drawn = render_page(small_corpus / "R-FAQ.pdf", src["page_start"], src["quote"])
    assert r.content == drawn["png"] and drawn["found"] and r.headers["x-provrag-quote-found"] == "true"
    assert httpx.get(f"{server.url}/v1/documents/R-FAQ/pages/9999", timeout=30).status_code == 404
    not_pdf = httpx.get(f"{server.url}/v1/documents/sotu-1863-lincoln.txt/pages/1", timeout=30)
    assert not_pdf.status_code == 404 and "not a PDF" in not_pdf.json()["error"]


def test_bearer_token_is_enforced_everywhere(small_served_index, serve_env):
    env = dict(serve_env, PROVRAG_TEST_TOKEN="s3cret-token")
    with ServerProcess(small_served_index, env, "--token-env", "PROVRAG_TEST_TOKEN", token="s3cret-token") as srv:
        for path in ("/v1/health", "/docs", "/openapi.json", "/v1/traces", "/mcp"):
            r = httpx.get(srv.url + path, timeout=30)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", path
            assert list(r.json()) == ["error"]
        wrong = httpx.post(srv.url + "/v1/ask", json={"question": QUESTION},
                           headers={"Authorization": "Bearer s3cret-tokeN"}, timeout=30)
        assert wrong.status_code == 401
        assert httpx.get(srv.url + "/v1/health", headers=srv.headers, timeout=30).status_code == 200
        assert post(srv, "/v1/ask", {"question": QUESTION}).status_code == 200


def test_any_interface_is_warned_about(small_served_index, serve_env):
    with ServerProcess(small_served_index, serve_env, host="0.0.0.0") as srv:
        assert httpx.get(srv.url + "/v1/health", timeout=30).status_code == 200
    assert "warning" in srv.output() and "0.0.0.0" in srv.output()


def keep_asking(srv, answer: str, done: threading.Event) -> list[int]:
    """Resolve and health requests one after another until `done` is set: their statuses."""
    statuses = []
    while not done.is_set():
        statuses.append(post(srv, "/v1/resolve", {"answer": answer}).status_code)
        statuses.append(httpx.get(srv.url + "/v1/health", timeout=30).status_code)
    return statuses


def test_an_index_rebuilt_underneath_is_served_at_the_next_request(tmp_path, small_corpus, serve_env):
    docs, idx = tmp_path / "docs", tmp_path / "idx"
    docs.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sotu.txt")
    note = docs / "note.txt"
    note.write_text("The lighthouse keeper of Ardnamurchan is Morag Quillfeather. She lights the lamp at dusk.\n")
    cli_json(serve_env, "index", str(docs), "--out", str(idx))
    question = "Who is the lighthouse keeper of Ardnamurchan?"
    with ServerProcess(idx, serve_env) as srv:
        before = httpx.get(srv.url + "/v1/health", timeout=30).json()
        first = post(srv, "/v1/ask", {"question": question}).json()
        assert "Quillfeather" in first["answer"] and first["index_version"] == before["index_version"]
        note.write_text("The lighthouse keeper of Ardnamurchan is Ewan Brightwater since the spring. "
                        "He lights the lamp at dusk.\n")
        done = threading.Event()
        with ThreadPoolExecutor(1) as pool:   # requests keep coming while the index is rebuilt
            meanwhile = pool.submit(keep_asking, srv, first["answer"], done)
            try:
                rebuilt = cli_json(serve_env, "index", str(docs), "--out", str(idx))
            finally:
                done.set()
            statuses = meanwhile.result()
        assert len(statuses) > 5 and set(statuses) == {200}, statuses
        assert rebuilt["index_version"] != before["index_version"]
        after = httpx.get(srv.url + "/v1/health", timeout=30).json()
        assert after["index_version"] == rebuilt["index_version"] and after["run"] == before["run"] + 1
        assert after["reopened"] == before["reopened"] + 1
        second = post(srv, "/v1/ask", {"question": question}).json()
        assert "Brightwater" in second["answer"] and "Quillfeather" not in second["answer"]
        assert second["index_version"] == rebuilt["index_version"]
        # the old version's trace is still there: the rebuild kept the log
        assert httpx.get(f"{srv.url}/v1/traces/{first['trace_id']}", timeout=30).status_code == 200


def test_an_internal_error_is_one_line_and_a_500(small_served_index, serve_env, monkeypatch):
    from starlette.testclient import TestClient

    from provrag.config import load_config
    from provrag.serve.app import create_app
    from provrag.serve.service import IndexService

    monkeypatch.setenv("XDG_DATA_HOME", serve_env["XDG_DATA_HOME"])
    service = IndexService(small_served_index, load_config())

    def broken():
        raise RuntimeError("disk on fire\nsecond line of detail")

    monkeypatch.setattr(service, "health", broken)
    with TestClient(create_app(service), raise_server_exceptions=False) as client:
        r = client.get("/v1/health")
    assert r.status_code == 500 and r.json() == {"error": "internal error: RuntimeError: disk on fire"}
