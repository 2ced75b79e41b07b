"""The report in a real browser: headless Chromium (Debian's `chromium` package) opens the file,
and the test asserts it loaded with no console errors, no network requests and no script of a
document run, then takes a screenshot.

How: Chromium is driven over the DevTools protocol on `--remote-debugging-pipe` — messages are
NUL-terminated JSON on file descriptors 3 (commands in) and 4 (events out) of the browser — so
the test needs no websocket client, no port and no extra package. It listens to:
- Runtime.consoleAPICalled (error/assert), Runtime.exceptionThrown and Log.entryAdded (level
  error: CSP violations, failed loads) → console errors;
- Network.requestWillBeSent → every request; anything not file: or data: is a network request;
- Page.javascriptDialogOpening → an alert(), i.e. an injected script that ran.
A control page with a remote image, a console.error and an alert is loaded first, to prove the
listeners catch what they are meant to catch (a detector that sees nothing proves nothing).

Skipped, with the reason, where no Chromium binary is installed (CI installs Debian's chromium).
Set PROVRAG_SCREENSHOT=FILE to keep the screenshot. docs/report-screenshot.png is the README
example's report (`provrag report --trace last --index output`), shot with `chromium --headless
--window-size=1280,1500 --screenshot`.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests import components
from tests.audit.runs import INJECT, ask_and_verify, index_folder

pytestmark = pytest.mark.usefixtures("shared")

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")
                 if shutil.which(n)), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
         "--remote-debugging-pipe"]
TIMEOUT = 60.0


class Browser:
    """A minimal DevTools-protocol client over Chromium's pipe transport."""

    def __init__(self, user_data_dir: Path):
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def fds():  # in the child: our pipe ends become fds 3 and 4, whatever numbers they had
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.log = open(user_data_dir.parent / "chromium.log", "wb")
        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     preexec_fn=fds, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)
            if m.get("method") == "Page.javascriptDialogOpening":  # never block on an alert
                self.call("Page.handleJavaScriptDialog", session=True, accept=True)

    def load(self, url: str) -> list[dict]:
        """Navigate, wait for the load event and a quiet moment; the events of this page."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + TIMEOUT
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            m = self._read(deadline)
            self.events.append(m)
            if m.get("method") == "Page.javascriptDialogOpening":
                self.call("Page.handleJavaScriptDialog", session=True, accept=True)
        time.sleep(0.3)
        self.eval("1")  # flushes events that arrived meanwhile into self.events
        return list(self.events)

    def eval(self, expr: str):
        r = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        self.log.close()


def problems(events: list[dict]) -> dict[str, list[str]]:
    errors, requests, dialogs = [], [], []
    for e in events:
        m, p = e.get("method"), e.get("params") or {}
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args") or []))
        elif m == "Runtime.exceptionThrown":
            errors.append(str(p.get("exceptionDetails", {}).get("text")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append(p["entry"].get("text", ""))
        elif m == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if not url.startswith(("file:", "data:")):
                requests.append(url)
        elif m == "Page.javascriptDialogOpening":
            dialogs.append(p.get("message", ""))
    return {"console_errors": errors, "network_requests": requests, "dialogs": dialogs}


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    components.chromium()  # skipped without it; in CI a failure naming it
    b = Browser(tmp_path_factory.mktemp("chromium") / "profile")
    yield b
    b.close()


@pytest.fixture(scope="module")
def report_file(tmp_path_factory, small_corpus):
    """A real index (a PDF and a markup-injecting Markdown file), a real ask and verify, and the
    report written by the CLI's pipeline."""
    from provrag.pipelines.report import run_report
    from provrag.config import load_config

    root = tmp_path_factory.mktemp("browser")
    docs = root / "docs"
    docs.mkdir()
    shutil.copy(small_corpus / "asymptote-CAD.pdf", docs)
    (docs / "evil.md").write_text(INJECT, encoding="utf-8")
    idx = index_folder(docs, root / "idx")
    asked, traces, verified = ask_and_verify(idx, "How do I draw a CAD drawing with sCAD and which pen sizes exist?",
                                             method="basic")
    vj = root / "verify.json"
    vj.write_text(json.dumps(verified))   # as `provrag verify --json` prints it
    out = root / "report.html"
    res = run_report(idx, out, verify_json=vj, max_pages=4, cfg=load_config())
    assert res["page_images"] >= 1, "the sample answer should cite the PDF"
    return out, res


def test_control_page_proves_the_detectors_work(browser, tmp_path):
    page = tmp_path / "control.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/remote.png">'
                    "<script>console.error('boom'); alert('hi')</script></body></html>")
    got = problems(browser.load(page.as_uri()))
    assert any("boom" in e for e in got["console_errors"])
    assert any("127.0.0.1:9" in u for u in got["network_requests"])
    assert got["dialogs"] == ["hi"]


def test_report_loads_clean_in_chromium(browser, report_file, tmp_path):
    out, res = report_file
    got = problems(browser.load(out.as_uri()))
    assert got == {"console_errors": [], "network_requests": [], "dialogs": []}
    # the page is what the HTML says: cards, page images decoded, no element from a document
    assert browser.eval("document.querySelectorAll('section.card').length") == res["claims"]
    assert browser.eval("document.querySelectorAll('figure.page').length") == res["page_images"]
    assert browser.eval("document.querySelectorAll('img[src=x], body script:not(:last-of-type)').length") == 0
    assert browser.eval("document.querySelectorAll('script').length") == 1
    # the inline script ran (CSP hash accepted): the filter buttons are shown and filter
    assert browser.eval("document.querySelector('.filters').hidden") is False
    for v in ("supported", "contradicted", "unsupported"):
        shown = browser.eval(f"document.querySelector('.filters button[data-v={v}]').click();"
                             "[...document.querySelectorAll('section.card')].filter(c => c.offsetParent !== null)"
                             ".map(c => c.dataset.verdict)")
        assert set(shown) <= {v} and len(shown) == res[v]
    browser.eval("document.querySelector('.filters button[data-v=all]').click()")
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=1280, height=2000, deviceScaleFactor=1,
                 mobile=False)
    shot = base64.b64decode(browser.call("Page.captureScreenshot", session=True, format="png")["data"])
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000
    (tmp_path / "report.png").write_bytes(shot)
    if os.environ.get("PROVRAG_SCREENSHOT"):
        Path(os.environ["PROVRAG_SCREENSHOT"]).write_bytes(shot)
