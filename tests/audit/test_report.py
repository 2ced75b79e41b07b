"""`provrag report`: PDF pages with the quote's character boxes highlighted (audit/pages.py), and
the HTML audit report built from a real ask + verify over ../shared/corpora/small (audit/report.py
and its parts, pipelines/report.py, the CLI command)."""
from __future__ import annotations

import base64
import io
import json
import re
from html.parser import HTMLParser

import pytest
from PIL import Image

from provrag.audit.pages import PIECE, RenderError, normalise, render_page
from provrag.audit.report import build_report
from tests.audit.runs import QUESTION, rows

pytestmark = pytest.mark.usefixtures("shared")


# ---- HTML inspection --------------------------------------------------------------------------------

class _Tree(HTMLParser):
    """Collects the elements of interest with their attributes (stdlib parser: no new dependency)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.stack: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        a["_parents"] = [t for t, _ in self.stack]
        a["_parent_attrs"] = [x for _, x in self.stack]
        self.tags.append((tag, a))
        if tag not in ("img", "image", "rect", "use", "meta", "br", "input", "link"):
            self.stack.append((tag, a))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def find(self, tag, cls=None):
        return [a for t, a in self.tags if t == tag and (cls is None or cls in (a.get("class") or "").split())]


def _parse(html):
    t = _Tree()
    t.feed(html)
    return t


def _pdf_sources(claims):
    """(file, page, quote) of the PDF evidence listed unfolded (the first EVIDENCE_SHOWN of a claim)."""
    from provrag.audit.cards import EVIDENCE_SHOWN

    keys = set()
    for c in claims:
        seen = []
        for s in (c.get("evidence") or []) + (c.get("cited") or []):
            k = (s["text_unit_id"], s["quote"])
            if k not in seen:
                seen.append(k)
                if len(seen) <= EVIDENCE_SHOWN and s["path"].endswith(".pdf") and s.get("page_start"):
                    keys.add((s["path"], s["page_start"], s["quote"]))
    return keys


def _sql(query):
    return rows(query)[0]


# ---- page images (audit/pages.py) -----------------------------------------------------------------

def _unit_on_one_page(idx, path="R-FAQ.pdf", multi=False):
    op = "<>" if multi else "="
    return _sql(
        f"SELECT t.text, t.page_start, t.page_end FROM read_parquet('{idx}/text_units.parquet') t "
        f"JOIN read_parquet('{idx}/documents.parquet') d ON d.id = t.document_id "
        f"WHERE d.path = '{path}' AND t.page_start {op} t.page_end AND length(t.text) > 400 "
        f"ORDER BY t.human_readable_id LIMIT 1 OFFSET {0 if multi else 5}")


def _text_in_boxes(pdf, page_no, r):
    """The page text pdfium finds inside the highlight boxes (pixels → PDF points)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    page = doc[page_no - 1]
    pw, ph = page.get_size()
    sx, sy = pw / r["width"], ph / r["height"]
    tp = page.get_textpage()
    got = "".join(tp.get_text_bounded(left=x0 * sx, bottom=ph - y1 * sy, right=x1 * sx, top=ph - y0 * sy)
                  for x0, y0, x1, y1 in r["boxes"])
    doc.close()
    return got


def test_highlight_boxes_cover_the_quote_and_stay_in_the_image(small, small_corpus):
    idx = small[0]
    text, page, _ = _unit_on_one_page(idx)
    quote = text[150:400]
    r = render_page(small_corpus / "R-FAQ.pdf", page, quote)
    img = Image.open(io.BytesIO(r["png"]))
    assert img.size == (r["width"], r["height"]) and r["width"] <= 900
    assert r["found"] and r["match"] in ("search", "normalised") and r["coverage"] == 1.0
    assert 2 <= len(r["boxes"]) <= quote.count("\n") + 2       # one rectangle per line of the quote
    for x0, y0, x1, y1 in r["boxes"]:
        assert 0 <= x0 < x1 <= r["width"] and 0 <= y0 < y1 <= r["height"]
    # the text under the rectangles is the quote (plus at most the rest of its first/last line)
    under = normalise(_text_in_boxes(small_corpus / "R-FAQ.pdf", page, r))
    assert normalise(quote) in under and len(under) < len(normalise(quote)) * 1.6
    # the highlight is drawn into the PNG: the box centres are tinted yellow
    x0, y0, x1, y1 = r["boxes"][0]
    px = img.convert("RGB").getpixel((x0 + 2, (y0 + y1) // 2))
    assert px[2] < px[0] - 40, px


def test_quote_found_despite_line_breaks_and_hyphenation(small, small_corpus):
    text, page, _ = _unit_on_one_page(small[0])
    quote = text[100:300]
    mangled = re.sub(r"\s+", "   ", quote).replace("e", "e\u00ad", 1)  # spaces for line breaks, a soft hyphen
    r = render_page(small_corpus / "R-FAQ.pdf", page, mangled)
    assert r["found"] and r["match"] in ("normalised", "fuzzy")
    assert normalise(quote) in normalise(_text_in_boxes(small_corpus / "R-FAQ.pdf", page, r))
    # a few garbled characters (OCR-like) still find the whole quote
    garbled = quote[:60] + "#~#" + quote[63:140] + "%%" + quote[142:]
    g = render_page(small_corpus / "R-FAQ.pdf", page, garbled)
    assert g["found"] and g["match"] == "fuzzy" and g["coverage"] >= 0.9 and len(g["boxes"]) == len(r["boxes"])
    assert normalise(quote)[:-PIECE] in normalise(_text_in_boxes(small_corpus / "R-FAQ.pdf", page, g))


def test_quote_across_a_page_break_is_found_in_part(small, small_corpus):
    row = _unit_on_one_page(small[0], multi=True)
    text, first, last = row
    r1 = render_page(small_corpus / "R-FAQ.pdf", first, text)
    r2 = render_page(small_corpus / "R-FAQ.pdf", last, text)
    assert r1["found"] and r2["found"]
    assert 0 < r1["coverage"] < 1 and 0 < r2["coverage"] < 1
    assert r1["coverage"] + r2["coverage"] > 0.8


def test_quote_not_on_the_page_and_bad_input(small_corpus):
    r = render_page(small_corpus / "R-FAQ.pdf", 3, "zebras migrate across the Serengeti every spring")
    assert not r["found"] and r["boxes"] == [] and r["match"] is None
    assert Image.open(io.BytesIO(r["png"])).size == (r["width"], r["height"])
    for args in ((small_corpus / "nope.pdf", 1), (small_corpus / "R-FAQ.pdf", 0), (small_corpus / "R-FAQ.pdf", 10_000),
                 (b"not a pdf at all", 1), (small_corpus / "sotu-1863-lincoln.txt", 1)):
        with pytest.raises(RenderError):
            render_page(*args, "anything")


# ---- the report -------------------------------------------------------------------------------------

def test_report_from_real_ask_and_verify(small):
    idx, asked, traces, verified = small
    claims = verified["claims"]
    assert claims, "the sample answer should have claims"
    html = build_report(verified, question=QUESTION, answer=asked["answer"], trace=traces, index_dir=idx, max_pages=30)
    tree = _parse(html)
    cards = tree.find("section", "card")
    assert [c["data-verdict"] for c in cards] == [c["verdict"] for c in claims]
    assert [c["id"] for c in cards] == [f"claim-{i + 1}" for i in range(len(claims))]
    # each claim is also marked in the answer, coloured by verdict, linking to its card
    marks = tree.find("a", "claim")
    assert {m["href"] for m in marks} == {f"#claim-{i + 1}" for i in range(len(claims))}
    for m in marks:
        i = int(m["href"].split("-")[1]) - 1
        assert f"v-{claims[i]['verdict']}" in m["class"]
    # one page image per distinct PDF (file, page, quote) of the evidence, each a real PNG
    pdf_keys = _pdf_sources(claims)
    figures = tree.find("figure", "page")
    assert pdf_keys and len(figures) == len(pdf_keys)
    images = tree.find("image")
    assert len(images) == len(figures)
    for im in images:
        assert im["href"].startswith("data:image/png;base64,")
        png = Image.open(io.BytesIO(base64.b64decode(im["href"].split(",", 1)[1])))
        assert png.size == (int(im["width"]), int(im["height"]))
    # highlight rectangles: inside the image they are drawn over
    svgs = [a for a in tree.find("svg") if "data-width" in a]
    assert svgs
    rects = tree.find("rect", "hl")
    assert rects and sum(f["data-found"] == "true" for f in figures) >= len(figures) / 2
    for r in rects:
        svg = next(p for p in reversed(r["_parent_attrs"]) if "data-width" in p)
        w, h = int(svg["data-width"]), int(svg["data-height"])
        x, y, rw, rh = (int(r[k]) for k in ("x", "y", "width", "height"))
        assert 0 <= x and 0 <= y and rw > 0 and rh > 0 and x + rw <= w and y + rh <= h
    # the timelines: every stage of the ask and of the verify run
    for t in traces:
        assert f'id="trace-{t["trace_id"]}"' in html
        for s in t["stages"]:
            assert f'{s["label"]} — ' in html
    # self-contained: nothing fetched from anywhere
    csp = [m["content"] for m in tree.find("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0].startswith("default-src 'none'; img-src data:;")
    for tag, a in tree.tags:
        for k in ("src", "href"):
            v = a.get(k) if isinstance(a.get(k), str) else ""
            assert not re.match(r"^\s*(https?:|//|ftp:)", v), (tag, v[:80])
    assert "@import" not in html and "url(" not in html


def test_max_pages_bounds_the_images(small):
    idx, asked, traces, verified = small
    one = build_report(verified, question=QUESTION, answer=asked["answer"], index_dir=idx, max_pages=1)
    none = build_report(verified, question=QUESTION, answer=asked["answer"], index_dir=idx, max_pages=0)
    assert one.count('<figure class="page"') == 1
    assert none.count('<figure class="page"') == 0 and "--max-pages budget of 0" in none
    assert len(none) < len(one)


def test_injected_markup_renders_as_text(injected):
    docs, idx, asked, traces, verified = injected
    # the answer as shown, plus the index's own text of evil.md (ask may answer one part of the
    # two-part question): both injections reach the report through real text
    (evil,) = _sql(f"SELECT string_agg(t.text, ' ') FROM read_parquet('{idx}/text_units.parquet') t JOIN "
                    f"read_parquet('{idx}/documents.parquet') d ON d.id = t.document_id WHERE d.path = 'evil.md'")
    assert "<script>alert(1)</script>" in evil
    html = build_report(verified, question="<b>bold?</b>", answer=f"{asked['answer']} {evil}", trace=traces,
                        index_dir=idx)
    assert "<script>alert(1)" not in html and "<img src=x" not in html and "<b>bold?" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html          # shown, as text
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("<script") == 1                               # ours, the filter buttons
    assert len(_parse(html).find("img")) == 0


def test_moved_or_changed_documents_are_reported_not_drawn(injected, tmp_path):
    docs, idx, asked, traces, verified = injected
    # evidence on the PDF, taken from the index itself (the sample answer may not cite the PDF)
    text, page = _sql(
        f"SELECT t.text, t.page_start FROM read_parquet('{idx}/text_units.parquet') t JOIN "
        f"read_parquet('{idx}/documents.parquet') d ON d.id = t.document_id WHERE d.path = 'asymptote-CAD.pdf' "
        f"ORDER BY t.human_readable_id LIMIT 1")
    src = {"document": "asymptote-CAD", "path": "asymptote-CAD.pdf", "page_start": page, "page_end": page,
           "quote": text[:120], "text_unit_id": None, "via": "retrieval", "score": 0.9}
    vj = {"claims": [{"text": "CAD draws things.", "verdict": "supported", "evidence": [src], "cited": []}],
          "summary": {}}
    ok = build_report(vj, index_dir=idx)
    assert ok.count('<figure class="page"') == 1
    changed = tmp_path / "changed"
    changed.mkdir()
    (changed / "asymptote-CAD.pdf").write_bytes((docs / "asymptote-CAD.pdf").read_bytes() + b"\n%changed\n")
    html = build_report(vj, index_dir=idx, docs_root=changed)
    assert html.count('<figure class="page"') == 0 and "changed since indexing (sha256 differs)" in html
    html = build_report(vj, index_dir=idx, docs_root=tmp_path / "empty")
    assert html.count('<figure class="page"') == 0 and "moved or deleted since indexing" in html


def test_answer_reconstructed_from_claims_and_junk_tolerated(small_corpus):
    vj = {"claims": [{"text": "First claim.", "verdict": "supported"}, {"text": "Second <i>claim</i>.", "verdict": "weird"},
                     "not a dict", {"verdict": None}], "summary": {"citation_recall": "n/a"}}
    html = build_report(vj)
    tree = _parse(html)
    assert [c["data-verdict"] for c in tree.find("section", "card")] == ["supported", "unsupported", "unsupported"]
    assert "Second &lt;i&gt;claim&lt;/i&gt;." in html and len(tree.find("a", "claim")) == 2
    assert build_report({}).count('class="card') == 0
    # hand-edited or foreign JSON: wrong types everywhere still give a report, never a traceback
    junk = {"claims": [{"text": 12, "verdict": ["x"], "score": "high", "span": "0:5", "citations": "Sources 1",
                        "evidence": [{"path": "R-FAQ.pdf", "page_start": 2, "page_end": "x", "quote": 42,
                                      "text_unit_id": [1], "label": 7, "score": "?"},
                                     {"path": "../../etc/passwd.pdf", "page_start": 1, "quote": "root"},
                                     {"path": ["a"], "page_start": True}, None, "text"],
                        "cited": {"not": "a list"}}],
            "summary": ["no"], "answer": 5}
    trace = {"trace_id": 7, "stages": [{"name": "x", "ms": "slow", "started": "yesterday", "data": [1, {"a": None}]},
                                       "junk"], "total_ms": None, "usage": "none"}
    html = build_report(junk, trace=[trace, "junk"], docs_root=small_corpus, question=["q"])
    assert html.count('<section class="card') == 1 and "not a path inside the documents folder" in html
    assert build_report("not a dict", trace="nor this").startswith("<!DOCTYPE html>")


# ---- pipelines/report.py and the CLI ------------------------------------------------------------

def _cli(*args):
    from typer.testing import CliRunner

    from provrag import cli

    return CliRunner().invoke(cli.app, list(args))


def test_cli_writes_the_report_from_a_verify_json(small, tmp_path):
    idx, asked, traces, verified = small
    vj = tmp_path / "v.json"
    vj.write_text(json.dumps(verified))   # exactly what `provrag verify --json` prints: no answer text
    out = tmp_path / "report.html"
    r = _cli("report", "--verify-json", str(vj), "--index", str(idx), "--out", str(out), "--max-pages", "2", "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    html = out.read_text()
    assert res["claims"] == len(verified["claims"]) and res["page_images"] == html.count('<figure class="page"') <= 2
    # the verify trace leads back to the ask trace: both timelines, and the answer text they hold
    assert res["traces"] == [t["trace_id"] for t in traces] and "Query trace" in html and "Verify run" in html
    assert QUESTION in html and 'class="unplaced"' not in html


@pytest.mark.parametrize("which", ["ask", "verify"])
def test_cli_report_from_a_stored_trace(small, tmp_path, which):
    """An ask trace is verified now (a new verify trace); a verify trace's stored result is reused."""
    idx, asked, traces, verified = small
    ask_t, verify_t = traces
    out = tmp_path / "t.html"
    tid = (ask_t if which == "ask" else verify_t)["trace_id"]
    r = _cli("report", "--trace", tid, "--index", str(idx), "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    res, html = json.loads(r.stdout), out.read_text()
    assert res["claims"] == len(verified["claims"]) == html.count('<section class="card')
    assert [c["verdict"] for c in verified["claims"]] == re.findall(r'<section class="card v-\w+" id="claim-\d+" data-verdict="(\w+)"', html)
    assert res["traces"][0] == ask_t["trace_id"] and len(res["traces"]) == 2
    assert (res["traces"][1] == verify_t["trace_id"]) == (which == "verify")


@pytest.mark.parametrize("case", ["neither", "both", "no-index", "bad-json", "not-verify", "bad-trace", "pages", "out-dir"])
def test_cli_bad_arguments_exit_2_with_one_line(small, tmp_path, case):
    idx = small[0]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"answer": "x"}))
    good = tmp_path / "v.json"
    good.write_text(json.dumps(small[3]))
    base = ["report", "--index", str(idx), "--out", str(tmp_path / "r.html")]
    args = {"neither": base, "both": base + ["--trace", "abcd", "--verify-json", str(good)],
            "no-index": ["report", "--index", str(tmp_path / "nope"), "--out", str(tmp_path / "r.html"), "-f", str(good)],
            "bad-json": base + ["-f", str(bad)], "not-verify": base + ["-f", str(other)],
            "bad-trace": base + ["--trace", "not-an-id"], "pages": base + ["-f", str(good), "--max-pages", "-3"],
            "out-dir": ["report", "--index", str(idx), "--out", str(tmp_path), "-f", str(good)]}[case]
    r = _cli(*args)
    assert r.exit_code == 2
    assert "error:" in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output
    assert not (tmp_path / "r.html").exists()


def test_uncited_claim_is_not_said_to_miss_its_citations():
    """verify marks an uncited claim cited_supports=False (ALCE recall); the card must say it
    cites nothing, not that its citations fail."""
    vj = {"claims": [{"text": "Uncited.", "verdict": "supported", "cited_supports": False, "citations": []},
                     {"text": "Cited wrong.", "verdict": "contradicted", "cited_supports": False,
                      "citations": [{"kind": "Sources", "id": "3", "supports": False}]},
                     {"text": "Cited right.", "verdict": "supported", "cited_supports": True,
                      "citations": [{"kind": "Sources", "id": "4", "supports": True}]}]}
    cards = build_report(vj).split('<section class="card')[1:]
    assert "no citation" in cards[0] and "do not hold" not in cards[0]
    assert "its citations do not hold the evidence" in cards[1]
    assert "its citations hold the evidence" in cards[2]
