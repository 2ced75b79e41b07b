"""The answer splitter (provrag/text/segment.py) that citations and verify share: real answers of
provrag's own global and basic search, whose sentences the two used to cut differently."""
from __future__ import annotations

from provrag.query.citations import parse_citations
from provrag.text.segment import answer_sentences, evidence_sentences
from provrag.verify.claims import split_claims

# an answer of `ask --method global` over three SQuAD articles (1973 oil crisis): a report's
# sentence with the "(relationship weight 3)." note its extractive summary carries
GLOBAL = ("Finding oil and developing new fields usually required five to ten years before significant "
          "production. [Data: Reports (40)] OPEC ministers had not developed institutional mechanisms to update "
          "prices in sync with changing market conditions, so their real incomes lagged. (relationship weight 3). "
          "[Data: Reports (0)]")
# answers of `ask --method basic` and `auto` over SQuAD articles: pysbd alone cuts after "U.S." and "J.I."
SCHLESINGER = 'Although no explicit plan was mentioned, a conversation between U.S. Secretary of Defense James Schlesinger and British Ambassador to the United States Lord Cromer revealed Schlesinger had told him that "it was no longer obvious to him that the U.S. could not use force. [Data: Sources (9)]'
GASQUET = 'Gasquet (1908) claimed that the Latin name atra mors (Black Death) for the 14th-century epidemic first appeared in modern times in 1631 in a book on Danish history by J.I. Pontanus: "Vulgo & ab effectu atram mortem vocatibant. ("Commonly and from its effects, they called it the black death"). [Data: Sources (19)]'


def _texts(text, spans):
    return [text[a:b] for a, b in spans]


def test_a_note_in_brackets_stays_with_the_sentence_it_qualifies():
    blocks = parse_citations(GLOBAL).blocks
    assert blocks[1].sentence.startswith("OPEC ministers had not developed")
    assert blocks[1].sentence.endswith("(relationship weight 3).")
    assert [c.text[:13] for c in split_claims(GLOBAL)] == ["Finding oil a", "OPEC minister"]


def test_initials_and_abbreviations_end_no_sentence():
    (claim,) = split_claims(SCHLESINGER)
    assert "U.S. Secretary of Defense James Schlesinger" in claim.text
    (claim,) = split_claims(GASQUET)
    assert "by J.I. Pontanus:" in claim.text
    # the citation parser reads the same sentences as verify does
    for answer in (SCHLESINGER, GASQUET):
        assert [b.sentence for b in parse_citations(answer).blocks] == [c.text for c in split_claims(answer)]


def test_a_paragraph_heading_and_list_items_are_sentences_of_their_own():
    text = "## Findings\nThe pump failed twice.\n- It was replaced in May.\n- The new one runs quieter."
    assert _texts(text, answer_sentences(text)) == ["## Findings", "The pump failed twice.",
                                                     "- It was replaced in May.", "- The new one runs quieter."]


def test_evidence_reads_wrapped_lines_and_page_breaks_as_spaces():
    text = "The team is led by Dr. Imogen\nVale, who signs every permit.\n\n2\n\nNo equipment is energised without one."
    spans = _texts(text, evidence_sentences(text))
    assert spans[0] == "The team is led by Dr. Imogen\nVale, who signs every permit."
    assert spans[-1] == "No equipment is energised without one."
