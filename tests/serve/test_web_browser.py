"""The web app end to end in real Chromium (Debian's `chromium`, driven over the DevTools pipe as
tests/audit/test_report_browser.py drives it: no extra package, no browser download), against
`provrag serve` started the way a user starts it.

One index of ../shared/corpora/small with a broken PDF of ../shared/corpora/bad and a Markdown file
that tries to inject markup beside it; one server on it; a second server on Microsoft GraphRAG's
own Dulce index (an answer is audited against the index it was written from); one browser for
the module. The tests run in order, as a person would use the app: ask and open a citation's
page, ask what the index cannot answer, reopen the stored trace, open a failed document's
reason, audit GraphRAG's answer, read /docs. Every request the page made is logged: none may
leave 127.0.0.1, and a control page first proves the log catches one that does.

PROVRAG_WEB_SCREENSHOTS=DIR keeps the screenshots (ask, evidence, audit) there: the README's
docs/web-*.png are made with PROVRAG_WEB_SCREENSHOTS=docs.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.audit.runs import INJECT
from tests.audit.test_report_browser import CHROMIUM, Browser, problems
from tests.serve.conftest import ServerProcess

pytestmark = [pytest.mark.usefixtures("shared"), pytest.mark.slow]

QUESTION = "How do I install add-on packages in R?"
UNANSWERABLE = "Who won the 2018 FIFA World Cup?"
WAIT_S = 90.0


class LoggingBrowser(Browser):
    """Browser that keeps every DevTools event of the module (load() clears its own list)."""

    def __init__(self, profile: Path):
        self.log_all: list[dict] = []
        super().__init__(profile)

    def _read(self, deadline: float) -> dict:
        m = super()._read(deadline)
        self.log_all.append(m)
        return m

    def wait(self, expr: str, timeout: float = WAIT_S):
        """Poll a JS expression until it is truthy; its value."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            v = self.eval(f"!!({expr})")
            if v:
                return v
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for: {expr}\npage: {self.eval('document.body.innerText')[:1500]}")

    def key(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key,
                      windowsVirtualKeyCode=code)

    def width(self, w: int, h: int = 1000) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=w, height=h, deviceScaleFactor=1,
                  mobile=False)

    def shot(self, name: str) -> bytes:
        png = base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        keep = os.environ.get("PROVRAG_WEB_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"web-{name}.png").write_bytes(png)
        return png


def left_loopback(events: list[dict]) -> list[str]:
    """Every request URL of the events whose host is not 127.0.0.1 (data: and blob: stay in the page)."""
    out = []
    for e in events:
        if e.get("method") == "Network.requestWillBeSent":
            url = e["params"]["request"]["url"]
            if not url.startswith(("data:", "blob:")) and urlsplit(url).hostname != "127.0.0.1":
                out.append(url)
    return out


def fill(browser, selector: str, value: str) -> None:
    browser.eval(f"(function(){{var el=document.querySelector({json.dumps(selector)});el.focus();"
                 f"el.value={json.dumps(value)};el.dispatchEvent(new Event('input',{{bubbles:true}}));}})()")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); the browser test needs it")
    b = LoggingBrowser(tmp_path_factory.mktemp("chromium") / "profile")
    b.width(1280)
    yield b
    b.close()


@pytest.fixture(scope="module")
def web_env(tmp_path_factory) -> dict:
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture(scope="module")
def app(tmp_path_factory, small_corpus, bad_corpus, web_env):
    """`provrag serve` on an index of the small corpus, a truncated PDF and evil.md."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    root = tmp_path_factory.mktemp("web")
    docs = root / "docs"
    docs.mkdir()
    for f in small_corpus.iterdir():
        if f.is_file():
            shutil.copy(f, docs / f.name)
    shutil.copy(bad_corpus / "truncated.pdf", docs / "truncated.pdf")
    (docs / "evil.md").write_text(INJECT, encoding="utf-8")
    run_index(docs, root / "idx", load_config())
    with ServerProcess(root / "idx", web_env) as running:
        yield running


@pytest.fixture(scope="module")
def dulce_app(dulce_v3, web_env):
    with ServerProcess(dulce_v3, web_env) as running:
        yield running


def test_control_page_proves_the_network_log_works(browser):
    browser.load("data:text/html,<img src='http://192.0.2.1/x.png'><img src='http://127.0.0.1:9/y.png'>")
    time.sleep(0.3)
    browser.eval("1")
    assert left_loopback(browser.events) == ["http://192.0.2.1/x.png"]


def test_ask_marks_each_sentence_and_a_chip_opens_the_page_highlighted(browser, app):
    start = len(browser.log_all)
    browser.load(app.url + "/")
    fill(browser, "#question", QUESTION)
    browser.eval("document.querySelector('#ask-form button[type=submit]').click()")
    browser.wait("document.querySelector('#answer')")
    assert browser.eval("location.pathname").startswith("/trace/")       # the URL names the stored trace
    browser.wait("document.querySelector('#answer .summary#verdicts')")  # the sentences' check came back
    verdicts = browser.eval("[...document.querySelectorAll('#answer .answer .claim')].map(c => c.className)")
    assert verdicts and all(v.split()[-1] in ("v-supported", "v-contradicted", "v-unsupported") for v in verdicts)
    marks = browser.eval("[...document.querySelectorAll('#answer .answer .verdict')].map(v => v.textContent)")
    assert marks and all(m.split(" ", 1)[1] in ("supported", "contradicted", "not supported") for m in marks)
    chips = browser.eval("[...document.querySelectorAll('#answer .answer a.chip')].map(c => c.textContent)")
    assert chips and all(re.search(r" pp?\. \d+", c) for c in chips)    # "R-FAQ p. 27": document and page
    first = [int(n) for n in re.findall(r"\d+", chips[0].rsplit(" p", 1)[1])]
    # the answer's sentences cite one unit: its chip is shown once, after the last of them
    assert browser.eval("document.querySelectorAll('#answer .answer .chips').length") == 1
    # the pages found next most relevant follow the sources, apart and marked as not cited
    assert "Further passages — not cited" in browser.eval("[...document.querySelectorAll('#answer h3')].map(h => h.textContent)")
    further = browser.eval("[...document.querySelectorAll('#answer ol.sources.further .via')].map(v => v.textContent)")
    assert further and all(v == "reached: further passage (not cited)" for v in further)
    # no score beside a passage no citation reached (its 0 would read as a judgement)
    assert browser.eval("document.querySelectorAll('#answer ol.sources.further .score').length") == 0
    cited = browser.eval("[...document.querySelectorAll('#answer ol.sources:not(.further) .via')].map(v => v.textContent)")
    assert cited and not any("not cited" in v for v in cited)
    browser.shot("ask")

    browser.eval("document.querySelector('#answer .answer a.chip').click()")
    browser.wait("document.querySelector('#evidence figure.page-image[data-found]')")
    assert browser.eval("document.querySelector('#evidence figure').dataset.found") == "true"
    browser.wait("document.querySelector('#evidence figure img').naturalWidth > 0")
    facts = browser.eval("document.querySelector('#evidence .facts').textContent")
    # the chip opens the page it names (the quote's page, within a unit's pages): document, page, of how many
    shown = int(re.search(r"page (\d+) of 52", facts).group(1))
    assert "R-FAQ.pdf" in facts and first[0] <= shown <= first[-1], (chips[0], facts)
    # the highlight is drawn into the image: its yellow fill, counted in the decoded pixels
    yellow = browser.eval("""(function(){var i=document.querySelector('#evidence figure img');
        var c=document.createElement('canvas');c.width=i.naturalWidth;c.height=i.naturalHeight;
        var x=c.getContext('2d');x.drawImage(i,0,0);var d=x.getImageData(0,0,c.width,c.height).data,n=0;
        for(var k=0;k<d.length;k+=4){if(d[k]>230&&d[k+1]>200&&d[k+2]<200)n++;}return n;})()""")
    assert yellow > 500
    browser.shot("evidence")
    browser.key("ArrowRight", 39)                                          # the next page, one key away
    browser.wait(f"document.querySelector('#evidence .facts').textContent.includes('page {shown + 1} of 52')")
    browser.wait("document.querySelector('#evidence figure img').naturalWidth > 0")
    browser.key("Escape", 27)
    browser.wait("document.querySelector('#evidence').hidden")
    assert left_loopback(browser.log_all[start:]) == []


def test_an_unanswerable_question_shows_the_closest_passages_not_an_answer(browser, app):
    browser.load(app.url + "/")
    fill(browser, "#question", UNANSWERABLE)
    browser.eval("document.querySelector('#ask-form button[type=submit]').click()")
    browser.wait("document.querySelector('#answer')")
    assert browser.eval("document.querySelector('#answer .abstained h2').textContent") == "No answer in the index"
    headings = browser.eval("[...document.querySelectorAll('#answer h2')].map(h => h.textContent)")
    assert "Closest passages — not an answer" in headings
    assert browser.eval("document.querySelectorAll('#answer ol.sources.closest > li').length") > 0
    assert browser.eval("document.querySelector('#answer [data-check-url]')") is None   # nothing to check
    assert "likely" in browser.eval("document.querySelector('#answer .confidence').textContent")


def test_history_reopens_a_stored_ask_with_why_each_source_was_retrieved(browser, app):
    browser.load(app.url + "/history")
    rows = browser.eval("[...document.querySelectorAll('table.history tbody tr')].map(r => r.innerText)")
    assert any(QUESTION in r for r in rows)
    browser.eval(f"[...document.querySelectorAll('table.history tbody tr')].find(r => r.innerText.includes("
                 f"{json.dumps(QUESTION)}) && r.innerText.includes('ask')).querySelector('a').click()")
    browser.wait("document.querySelector('#answer') && location.pathname.startsWith('/trace/')")
    # reopened with the verdicts of its earlier check, and why each passage was retrieved
    browser.wait("document.querySelector('#answer .summary#verdicts')")
    why = browser.eval("[...document.querySelectorAll('table.why-table tbody tr')].map(r => r.innerText)")
    assert why and "lexical" in why[0] and "bm25" in why[0]


def test_a_failed_document_says_why(browser, app):
    browser.load(app.url + "/index")
    failed = browser.eval("document.querySelector('section.failed').innerText")
    assert "truncated.pdf" in failed and "not a readable PDF" in failed
    browser.eval("document.querySelector('section.failed a').click()")
    browser.wait("document.querySelector('#reason')")
    assert "not a readable PDF" in browser.eval("document.querySelector('#reason').textContent")
    assert browser.eval("document.querySelector('dd.status-failed').textContent") == "failed"


def test_a_question_about_a_failed_document_says_why_no_wider_search_was_tried(browser, app):
    browser.load(app.url + "/")
    fill(browser, "#question", "What are the main topics covered in truncated?")
    browser.eval("document.querySelector('#ask-form button[type=submit]').click()")
    browser.wait("document.querySelector('#answer')")
    assert browser.eval("document.querySelector('#answer .abstained h2').textContent") == "No answer in the index"
    assert "truncated.pdf could not be read" in browser.eval("document.querySelector('#answer .abstained').innerText")
    stopped = browser.eval("document.querySelector('#answer .abstained .stopped').textContent")
    assert stopped.startswith("No wider search was tried: the document asked about could not be read"), stopped


def test_a_document_holding_script_is_shown_as_text(browser, app):
    browser.load(app.url + "/index")
    browser.eval("[...document.querySelectorAll('table.documents a')].find(a => a.textContent == 'evil').click()")
    browser.wait("document.querySelector('ol.units a')")
    browser.eval("document.querySelector('ol.units a').click()")
    browser.wait("document.querySelector('#evidence .para')")
    text = browser.eval("document.querySelector('#evidence .para').textContent")
    assert "<script>alert(1)</script>" in text and '"><img src=x onerror=alert(1)>' in text
    assert browser.eval("document.querySelectorAll('img[src=x], #evidence script, main script').length") == 0
    assert problems(browser.log_all)["dialogs"] == []


def test_a_graphrag_answer_is_audited_claim_by_claim(browser, dulce_app, dulce_v3):
    answer = json.loads((dulce_v3 / "answers" / "global_search_0.json").read_text())
    browser.load(dulce_app.url + "/audit")
    fill(browser, "#answer-text", answer["answer"])
    fill(browser, "#audit-question", answer["query"])
    browser.eval("document.querySelector('#audit-form button[type=submit]').click()")
    browser.wait("document.querySelector('#audit .summary')")
    cards = browser.eval("[...document.querySelectorAll('#audit article.card')].map(c => c.dataset.verdict)")
    n_claims = int(browser.eval("document.querySelector('#audit .summary').textContent").split()[0])
    assert len(cards) == n_claims > 3 and set(cards) <= {"supported", "contradicted", "unsupported"}
    # every claim placed in the answer carries its verdict in words; the report ids resolve to chips
    assert browser.eval("document.querySelectorAll('#audit .answer .verdict').length") >= n_claims - 1
    assert browser.eval("document.querySelectorAll('#audit .answer a.chip').length") > 0
    browser.eval("document.querySelector('#audit').scrollIntoView()")
    browser.shot("audit")
    # a GraphRAG unit has no page: its chip shows the unit's text with the quote marked
    browser.eval("document.querySelector('#audit .answer a.chip').click()")
    browser.wait("document.querySelector('#evidence .para')")
    assert browser.eval("document.querySelector('#evidence .pg').textContent").startswith("unit ")
    assert len(browser.eval("document.querySelector('#evidence .para mark').textContent")) > 20
    browser.key("Escape", 27)
    report = browser.call("Runtime.evaluate", session=True, awaitPromise=True, returnByValue=True, expression=(
        "fetch(document.querySelector('#audit a[download]').href).then(r => r.text().then("
        "t => [r.status, r.headers.get('content-disposition'), t.includes('provrag audit report')]))"))["result"]["value"]
    assert report[0] == 200 and report[1].startswith("attachment") and report[2] is True


def test_docs_are_served_from_the_wheel(browser, app):
    browser.load(app.url + "/docs")
    browser.wait("document.querySelectorAll('.swagger-ui .opblock').length >= 6")
    paths = browser.eval("[...document.querySelectorAll('.opblock-summary-path')].map(p => p.textContent)")
    assert "/v1/ask" in " ".join(paths) and not any(p.startswith("/trace") for p in paths)


def test_the_app_fits_400_pixels(browser, app):
    browser.width(400, 900)
    try:
        browser.load(app.url + "/history?kind=ask&text=" + QUESTION.replace(" ", "+").replace("?", "%3F"))
        browser.eval("document.querySelector('table.history a').click()")
        browser.wait("document.querySelector('#answer .summary#verdicts')")
        assert browser.eval("document.documentElement.scrollWidth") <= 400
        browser.load(app.url + "/index")
        assert browser.eval("document.documentElement.scrollWidth") <= 400
    finally:
        browser.width(1280)


def test_no_request_left_127_0_0_1_and_no_page_failed(browser):
    got = problems(browser.log_all)
    # every request of the module but the control page's own
    assert left_loopback(browser.log_all) == ["http://192.0.2.1/x.png"]
    assert got["dialogs"] == []
    failed = [(e["params"]["entry"].get("text"), e["params"]["entry"].get("url")) for e in browser.log_all
              if e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error"]
    control = ("http://192.0.2.1/x.png", "http://127.0.0.1:9/y.png")
    assert [f for f in failed if f[1] not in control] == []
    assert [e for e in got["console_errors"] if not e.startswith("Failed to load resource")] == []
