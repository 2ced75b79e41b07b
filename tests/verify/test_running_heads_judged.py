"""The judge reads a unit under its pages' running heads (verify/evidence.judged_text): the
heads are out of the text since [load] running_heads, yet a page's subject stays where a
reader sees it. The spans and quotes it gives back are offsets into the unit's own text."""
from __future__ import annotations

import pytest

from provrag.config import load_config
from provrag.results import Verdict
from provrag.store.reader import open_index
from provrag.store.units import UnitRow, fetch_units
from provrag.verify.check import verify_answer
from provrag.verify.claims import Claim
from provrag.verify.evidence import judge_rows, judged_text
from provrag.verify.verdicts import Judge


def row(text: str, heads: list[str] | None, start: int = 2, end: int = 3) -> UnitRow:
    return UnitRow(id="u", human_readable_id=1, text=text, page_start=start, page_end=end, char_start=0,
                   char_end=len(text), document_id="d", title="Widget Manual", path="w.pdf", page_labels=None,
                   running_heads=heads)


class Reading:
    """An engine that keeps what it was given to read and names the span of the word "widgets"."""

    name, model = "offline", None

    def __init__(self):
        self.read: list[str] = []

    def judge(self, claim, texts, focus=None):
        self.read.extend(texts)
        return [Verdict("supported", 0.9, "read", (t.find("widgets"), t.find("widgets") + 7)) for t in texts]


def test_a_unit_is_judged_under_its_pages_heads_each_once_and_its_span_is_in_its_own_text():
    heads = ["Widget Manual", "Widget Manual · Chapter 2: Gears", "Widget Manual · Chapter 2: Gears", ""]
    unit = row("Gears turn the widgets.", heads, start=2, end=4)
    assert unit.running_head == "Widget Manual · Chapter 2: Gears"
    text, shift = judged_text(unit)
    assert text == "Widget Manual · Chapter 2: Gears\nGears turn the widgets." and shift == len(unit.running_head) + 1

    engine = Reading()
    v = judge_rows(Judge(engine), Claim("Gears turn widgets.", (0, 19)), {"u": unit})["u"]
    assert engine.read == [text]
    assert unit.text[v.span[0]:v.span[1]] == "widgets"


def test_a_unit_without_heads_is_read_as_it_is():
    for heads in (None, [], ["", "", ""]):
        unit = row("Gears turn the widgets.", heads)
        assert unit.running_head == "" and judged_text(unit) == ("Gears turn the widgets.", 0)
    engine = Reading()
    v = judge_rows(Judge(engine), Claim("Gears turn widgets.", (0, 19)), {"u": row("Gears turn the widgets.", None)})["u"]
    assert engine.read == ["Gears turn the widgets."] and v.span == (15, 22)


def test_a_span_inside_the_heads_alone_names_none_of_the_units_text():
    class HeadOnly(Reading):
        def judge(self, claim, texts, focus=None):
            return [Verdict("unsupported", 0.1, "read", (0, 6)) for _ in texts]

    v = judge_rows(Judge(HeadOnly()), Claim("Widgets.", (0, 8)), {"u": row("Gears turn.", ["", "Widget Manual"])})["u"]
    assert v.span == (0, 0)


@pytest.fixture(scope="module")
def r_faq_index(tmp_path_factory, small_corpus):
    """R-FAQ.pdf alone, indexed with [load] running_heads on."""
    from provrag.pipelines.index import run_index

    docs = tmp_path_factory.mktemp("r-faq") / "docs"
    docs.mkdir()
    (docs / "R-FAQ.pdf").write_bytes((small_corpus / "R-FAQ.pdf").read_bytes())
    out = docs.parent / "idx"
    run_index(docs, out, load_config(overrides={"load": {"running_heads": True}}))
    return out


def test_r_faqs_units_carry_their_chapters_head_and_its_quotes_are_page_text(r_faq_index):
    """R-FAQ.pdf prints "Chapter 2: R Basics 4" above section 2.3 (physical page 8): the page's
    text no longer holds it, its unit reads it as its running head, and verify's quote comes
    from the page's own text."""
    with open_index(r_faq_index) as r:
        uid, heads = r.con.execute(
            "SELECT t.id, d.running_heads FROM text_units t JOIN documents d ON d.id = t.document_id "
            "WHERE t.text LIKE '%R uses a ‘major.minor.patchlevel’ numbering scheme%' "
            "ORDER BY t.human_readable_id").fetchall()[0]
        unit = fetch_units(r, [uid])[uid]
        assert heads[7] == "Chapter 2: R Basics" and "Chapter 2: R Basics" in unit.running_head
        assert "Chapter 2: R Basics" not in unit.text
        res = verify_answer(r, "R uses a major.minor.patchlevel numbering scheme.", load_config())
    best = res.claims[0].evidence[0]
    assert res.claims[0].verdict == "supported" and best.page_start <= 8 <= best.page_end
    assert "patchlevel" in best.quote and "Chapter" not in best.quote


def test_an_index_made_without_them_has_none(small_index):
    """The default leaves the text as it was, and every document's running_heads null."""
    with open_index(small_index) as r:
        heads, = r.con.execute("SELECT count(*) FILTER (WHERE running_heads IS NOT NULL) FROM documents").fetchall()[0]
        text, = r.con.execute("SELECT text FROM documents WHERE path = 'R-FAQ.pdf'").fetchall()[0]
    assert heads == 0 and "Chapter 2: R Basics 4" in text


SYNOPSIS = "The single line synopsis of a Debian package should be kept brief, certainly under {} characters."


def test_policys_synopsis_rule_is_judged_under_its_running_head(tmp_path_factory, debian_manuals):
    """Debian Policy p. 26 says "…should be kept brief—certainly under 80 characters" of "the
    package"; "Debian" stands only in its running head ("Debian Policy Manual, Release 4.6.2.0").
    With the heads out of the text and not read, the claim was unsupported (80) and unsupported
    (40); read under the head, 80 holds and 40 is contradicted, by page 26's own words."""
    from provrag.pipelines.index import run_index

    docs = tmp_path_factory.mktemp("policy") / "docs"
    docs.mkdir()
    (docs / "policy.pdf").write_bytes((debian_manuals / "policy.pdf").read_bytes())
    out = docs.parent / "idx"
    run_index(docs, out, load_config(overrides={"load": {"running_heads": True}}))
    with open_index(out) as r:
        held = verify_answer(r, SYNOPSIS.format(80), load_config()).claims[0]
        wrong = verify_answer(r, SYNOPSIS.format(40), load_config()).claims[0]
    assert held.verdict == "supported" and wrong.verdict == "contradicted"
    for c in (held, wrong):
        assert c.evidence[0].page_start <= 26 <= c.evidence[0].page_end
        assert "80 characters" in c.evidence[0].quote and "Policy Manual" not in c.evidence[0].quote
