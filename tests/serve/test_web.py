"""The web app over HTTP, against `provrag serve --token-env` as a user starts it: the token guards
the app, /docs and its static files as it guards /v1; a browser signs in through a form; text
from a document is escaped; the API's schema holds no page of the app; every input is bounded;
another site's form cannot post; two documents that share a title are told apart.

The index is small and real: a Markdown file that tries to inject markup, and two notes files of
the same name in two folders (so of the same title).
"""
from __future__ import annotations

import os
import re

import httpx
import pytest

from tests.audit.runs import INJECT
from tests.scans import needs_tesseract, scanned_pdf
from tests.serve.conftest import ServerProcess

TOKEN = "web-test-token-4f1c"
PUMP = ("The Halcyon pump station was commissioned in 2019 after two years of building.\n\n"
        "The Halcyon pump station supplies drinking water to the northern district of the city. The pump station "
        "has three pumps built by Ferro Works, each able to move 400 litres a second.\n")
ARCHIVE = ("The archive reading room opens at nine in the morning and closes at five.\n\n"
           "Visitors to the reading room must register at the front desk and may not bring ink pens.\n")


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("webdocs")
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / "a" / "notes.txt").write_text(PUMP, encoding="utf-8")
    (root / "b" / "notes.txt").write_text(ARCHIVE, encoding="utf-8")
    (root / "evil.md").write_text(INJECT, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def guarded(docs, tmp_path_factory):
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    idx = tmp_path_factory.mktemp("webidx") / "idx"
    run_index(docs, idx, load_config())
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path_factory.mktemp("xdg")), PROVRAG_WEB_TOKEN=TOKEN)
    with ServerProcess(idx, env, "--token-env", "PROVRAG_WEB_TOKEN", token=TOKEN) as running:
        yield running


def get(server, path: str, **kw) -> httpx.Response:
    kw.setdefault("headers", server.headers)
    return httpx.get(server.url + path, timeout=60, **kw)


def post(server, path: str, data: dict, **kw) -> httpx.Response:
    kw.setdefault("headers", server.headers)
    return httpx.post(server.url + path, data=data, timeout=120, **kw)


def test_without_the_token_the_app_docs_and_static_files_are_refused(guarded):
    for path in ("/", "/audit", "/history", "/index", "/docs", "/openapi.json", "/static/app.js",
                 "/static/swagger/swagger-ui-bundle.js", "/evidence?unit=0", "/v1/health"):
        r = httpx.get(guarded.url + path, timeout=30)
        assert r.status_code == 401, path
        assert r.headers["www-authenticate"] == "Bearer"
    assert httpx.post(guarded.url + "/ask", data={"question": "x"}, timeout=30).status_code == 401
    assert httpx.get(guarded.url + "/", headers={"Authorization": "Bearer wrong"}, timeout=30).status_code == 401
    for path in ("/", "/docs", "/static/app.js", "/openapi.json"):
        assert get(guarded, path).status_code == 200, path


def test_a_browser_signs_in_once_with_the_token(guarded):
    page = httpx.get(guarded.url + "/history", headers={"Accept": "text/html"}, timeout=30)
    assert page.status_code == 401 and 'action="/login"' in page.text and 'value="/history"' in page.text
    wrong = httpx.post(guarded.url + "/login", data={"token": "nope", "next": "/history"}, timeout=30)
    assert wrong.status_code == 401 and "provrag_session" not in wrong.headers.get("set-cookie", "")
    ok = httpx.post(guarded.url + "/login", data={"token": TOKEN, "next": "/history"}, timeout=30)
    assert ok.status_code == 303 and ok.headers["location"] == "/history"
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and TOKEN not in cookie
    session = httpx.Client(base_url=guarded.url, timeout=30)
    session.cookies.set("provrag_session", ok.cookies["provrag_session"])
    assert session.get("/history").status_code == 200 and session.get("/docs").status_code == 200
    assert session.get("/v1/health").status_code == 200
    # never sent elsewhere: a next that names another host goes home
    away = httpx.post(guarded.url + "/login", data={"token": TOKEN, "next": "//evil.example/x"}, timeout=30)
    assert away.headers["location"] == "/"


def test_text_from_a_document_is_escaped(guarded):
    asked = httpx.post(guarded.url + "/v1/ask", json={"question": "What did the committee approve in March?",
                                                      "method": "basic"}, headers=guarded.headers, timeout=120).json()
    unit = next(s for s in asked["sources"] if s["path"] == "evil.md")
    page = get(guarded, f"/evidence?unit={unit['text_unit_id']}&quote=committee+approved")
    assert page.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert(1)" not in page.text
    trace = get(guarded, f"/trace/{asked['trace_id']}")
    assert "<script>alert" not in trace.text and "<img src=x" not in trace.text
    assert re.findall(r"<script[^>]*>", trace.text) == ['<script src="/static/app.js" defer>']
    assert "script-src 'self'" in trace.headers["content-security-policy"]


def test_a_pasted_answer_is_escaped_and_judged(guarded):
    r = post(guarded, "/audit", {"answer": "The pump station supplies drinking water <script>alert(2)</script> to the "
                                           "northern district. [Data: Sources (0)]", "question": ""},
             follow_redirects=True)
    assert r.status_code == 200 and r.url.path.startswith("/trace/")
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in r.text and "<script>alert(2)" not in r.text
    assert re.search(r'<article class="card v-(supported|contradicted|unsupported)"', r.text)


def test_the_api_schema_holds_no_page_of_the_app(guarded):
    paths = get(guarded, "/openapi.json").json()["paths"]
    assert paths and all(p.startswith("/v1/") for p in paths)


def test_inputs_are_bounded_and_refused_as_pages(guarded):
    long_q = post(guarded, "/ask", {"question": "x" * 2001})
    assert long_q.status_code == 413 and "text/html" in long_q.headers["content-type"]
    assert get(guarded, "/evidence?unit=0&quote=" + "q" * 2001).status_code == 413
    assert get(guarded, "/evidence?unit=0&page=0").status_code == 422
    assert get(guarded, "/trace/" + "a" * 65).status_code in (413, 422)
    assert get(guarded, "/trace/no-such-trace").status_code == 404
    assert get(guarded, "/reports/99999").status_code == 404
    assert get(guarded, "/history?n=100000").status_code == 422


def test_a_form_of_another_site_cannot_post(guarded):
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        r = post(guarded, "/ask", {"question": "Who built the pumps?"}, headers=guarded.headers | headers)
        assert r.status_code == 403
    rebound = get(guarded, "/", headers=guarded.headers | {"Host": "evil.example:8507"})
    assert rebound.status_code == 403


def test_documents_sharing_a_title_are_named_by_their_file(guarded):
    asked = httpx.post(guarded.url + "/v1/ask", json={"question": "When does the archive reading room open?"},
                       headers=guarded.headers, timeout=120).json()
    assert asked["sources"][0]["document"] == "notes (b/notes.txt)"
    index = get(guarded, "/index").text
    assert "notes (a/notes.txt)" in index and "notes (b/notes.txt)" in index
    assert "evil</a>" in index     # a title no other document has stays as it is


@pytest.mark.slow
@needs_tesseract
def test_the_index_view_counts_the_pages_read_by_ocr(tmp_path, small_corpus):
    """A scanned page (a real R FAQ page as an image-only PDF) is listed as read by OCR."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index
    from provrag.serve import catalog
    from provrag.store.reader import open_index

    docs = tmp_path / "docs"
    docs.mkdir()
    scanned_pdf(small_corpus / "R-FAQ.pdf", [6], docs / "scan.pdf")
    (docs / "notes.txt").write_text(PUMP, encoding="utf-8")
    run_index(docs, tmp_path / "idx", load_config())
    with open_index(tmp_path / "idx") as reader:
        found = {d.path: d for d in catalog.overview(reader).documents}
    assert found["scan.pdf"].ocr_pages == [1] and found["scan.pdf"].n_pages == 1
    assert found["notes.txt"].ocr_pages == [] and found["notes.txt"].n_units >= 1
