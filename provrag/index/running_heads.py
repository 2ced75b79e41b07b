r"""Running heads and feet: the lines a PDF prints at the top or bottom of its pages.

A book-like PDF repeats its title, the chapter's name and the page number on every page
("Debian Reference 47 / 233", "Chapter 2: R Basics 5", "Debian Policy Manual, Release 4.6.2.0").
pdfium gives them as the page's first or last line, so without this step they ran into the
text: the sentence splitter joined "Debian Reference 47 / 233" to the first sentence of the page,
the reader read it as part of a candidate, and an answer could show it ("… user interface, too.
Debian Reference 48 / 233 apt syntax aptitude syntax …"). Over 606 TeX Live manuals and 19
manuals from Debian packages (17,511 pages) this removes 5,900 lines, from 57 and 13 of the files.

A running line is one of the first or last `EDGE` non-empty lines of a page, of at most
MAX_CHARS, that is
- a page-number line: it opens or ends with a number, and its form (lower case, whitespace
  collapsed, each number read as "#", a roman page number at either end as "#") stands at a page
  edge on at least MIN_PAGES pages — and on at least NUMBERING_SHARE of the pages where the form
  stands at an edge — with that number at the same distance from the physical page each time
  ("Chapter 2: R Basics 5" on page 9, "… 6" on page 10): the page numbering, which no content
  line keeps in step with; or, as a page's first or last line, one that ends with a number at the
  distance most of the document's page-number lines keep and opens with the word its running
  heads open with (a chapter of one page: "Chapter 1: Introduction 2");
- or the same line (lower case, whitespace collapsed, its numbers as they are) as the first or
  the last line of at least TITLE_SHARE of the pages: the title or release printed on every page,
  a slide's navigation bar, a long table's repeated head.
Content that repeats at page edges is neither: MetaPost's "beginfig(24);" (its number inside the
line), a chapter opener "Chapter 3" (some chapters start at the same distance from their page
number by chance, most do not), "22.3 Version 4.6.1" (a section of a changelog), the
"\end{tikzpicture}" or "resulting in" of a TeX manual's examples (at the edge of a fifth of its
pages, never of half: over the same 625 manuals, every line the title rule takes at half the
pages is a running title, a slide bar or a table head; at a fifth it took example code).

A running line is removed where it stands at an edge, nowhere else; a page's other lines, their
order and line breaks stay as pdfium gave them. A line that is only a page number ("12", "Page
4", "3 of 20") stays too: the sentence and paragraph splitters read it as the page break it is
(text/sentences.FURNITURE), so a paragraph runs on across it; without it, the blank line between
two pages ends every paragraph there (on the 24 SQuAD dev PDFs, 1,148 paragraphs found for 983).

Hand-written, not a library's: docling labels page headers with its layout models, which this
machine cannot download; pdfium and pypdf give no header/footer roles.
"""
from __future__ import annotations

import re
from collections import Counter

from provrag.text.sentences import FURNITURE

EDGE = 2            # lines at each end of a page looked at
MIN_PAGES = 3       # a page-number line: at least this many pages with the same numbering,
NUMBERING_SHARE = 0.3   # and at least this share of the pages where its form stands at an edge
TITLE_SHARE = 0.5   # a line without the page's number: first or last on at least this share of the pages
MAX_CHARS = 120     # a longer line is text, not a running head

_NUMBER = re.compile(r"\d+")
# a number alone as the line's first or last word, or "47 / 233", "47 of 233" at its end
_END_NUMBERS = re.compile(r"^(\d{1,6})\s|\s(\d{1,6})$|^(\d{1,6})$|(\d{1,6})\s*(?:/|of)\s*\d{1,6}$", re.I)
_ROMAN_END = re.compile(r"(^[ivxlc]{1,7}\b|\b[ivxlc]{1,7}$)")
_ROMAN = re.compile(r"^(?=[ivxlc])(c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_LETTER_OR_NUMBER = re.compile(r"[^\W_]")


def _plain(line: str) -> str:
    """The line in lower case, its whitespace collapsed."""
    return " ".join(line.split()).lower()


def form(line: str) -> str:
    """The line as its pages share it: numbers and an edge roman numeral read as "#"."""
    return _ROMAN_END.sub("#", _NUMBER.sub("#", _plain(line)))


def _edge_lines(page: str) -> list[tuple[int, str]]:
    """(index, line) of the page's first and last EDGE non-empty lines of at most MAX_CHARS."""
    lines = page.split("\n")
    full = [i for i, ln in enumerate(lines) if ln.strip()]
    return [(i, lines[i]) for i in sorted(set(full[:EDGE] + full[-EDGE:])) if len(lines[i].strip()) <= MAX_CHARS]


def _roman(word: str) -> int | None:
    """The value of a lower-case roman numeral ("xiv" → 14), None for any other word."""
    if not _ROMAN.match(word):
        return None
    values = [_ROMAN_VALUES[c] for c in word]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _edge_numbers(line: str) -> list[int]:
    """The numbers a line opens or ends with: where a page number is printed, alone as a word or
    as "n / N"; front matter numbers its pages in roman numerals ("page iv")."""
    s = line.strip()
    numbers = [int(x) for m in _END_NUMBERS.finditer(s) for x in m.groups() if x]
    words = s.lower().split()
    return numbers + ([v for v in {_roman(words[0]), _roman(words[-1])} if v] if words else [])


def _marks(number: int, line: str) -> tuple[str, set[int]]:
    """The line's form, and the distance of each of its edge numbers to the physical page `number`."""
    return form(line), {number - x for x in _edge_numbers(line)}


class RunningLines:
    """What one document prints as running heads and feet (module docstring)."""

    def __init__(self, pages: list[str]):
        same: Counter = Counter()       # pages with this line as their first or last
        shares: Counter = Counter()     # pages with this form at an edge
        numbering: Counter = Counter()  # pages with this form, its number at this distance from the page's
        for n, page in enumerate(pages, 1):
            edge = [ln for _, ln in _edge_lines(page)]
            marks = [_marks(n, ln) for ln in edge]
            same.update({_plain(edge[0]), _plain(edge[-1])} if edge else set())
            shares.update({f for f, _ in marks})
            numbering.update({(f, d) for f, ds in marks for d in ds})
        self.titles = {t for t, k in same.items() if k >= max(MIN_PAGES, TITLE_SHARE * len(pages))
                       and _LETTER_OR_NUMBER.search(t)}
        self.numbering = {(f, d) for (f, d), k in numbering.items()
                          if k >= max(MIN_PAGES, NUMBERING_SHARE * shares[f])}
        # the document's page numbering: a distance its number lines keep on most of its pages. A
        # chapter of one or two pages has its running head at that distance too ("Chapter 1:
        # Introduction 2"), too rare a form for the rule above: it goes when it is a page's first or
        # last line, ends with the page's number and opens with the word the running heads open
        # with. (Without the last two conditions, over the TeX Live manuals, section headings that
        # start on the page of their number went: "4 Documentation" on page 4.)
        paged: Counter = Counter()
        for f, d in self.numbering:
            paged[d] += numbering[f, d]
        self.distances = {d for d, k in paged.items() if k >= NUMBERING_SHARE * len(pages)}
        self.openers = {f.split()[0] for f, _ in self.numbering if f.endswith(" #") and not f.startswith("#")}

    def __bool__(self) -> bool:
        return bool(self.titles or self.numbering)

    def dropped(self, number: int, page: str) -> set[int]:
        """Indices of the running lines of page `number` (1-based), among its lines."""
        edges = _edge_lines(page)
        outer = {edges[0][0], edges[-1][0]} if edges else set()
        out = set()
        for i, line in edges:
            if FURNITURE.fullmatch(line):   # a page number alone: the splitters' page break (module docstring)
                continue
            f, distances = _marks(number, line)
            if _plain(line) in self.titles or any((f, d) in self.numbering for d in distances) \
                    or (i in outer and f.endswith(" #") and f.split()[0] in self.openers
                        and {number - x for x in _edge_numbers(line.rsplit(None, 1)[-1])} & self.distances):
                out.add(i)
        return out


# what stands around a page number at a running line's edge: "48 / 233", "page 4 of 9", "12 |"
_NUMBERING_WORDS = {"/", "|", "·", "•", "-", "–", "—", "of", "page", "p."}


def head_words(lines: list[str]) -> str:
    """A page's running lines as the one line of words they say ("Debian Reference · apt syntax"):
    their page numbers left out (they tell nothing of the page's subject, and a number read as
    evidence could back or contradict a claim's number)."""
    out = []
    for line in lines:
        words = line.split()
        for edge in (0, -1):   # the numbering at either end, word by word
            while words and (words[edge].isdigit() or (words[edge].islower() and _roman(words[edge]))
                             or words[edge].lower() in _NUMBERING_WORDS):
                words.pop(edge)
        if any(_LETTER_OR_NUMBER.search(w) for w in words):
            out.append(" ".join(words))
    return " · ".join(out)


def strip_running_lines(pages: list[str]) -> tuple[list[str], int, list[str]]:
    """(the pages without their running heads and feet, how many lines were removed, what each
    page's running lines say: head_words, "" where it has none). A page whose every line is
    running (a blank page's header and number) becomes empty."""
    found = RunningLines(pages)
    if not found:
        return pages, 0, [""] * len(pages)
    out, heads, removed = [], [], 0
    for n, page in enumerate(pages, 1):
        drop = found.dropped(n, page)
        removed += len(drop)
        lines = page.split("\n")
        out.append("\n".join(ln for i, ln in enumerate(lines) if i not in drop).strip() if drop else page)
        heads.append(head_words([lines[i] for i in sorted(drop)]))
    if not any(out):   # every line a running one (a stack of numbered blank pages): nothing to tell apart
        return pages, 0, [""] * len(pages)
    return out, removed, heads
