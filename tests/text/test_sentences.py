"""Quotes and sentence spans keep abbreviations inside the sentence (real text of data/)."""
from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from provrag.text.sentences import split_sentences
from provrag.text.similarity import best_span

PAGE2 = pdfium.PdfDocument(str(Path(__file__).resolve().parents[2] / "data" /
                               "halcyon-commissioning-handbook.pdf"))[1].get_textpage().get_text_range()


def test_quote_does_not_start_after_an_abbreviation():
    quote, start, end, score = best_span("The commissioning team is led by Dr. Imogen Vale", PAGE2)
    assert quote.startswith("The commissioning team is led by Dr. Imogen Vale") and score > 0.9
    assert PAGE2[start:end] == quote


def test_split_sentences_keeps_dr_with_its_name():
    sents = [" ".join(PAGE2[a:b].split()) for a, b in split_sentences(PAGE2)]
    assert any(s.startswith("The commissioning team is led by Dr. Imogen Vale") for s in sents)
    assert not any(s.startswith("Imogen Vale") for s in sents)


# the foot of page 2 and the head of page 3 of the SQuAD "Southern California" PDF, as its
# text units hold them: the sentence runs on past the page number
PAGE_BREAK = ("or territorial status separate from Northern California. The last attempt, the Pico\n"
              "Page 3\nAct of 1859, was passed by the California State Legislature and signed by the\n"
              "State governor John B. Weller. It was approved overwhelmingly by nearly 75%")


def test_a_sentence_runs_on_past_a_page_number():
    sents = [" ".join(PAGE_BREAK[a:b].split()) for a, b in split_sentences(PAGE_BREAK)]
    assert sents[1] == ("The last attempt, the Pico Page 3 Act of 1859, was passed by the California State "
                        "Legislature and signed by the State governor John B. Weller.")
    assert sents[2].startswith("It was approved")


def test_a_heading_before_a_blank_line_still_ends_a_sentence():
    text = ("A long first line of running text that ends here with a full stop.\nShort heading\n\n"
            "The next paragraph starts here and runs on to its end.")
    sents = [text[a:b] for a, b in split_sentences(text)]
    assert sents == ["A long first line of running text that ends here with a full stop.", "Short heading",
                     "The next paragraph starts here and runs on to its end."]


def test_a_quote_crosses_a_page_break_when_the_sentence_does():
    text = ("There are fifteen fraternities and seven sororities at the University. Four of\n\nPage 8\n"
            "the sororities are members of the National Panhellenic Conference, and ten of the fraternities form the "
            "Interfraternity Council.")
    quote, start, end, _ = best_span("Four of the sororities are members of the National Panhellenic Conference", text)
    assert quote.startswith("Four of") and "National Panhellenic Conference" in quote and text[start:end] == quote


def test_a_quote_never_opens_on_a_page_number():
    text = ("Page 8\nthe sororities are members of the National Panhellenic Conference, and ten of the "
            "fraternities form the Interfraternity Council.")
    quote, start, _, _ = best_span("the sororities are members of the National Panhellenic Conference", text)
    assert quote.startswith("the sororities") and start == text.index("the sororities")


def test_a_page_number_inside_a_quote_across_pages_is_shown_as_a_break():
    from provrag.text.sentences import display_quote

    quote = "Four of\n\nPage 8\nthe sororities are members"
    assert display_quote(quote, across_pages=True) == "Four of ⟨page break⟩ the sororities are members"
    # on one page a number line is content (a table cell, a figure), and stays as written
    assert display_quote("Totals\n12\nunits in all", across_pages=False) == "Totals 12 units in all"


def test_paragraphs_of_real_pdfs_match_the_articles_paragraphs():
    """PDF text marks no paragraphs; the reflow rule finds them. Over the 24 SQuAD dev PDFs
    (983 Wikipedia paragraphs, 145 of them running across a page break) the count found and
    the count of paragraphs found across a page break are both within 5 % of the truth."""
    import bisect
    import json

    from provrag.index.pdf import parse_pdf
    from provrag.text.sentences import paragraph_spans
    from tests.shared_material import SQUAD

    truth = found = truth_across = found_across = 0
    for line in (SQUAD / "documents.jsonl").read_text().splitlines():
        doc = json.loads(line)
        pages = parse_pdf(SQUAD / "corpus" / doc["document"], "pypdfium2")["pages"]
        text = "\n\n".join(pages)
        starts = [sum(len(p) + 2 for p in pages[:i]) for i in range(len(pages))]
        spans = [(a, b) for a, b in paragraph_spans(text) if len(text[a:b].split()) > 8]  # not the title
        found += len(spans)
        found_across += sum(bisect.bisect_right(starts, a) != bisect.bisect_right(starts, b - 1) for a, b in spans)
        truth += doc["num_paragraphs"]
        truth_across += sum(len(p["pages"]) > 1 for p in doc["paragraph_pages"])
    assert truth == 983 and truth_across == 145
    assert abs(found - truth) <= 0.05 * truth and abs(found_across - truth_across) <= 0.05 * truth_across


def test_a_paragraph_runs_on_across_a_page_number_and_a_heading_stands_alone():
    from provrag.text.sentences import paragraph_spans

    wrapped = ("History\nThe league announced on October 16, 2012, that the two finalists were Sun Life\n"
               "Stadium and Levi's Stadium. The Miami bid depended on whether\n\nPage 2\n"
               "the stadium underwent renovations.\nOn May 21, 2013, NFL owners at their spring meetings voted.")
    got = [wrapped[a:b] for a, b in paragraph_spans(wrapped)]
    assert got[0] == "History" and got[1].endswith("underwent renovations.") and got[2].startswith("On May 21")
    # text not wrapped at a width (a DOCX or HTML paragraph is one line): a line that ends a
    # sentence ends its paragraph, however short
    first = ("The plant draws cooling water from the river through two intake screens, and each "
             "screen is inspected weekly by the shift engineer on duty, who records the result in the "
             "log before the pumps are restarted.")
    unwrapped = f"{first}\nThe log is kept for ten years.\nNo pump runs without a signed permit."
    assert len(first) > 200 and len(paragraph_spans(unwrapped)) == 3
