"""Splitting answers into claims: citations stripped but kept per claim, filler skipped, short
answers turned into claims with their question (real HaluEval questions from ../shared)."""
from __future__ import annotations

import json

import pytest

from provrag.verify.claims import (
    is_checkable,
    is_fragment,
    question_to_claim,
    split_claims,
)
from tests.shared_material import DULCE_ANSWERS


def test_blocks_stripped_refs_kept_per_claim():
    answer = ("## Overview\n\nAgent Mercer leads the team at Dulce Base [Data: Entities (0, 3); Relationships (12)]. "
              "The base lies under New Mexico in 1963 [Data: Sources (4, +more)].\n\nWhat happens next? "
              "I hope this helps.")
    claims = split_claims(answer)
    assert [c.text for c in claims] == ["Agent Mercer leads the team at Dulce Base.",
                                        "The base lies under New Mexico in 1963."]
    first, second = claims
    assert [(r.kind, r.ids) for r in first.refs] == [("Entities", [0, 3]), ("Relationships", [12])]
    assert [(r.kind, r.ids, r.more) for r in second.refs] == [("Sources", [4], True)]
    assert "[Data" not in first.text and "1963" in second.text  # numbers stay intact
    assert answer[slice(*second.span)].startswith("The base lies under New Mexico")


def test_uncited_claims_are_kept_and_filler_dropped():
    claims = split_claims("Here is a summary:\n\n- Lincoln signed the proclamation on January 1, 1863.\n"
                          "- Overall, that is all.\nLet me know if you need more.")
    assert [c.text for c in claims] == ["Lincoln signed the proclamation on January 1, 1863."]
    assert claims[0].refs == []
    assert not is_checkable("Key findings:")
    assert not is_checkable("Why does this matter?")
    assert is_checkable("R 4.1.3 was the last version to support 32-bit Windows.")


@pytest.mark.parametrize("bad", [None, "", "   ", 42, "[Data: Reports (1)]"])
def test_bad_input_never_crashes(bad):
    assert split_claims(bad) == [] or all(c.text for c in split_claims(bad))


def test_real_graphrag_answer_claims_carry_their_citations(dulce):
    ans = json.loads((dulce / "index-2025-v1" / "answers" / "local_search_0.json").read_text())["answer"]
    claims = split_claims(ans)
    assert len(claims) >= 5
    cited = [c for c in claims if c.refs]
    # the parser's blocks, sentence by sentence, are exactly what the claims carry as their own
    from provrag.query.citations import parse_citations

    blocks = parse_citations(ans).blocks
    assert sorted((r.kind, tuple(r.ids)) for c in cited if not c.from_paragraph for r in c.refs) == \
        sorted((r.kind, tuple(r.ids)) for b in blocks for r in b.refs)
    assert ("Entities", [0]) in [(r.kind, r.ids) for r in cited[0].refs]
    assert not any(c.text.startswith("#") or c.text.startswith("Overview") for c in claims)


def test_question_turns_short_answer_into_claim():
    text, focus = question_to_claim("Which company has its head office in what city?", "Delhi")
    assert "Delhi" in text and "head office" in text and "?" not in text and focus == "Delhi"
    text, focus = question_to_claim("Who was inducted into the Rock and Roll Hall of Fame, David Lee Roth or Cia Berg?",
                                    "David Lee Roth")
    assert text == "David Lee Roth was inducted into the Rock and Roll Hall of Fame"   # the other option is gone
    text, focus = question_to_claim("Did The Threepenny Opera and Macbeth have the same writers?", "no")
    assert text.startswith("It is not so that") and focus is None
    assert is_fragment("Saturday Night Live") and not is_fragment("John Lennon wrote \"A World Without Love\".")


def test_halueval_questions_all_give_claims_with_the_answer(eval_dev):
    cases = [json.loads(x) for x in (eval_dev / "halueval" / "cases.jsonl").read_text().splitlines()[:60]]
    for c in cases:
        claims = split_claims(c["right_answer"], c["question"])
        assert len(claims) == 1, c["id"]
        low = claims[0].text.lower()
        if c["right_answer"].lower() not in ("yes", "no"):
            assert c["right_answer"].lower().strip(".") in low, (c["id"], claims[0].text)
            assert claims[0].focus
        # a full-sentence answer is its own claim; its focus is what it adds to the question
        full = split_claims(c["hallucinated_answer"], c["question"])
        assert full and all(cl.text for cl in full)


def test_focus_keeps_numbers_whole():
    """With a question, a long sentence's focus is its words the question lacks; a number with
    separators stays one quantity (else the judge asks the evidence for "61" and "000")."""
    claims = split_claims("The plant supplies Varrow and Sedge End, about 61,000 people in all. "
                          "Its capacity is 48.5 megalitres a day.",
                          question="Who leads the Halcyon commissioning team?")
    assert "61,000" in claims[0].focus.split() and "000" not in claims[0].focus.split()
    assert "48.5" in claims[1].focus.split()


def _answer_paragraphs(answer: str) -> list[tuple[int, int]]:
    """Paragraphs as a reader sees them: blank lines between them, and a list item or heading
    on its own line starts one (written here again, not taken from the code under test)."""
    import re

    starts = [0] + [m.start() + 1 for m in re.finditer(r"\n(?=\s*\n|\s*(?:#|[-*+]\s|\d+\.\s))", answer)]
    return list(zip(starts, starts[1:] + [len(answer)]))


@pytest.mark.parametrize("name", DULCE_ANSWERS)
def test_a_citation_closing_a_paragraph_covers_its_uncited_sentences(dulce, name):
    """GraphRAG writes one `[Data: …]` block at the end of a paragraph for all of it: on the five
    real answers of the Dulce fixture, every claim in a paragraph that a block closes carries that
    block's refs (its own, if it has a block of its own), and no claim of a paragraph without one
    is given any."""
    from provrag.query.citations import parse_citations

    ans = json.loads((dulce / name).read_text())["answer"]
    blocks = parse_citations(ans).blocks
    claims = split_claims(ans)
    assert len(claims) >= 5
    for c in claims:
        _, p1 = next(p for p in _answer_paragraphs(ans) if p[0] <= c.span[0] < p[1])
        after = [b for b in blocks if c.span[1] <= b.span[0] < p1]
        own = [b for b in blocks if c.span[0] <= b.span[0] <= c.span[1] + 2]
        if own:
            assert not c.from_paragraph and c.refs
        elif after:
            assert c.from_paragraph and [(r.kind, r.ids) for r in c.refs] == [(r.kind, r.ids) for r in after[0].refs]
        else:
            assert not c.refs, c.text
    assert any(c.from_paragraph for c in claims)


@pytest.mark.parametrize("name", DULCE_ANSWERS)
def test_no_heading_list_number_or_lead_in_becomes_a_claim(dulce, name):
    ans = json.loads((dulce / name).read_text())["answer"]
    headings = {ln.lstrip("#").strip() for ln in ans.splitlines() if ln.startswith("#")}
    for c in split_claims(ans):
        assert c.text not in headings and not c.text.startswith(("#", "-", "*"))
        assert not c.text.lower().startswith(("in summary", "in conclusion")), c.text
        assert len([w for w in c.text.split() if any(ch.isalpha() for ch in w)]) >= 3, c.text


def test_section_numbers_titles_and_page_furniture_of_a_real_manual_are_no_claims(manuals_index):
    """An answer that quotes a manual's text as extracted (section numbers, section titles,
    running heads, page numbers — the /var/tmp section of the FHS) gives only its sentences."""
    from provrag.store.reader import open_index

    with open_index(manuals_index) as r:
        text = r.con.execute("SELECT text FROM text_units WHERE text LIKE '%5.15. /var/tmp : Temporary files%' "
                             "AND text LIKE '%must not be deleted when the system is booted%'").fetchall()[0][0]
        contents = [t for t, in r.con.execute("SELECT text FROM text_units WHERE text LIKE '%5.15. /var/tmp : "
                                              "Temporary files%' AND text LIKE '%.......%'").fetchall()]
    assert contents and all(split_claims(t) == [] for t in contents)   # the table of contents states nothing
    claims = [c.text for c in split_claims(text)]
    assert "Files and directories located in /var/tmp must not be deleted when the system is booted." in claims
    for c in claims:
        assert any(ch.isalpha() for ch in c.replace("Purpose", "")), c          # no "5.15.", "38"
        assert not c.startswith(("5.", "The /var Hierarchy", "/var/tmp : Temporary", "/var/tmp: Temporary")), c


def test_an_option_s_entry_is_checked_as_it_stands_not_fitted_into_the_question():
    """A one-sentence answer of a few words is read as a short answer to the question ("Paris" →
    "The capital is Paris"); an option's entry is the manual's own statement of what the option
    does. "-S sort by file size, largest first" became "S sort by file size, largest first does ls
    -S do", was judged contradicted, and ask removed its own right answer (ls(1), 2026-12-01)."""
    from provrag.verify.claims import split_claims

    claims = split_claims("-S sort by file size, largest first [Data: Sources (333)]", "What does ls -S do?")
    assert [c.text for c in claims] == ["S sort by file size, largest first"]   # the dash is markup to _clean
    assert [r.ids for r in claims[0].refs] == [[333]]
    claims = split_claims("\u2212y invert y coordinate in output. [Data: Sources (23)]", "What does the -y option of dot do?")
    assert [c.text for c in claims] == ["\u2212y invert y coordinate in output."]
    short = split_claims("Sort by size. [Data: Sources (1)]", "What does ls -S do?")
    assert [c.text for c in short] == ["Sort by size does ls -S do"]   # no entry: still read against its question
