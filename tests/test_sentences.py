"""Quotes and sentence spans keep abbreviations inside the sentence (real text of data/)."""
from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from provrag.sentences import split_sentences
from provrag.similarity import best_span

PAGE2 = pdfium.PdfDocument(str(Path(__file__).resolve().parent.parent / "data" /
                               "halcyon-commissioning-handbook.pdf"))[1].get_textpage().get_text_range()


def test_quote_does_not_start_after_an_abbreviation():
    quote, start, end, score = best_span("The commissioning team is led by Dr. Imogen Vale", PAGE2)
    assert quote.startswith("The commissioning team is led by Dr. Imogen Vale") and score > 0.9
    assert PAGE2[start:end] == quote


def test_split_sentences_keeps_dr_with_its_name():
    sents = [" ".join(PAGE2[a:b].split()) for a, b in split_sentences(PAGE2)]
    assert any(s.startswith("The commissioning team is led by Dr. Imogen Vale") for s in sents)
    assert not any(s.startswith("Imogen Vale") for s in sents)
