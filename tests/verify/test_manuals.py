"""`verify` on the ten real Debian manuals a new user tried provrag on: the judge reads the
span that states the claim (not its neighbour), a question chooses the span but never the
verdict, the subject of a deed matters (S, not R), and a claim's own citation is judged first."""
from __future__ import annotations

import pytest

from provrag.config import load_config
from provrag.store.reader import open_index
from provrag.verify.check import verify_answer

pytestmark = pytest.mark.usefixtures("shared")
CFG = load_config()
SYNOPSIS = "The single line synopsis of a Debian package should be kept brief, certainly under {} characters."


def _unit(index, needle: str) -> tuple[int, str, int]:
    """(human-readable id, document title, physical page) of the unit of the index that holds
    `needle` (line wraps read as spaces)."""
    with open_index(index) as r:
        rows = r.con.execute("SELECT t.human_readable_id, d.title, t.page_start FROM text_units t "
                             "JOIN documents d ON d.id = t.document_id WHERE regexp_replace(t.text, '\\s+', ' ', 'g') LIKE ? "
                             "ORDER BY t.human_readable_id", [f"%{needle}%"]).fetchall()
    assert rows, needle
    return int(rows[0][0]), rows[0][1], int(rows[0][2])


def _check(index, answer: str, question: str | None = None):
    with open_index(index) as r:
        res = verify_answer(r, answer, CFG, question=question)
    assert len(res.claims) == 1, [c.text for c in res.claims]
    return res.claims[0]


def test_a_negation_in_the_next_sentence_does_not_flip_the_claim(manuals_index):
    """Policy p. 26: "…should be kept brief—certainly under 80 characters. Do not include the
    package name…": the claim is the first sentence's; the second's "not" is about another thing."""
    _, doc, page = _unit(manuals_index, "certainly under 80 characters")
    c = _check(manuals_index, SYNOPSIS.format(80))
    assert c.verdict == "supported", c.evidence[:2]
    best = c.evidence[0]
    assert best.label == "supported" and best.document == doc and best.page_start <= page <= best.page_end
    assert "negation" not in best.reason and "under 80 characters" in best.quote
    # the same sentence negated is contradicted by that page: the neighbour's "not" does not rescue it
    negated = _check(manuals_index, "The single line synopsis of a Debian package should not be kept brief.")
    assert negated.verdict == "contradicted" and negated.evidence[0].page_start == page


@pytest.mark.parametrize("question", [None, "How long may the synopsis be?"])
def test_a_question_chooses_the_span_never_the_verdict(manuals_index, question):
    """With or without the question, 80 characters holds and 40 does not; the short answers the
    question makes checkable go the same way."""
    assert _check(manuals_index, SYNOPSIS.format(80), question).verdict == "supported"
    assert _check(manuals_index, SYNOPSIS.format(40), question).verdict == "contradicted"
    if question:
        short80 = _check(manuals_index, "Under 80 characters.", question)
        short40 = _check(manuals_index, "Under 40 characters.", question)
        assert short80.verdict == "supported" and "80" in short80.evidence[0].quote
        assert short40.verdict != "supported", short40.evidence[:2]


def test_the_subject_of_the_deed_matters(manuals_index):
    """R-intro: "R can be regarded as an implementation of the S language which was developed at
    Bell Laboratories by Rick Becker, John Chambers and Allan Wilks": said of S, not of R."""
    _, doc, page = _unit(manuals_index, "language which was developed at Bell Laboratories")
    deed = "was created at Bell Laboratories by Rick Becker, John Chambers and Allan Wilks."
    r = _check(manuals_index, f"R {deed}")
    assert r.verdict != "supported", r.evidence[:2]
    on_page = [e for e in r.evidence if e.document == doc and e.page_start <= page <= e.page_end]
    assert on_page and "another subject" in on_page[0].reason
    s = _check(manuals_index, f"S {deed}")
    assert s.verdict == "supported" and s.evidence[0].document == doc
    assert s.evidence[0].page_start <= page <= s.evidence[0].page_end


def test_the_cited_section_is_judged_first(manuals_index):
    """FHS 3.0: /var/tmp must survive a reboot, /tmp should not. A claim citing the /var/tmp
    section is judged by that section's text, never supported by the /tmp sentence."""
    var_tmp, doc, page = _unit(manuals_index, "located in /var/tmp must not be deleted when the system is booted")
    _, _, tmp_page = _unit(manuals_index, "located in /tmp be deleted whenever the system is booted")
    true = _check(manuals_index, "Files and directories located in /var/tmp must not be deleted when the system "
                                 f"is booted [Data: Sources ({var_tmp})].")
    assert true.verdict == "supported" and true.cited_supports
    assert true.cited[0].page_start == page and true.cited[0].document == doc
    false = _check(manuals_index, "Files and directories located in /var/tmp should be deleted whenever the "
                                  f"system is booted [Data: Sources ({var_tmp})].")
    assert false.verdict == "contradicted" and not false.cited_supports
    assert false.cited[0].label == "contradicted" and false.cited[0].page_start == page
    # the /tmp sentence that says it of /tmp is found, and supports nothing here
    tmp = [e for e in false.evidence if e.document == doc and e.page_start == tmp_page]
    assert tmp and all(e.label != "supported" for e in tmp)
    assert all(e.label != "supported" for e in false.evidence)
