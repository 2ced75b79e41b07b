"""Where pysbd's sentences stand in the text, found without a regex per sentence
(provrag/text/segment.py): the same spans as pysbd's own search on real documents, and no
pattern compiled per sentence (pysbd's per-sentence patterns flushed `re`'s cache)."""
from __future__ import annotations

import re

import pysbd
import pytest

from provrag.text import segment


def pages(pdf, count: int) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(min(count, len(doc)))]
    finally:
        doc.close()


@pytest.fixture(scope="module")
def texts(small_corpus) -> list[str]:
    """Pages of R-FAQ and an Asymptote manual as extracted (wrapped lines, page numbers, code,
    repeated sentences), and the Gettysburg-era speech paragraph by paragraph."""
    out = pages(small_corpus / "R-FAQ.pdf", 12) + pages(small_corpus / "asymptote-asy-latex.pdf", 6)
    speech = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    out += [p for p in speech.split("\n\n") if p.strip()][:30]
    # a sentence repeated: each copy gets its own span, in order
    out.append("It is free. It is free. It is free.\nIt is free.")
    return out


def test_the_spans_are_pysbds_own(texts):
    original = pysbd.Segmenter(language="en", clean=False, char_span=True)
    ours = segment._segmenter()
    assert type(ours) is not pysbd.Segmenter
    sentences = 0
    for text in texts:
        want = [(s.sent, s.start, s.end) for s in original.segment(text)]
        got = [(s.sent, s.start, s.end) for s in ours.segment(text)]
        assert got == want
        sentences += len(got)
    assert sentences > 300


def test_no_pattern_is_compiled_per_sentence(texts, monkeypatch):
    seg = segment._segmenter()
    for text in texts:           # pysbd's fixed patterns are compiled once
        seg.segment(text)
    compiled = []
    real = re._compiler.compile

    def counting(pattern, flags=0):
        compiled.append(pattern)
        return real(pattern, flags)

    monkeypatch.setattr(re._compiler, "compile", counting)
    text = texts[3]
    sentences = seg.segment(text)
    assert len(sentences) > 10
    assert not [p for p in compiled if any(re.escape(s.sent.strip()) in str(p) for s in sentences)]
