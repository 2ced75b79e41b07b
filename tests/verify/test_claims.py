"""Splitting answers into claims: citations stripped but kept per claim, filler skipped, short
answers turned into claims with their question (real HaluEval questions from ../shared)."""
from __future__ import annotations

import json

import pytest

from provrag.verify.claims import is_checkable, is_fragment, question_to_claim, split_claims


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
    # the parser's blocks, sentence by sentence, are exactly what the claims carry
    from provrag.query.citations import parse_citations

    blocks = parse_citations(ans).blocks
    assert sorted((r.kind, tuple(r.ids)) for c in cited for r in c.refs) == \
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
