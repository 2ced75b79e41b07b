"""Sentences where accuracy matters more than speed: an answer's, and the evidence a claim is
judged against. Both use pysbd (a rule-based segmenter that knows "U.S.", "J.I. Pontanus",
decimals and quotes), which costs ~20 ms per 300-token text: fine for one answer or the few
units a claim is judged against, too slow for ranking (text/sentences.py holds the fast
regex splitters for that).

- `answer_sentences`: an answer (a model's or provrag's own) is markdown-ish prose. A
  paragraph, heading, list item or table row starts on its own line; a piece pysbd cuts off
  that opens in lower case or with punctuation ("e.g. the …", "(relationship weight 3).")
  continues the sentence before it. Citations use it to find the sentence a `[Data: …]` block
  closes, and verify to cut the answer into claims: both must agree on what a sentence is.
- `evidence_sentences`: text extracted from documents is wrapped at a width and broken by
  page numbers; it is read as a same-length copy in which a line wrap is a space.
"""
from __future__ import annotations

import re
from functools import lru_cache

from provrag.text.sentences import mask_furniture, trim_spans

# an answer's paragraph starts after a blank line, or on a line that opens a heading, a list
# item, a quote, a table row, or a capitalised sentence
_ANSWER_BREAK = re.compile(r"\n(?=\s*\n|\s*(?:#{1,6}\s|[-*+•]\s|\d+[.)]\s|>|\||[A-Z\"'*_\[]))")
_MAX_PARAGRAPH = 20000  # longer than this is data, not prose: kept whole (pysbd slows down badly)

# paragraphs glued without a space when text was extracted ("century.First"): a sentence end
_GLUED = re.compile(r"(?:(?<=[a-z0-9][.!?])|(?<=[a-z0-9][.!?][\"')\]]))(?=[A-Z][a-z])")


def _segmenter():
    """A new segmenter (it keeps the text it works on: one per call, so threads never share one)."""
    return _segmenter_class()(language="en", clean=False, char_span=True)


@lru_cache(maxsize=1)
def _segmenter_class():
    import pysbd
    from pysbd.utils import TextSpan

    class Segmenter(pysbd.Segmenter):
        """pysbd's segmenter, its sentences found back in the text without a regex each.

        pysbd finds where each sentence it cut stands by compiling `re.escape(sentence) + r"\\s*"`
        and searching the text with it: one new pattern per sentence, which is half of its time on
        a unit and, at hundreds of patterns a claim, pushes every other pattern out of `re`'s
        512-entry cache (pysbd's own and provrag's then compile again on every use). Here the same
        search with str.find: the first occurrence of the sentence, from the start, whose end after
        trailing whitespace (str.isspace, what the regex's \\s matches) lies past the sentence
        before; same spans (tests/text/test_segment_spans.py compares them on real units)."""

        def sentences_with_char_spans(self, sentences):
            text = self.original_text
            spans, prior_end = [], 0
            for sent in sentences:
                if not sent:   # an empty pattern matches everywhere: pysbd's own search decides
                    return super().sentences_with_char_spans(sentences)
                at = text.find(sent)
                while at >= 0:
                    end = at + len(sent)
                    while end < len(text) and text[end].isspace():
                        end += 1
                    if end > prior_end:
                        spans.append(TextSpan(text[at:end], at, end))
                        prior_end = end
                        break
                    at = text.find(sent, end)
            return spans

    return Segmenter


def answer_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of an answer, offsets into `text`, whitespace trimmed."""
    seg = _segmenter()
    out: list[tuple[int, int]] = []
    starts = [0] + [m.start() + 1 for m in _ANSWER_BREAK.finditer(text)]
    for p0, p1 in zip(starts, starts[1:] + [len(text)]):
        para = text[p0:p1]
        if not para.strip():
            continue
        try:
            pieces = [(p.start, p.end) for p in seg.segment(para)] if len(para) < _MAX_PARAGRAPH else [(0, len(para))]
        except Exception:  # pysbd trips on some pathological inputs: keep the paragraph whole
            pieces = [(0, len(para))]
        merged: list[tuple[int, int]] = []
        for a, b in trim_spans(para, pieces):
            if merged and (para[a].islower() or para[a] in ".,;:)]}("):
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        out.extend((p0 + a, p0 + b) for a, b in merged)
    return out


def evidence_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence offsets of evidence text: pysbd over a reading copy, then split again where
    paragraphs were glued ("century.First").

    pysbd ends a segment at every newline, so PDF text wrapped at ~80 characters would be
    judged line by line (a claim spread over three lines fits no two-sentence window): it reads
    a copy of the same length in which a line wrap is a space, and so is a page break with its
    page number ("Four of | Page 8 | the sororities"); a blank line still ends a paragraph."""
    flat = _reading_copy(text)
    out = []
    for s in _segmenter().segment(flat):
        start, end = s.start, s.end
        cut = start
        for m in _GLUED.finditer(flat, start, end):
            if m.start() - cut > 1:
                out.append((cut, m.start()))
                cut = m.start()
        out.append((cut, end))
    return trim_spans(flat, out)


def _reading_copy(text: str) -> str:
    """`text` with line wraps and page breaks (their page-number lines included) as spaces,
    character for character, so offsets into it are offsets into `text`."""
    masked = mask_furniture(text.replace("\r", " "), "\x00")
    # a whitespace run holding a page number is a page break: all spaces
    masked = re.sub(r"\s*\x00[\x00\s]*", lambda m: " " * len(m.group(0)), masked)
    # a run of whitespace with one newline is a line wrap; with two or more, a paragraph break
    return re.sub(r"[ \t]*\n(?:[ \t]*\n)*", lambda m: m.group(0) if m.group(0).count("\n") > 1 else " " * len(m.group(0)),
                  masked)
