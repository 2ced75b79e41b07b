"""The offline answerer's sentences on the team's sample corpus (data/): headings are cut off
the statement under them and never answer; irregular word forms still match."""
from __future__ import annotations

import pytest

from provrag.engines.offline.answer.selection import select
from provrag.text.sentences import is_heading, split_sentences
from provrag.text.words import terms_of


@pytest.fixture(scope="module")
def handbook_page2(sample_data) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(sample_data / "halcyon-commissioning-handbook.pdf"))
    return pdf[1].get_textpage().get_text_range().replace("\r\n", "\n")


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_heading_line_is_its_own_sentence(handbook_page2):
    sents = _sentences(handbook_page2)
    heading = [s for s in sents if s.strip() == "The project and the commissioning team"]
    assert heading and is_heading(heading[0])
    body = next(s for s in sents if "draws raw water" in s)
    assert body.startswith("The Halcyon Water Treatment Plant") and not is_heading(body)
    # wrapped lines of running text stay one sentence
    assert "Sedge End, about 61,000 people in all." in " ".join(body.split())


def test_markdown_heading_cut_from_the_sentence_before(sample_data):
    text = (sample_data / "halcyon-design-decisions.md").read_text()
    sents = _sentences(text)
    heads = [s for s in sents if s.lstrip().startswith("#")]
    assert heads and all(is_heading(h) and "\n" not in h.strip() for h in heads)


def test_contents_lines_are_headings(sample_data):
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(sample_data / "halcyon-commissioning-handbook.pdf"))
    page = pdf[0].get_textpage().get_text_range()
    toc = [ln for ln in page.splitlines() if "....." in ln]
    assert toc and all(is_heading(ln) for ln in toc)
    assert not is_heading("The design capacity is 48 megalitres per day (ML/d).")


def test_heading_never_outranks_the_statement(handbook_page2):
    records = [{"text": handbook_page2, "citation": "[Data: Sources (3)]", "score": 1.0}]
    picked = select("What does the Halcyon Water Treatment Plant supply?", records, 2)
    assert "draws raw water" in picked[0]["sentence"]
    assert all(not is_heading(p["sentence"]) for p in picked)


def test_irregular_forms_share_a_term():
    assert "lead" in terms_of("The team is led by Dr. Imogen Vale.") and "lead" in terms_of("Who leads the team?")
    assert terms_of("Who wrote it?")[-1] == terms_of("She writes.")[-1]
