"""Sentence spans for ranking and quoting: a regex splitter that knows abbreviations, page
furniture and headings.

Hand-written on purpose: pysbd costs ~20 ms per 300-token unit, far too slow for ranking 20+
units per question or scoring every candidate unit of a citation; what these callers need
is readable spans with exact offsets, not a linguistically perfect segmentation.
"""
from __future__ import annotations

import re

from provrag.text.options import OPTION_ENTRY, OPTION_LINE
from provrag.text.tables import rows_apart

# A boundary is . ! ? (plus closing quotes or brackets) followed by whitespace and a capital,
# digit or opening quote, or . ! ? or a colon followed by a line that opens a Markdown list item
# ("- ", "* "), except after a one-letter initial or a common abbreviation (where only an item's line
# opens a sentence); blank lines always end a sentence. Without the list rule a finished sentence ran
# on into the next item: PostgreSQL's "The connections … at server start." into "- port (integer) -
# The TCP port the server listens on; 5432 by default.", docling's export of an HTML definition list;
# and a list's "Explanation of the default value:" ran on into its items, and that run-on, which says
# "default value" and holds no default, answered "What is the default value of ssl_ciphers?". A PDF's
# "•" bullets are left as they were: split the same way, eval/manuals lost an answer that held its
# fact only in a run-on of release names, and a near-miss question on polyglossia's manual was
# answered from a sentence the split let into the candidates (the reader's weakness, not the
# split's; measured 2026-12-01, not kept until the reader reads such leads right).
_ITEM = r"[-*][ \t]"   # what opens a Markdown list item's line (docling writes HTML and DOCX lists so)
# A line that opens with an option opens a sentence: an option list's entry ("… connected or
# not.\n−x Only the connected components are printed …", as groff prints a manual page; "… in
# blocks\n-S sort by file size, largest first", GNU's, whose descriptions often end without a
# full stop). Without it an entry ran on from the one before, and "What does the -x option of
# ccomps do?" had no sentence about -x alone (text/options.py). Not where the line before goes on
# into it: a shell command's continued line ("kwriteconfig --file okularpartrc \\\n--key
# GraphicsAntialias Disabled", "strip --strip-unneeded\n--remove-section=.note") or running text
# that wraps before an option ("… use the\n−K option to …": CONTINUES); and, after a line that
# ends no sentence, only in a text that holds an option list (OPTION_LIST lines opening with an
# option): a formula's "−c d" or a wrapped "\n-dbg packages" is no entry.
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9À-Ý])"
                       rf"|(?<=[.!?…:])[\"'”’)\]]*[ \t]*\n[ \t]*(?={_ITEM})|\n\s*\n"
                       rf"|(?<!\\)[ \t]*\n[ \t]*(?={OPTION_ENTRY})")
_FINISHED = re.compile(r"[.!?…:;][\"'”’)\]]*[ \t]*$")
_OPTION_LINES = re.compile(rf"(?m)^[ \t]*{OPTION_ENTRY}")
OPTION_LIST = 4   # lines opening with an option: a text with fewer holds no option list
CONTINUES = frozenset("a an and as by e.g. for i.e. like of option options flag flags or see the to use using via "
                      "with".split())
_ITEM_LINE = re.compile(rf"[ \t]*{_ITEM}")
ABBREV = re.compile(r"(?:\b(?:[A-Z]|Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Mt|Ft|Gen|Col|Lt|Sgt|Capt|Rev|Hon|No|Nos|Vol|vs|etc|"
                     r"e\.g|i\.e|cf|al|approx|ca|c|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|"
                     r"U\.S|U\.K|a\.m|p\.m|Fig|Eq|Sec|Ch|pp?)\.)$")

FURNITURE = re.compile(r"(?im)^[ \t]*(?:page[ \t]+)?\d{1,4}(?:[ \t]+of[ \t]+\d{1,4})?[ \t]*$")


def mask_furniture(text: str, fill: str = " ") -> str:
    """`text` with its page-furniture lines ("Page 4", "12", "3 of 20") overwritten by `fill`,
    character for character, so offsets into the result are offsets into `text`."""
    return FURNITURE.sub(lambda m: fill * len(m.group(0)), text)


def page_break_ends(before: str, ender: re.Pattern | None = None) -> bool:
    """Whether a sentence ends at a page break after `before`: only as it would with a space
    in place of the break — after terminal punctuation (`ender`) that closes no abbreviation.
    A page number between two lines is no paragraph's end ("…the Pico | Page 3 | Act of 1859…",
    "…a U.S. | Page 5 | Census report…")."""
    return bool((ender or TERMINAL).search(before)) and not ABBREV.search(before[-12:])


def display_quote(quote: str | None, across_pages: bool = False) -> str:
    """A quote on one line for the terminal: whitespace collapsed, and in a quote across two
    pages, the page number caught inside it shown as the break it is ("Four of ⟨page break⟩
    the sororities …", not "Four of Page 8 the sororities …")."""
    q = quote or ""
    lines = q.split("\n")
    if across_pages and len(lines) > 2:
        q = "\n".join([lines[0]] + ["⟨page break⟩" if FURNITURE.fullmatch(ln) else ln for ln in lines[1:-1]]
                      + [lines[-1]])
    return " ".join(q.split())


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text` (offsets into it), whitespace trimmed.

    Page furniture lines ("Page 4", "12", "3 of 20") count as whitespace, and a blank line
    (a page or paragraph break) ends a sentence only when the text before it could end one:
    a sentence running across a page break stays whole.
    """
    masked = mask_furniture(text)
    spans, start = [], 0
    option_lines = None   # counted once, when the first line opening with an option is met
    for m in _BOUNDARY.finditer(masked):
        end = m.start()
        gap = masked[m.start():m.end()]
        line_at = m.start() + gap.rfind("\n") + 1
        opens_item = "\n" in gap and bool(_ITEM_LINE.match(masked, line_at) or OPTION_LINE.match(masked, line_at))
        if "\n" in gap and OPTION_LINE.match(masked, line_at) and not _ITEM_LINE.match(masked, line_at) \
                and not _FINISHED.search(masked, max(start, end - 4), end):
            if option_lines is None:
                option_lines = len(_OPTION_LINES.findall(masked))
            words = masked[start:end].split()
            if option_lines < OPTION_LIST or not words or words[-1].lower() in CONTINUES or words[-1][-1] in ",(" \
                    or OPTION_LINE.match(words[-1]):
                continue  # no option list here, or "… use the\n−K option to …", "strip --strip-unneeded\n--remove-…"
        if "\n" in gap and "." not in gap and not any(c in ".!?…:" for c in masked[max(start, end - 1):end]):
            nxt = masked[m.end():m.end() + 1]
            prev = masked[max(start, end - 1):end]
            if nxt.islower() and (prev.isalnum() or prev in ",;-"):
                continue  # "…led to the\n\nexperiments of…": one sentence across a break
        if masked[m.start():m.end()] != text[m.start():m.end()]:  # a page break
            if not page_break_ends(masked[start:end]):
                continue
        elif ABBREV.search(masked[max(start, end - 12):end]) and "\n\n" not in gap and not opens_item:
            continue  # an abbreviation ends no sentence, but an item on the next line opens one ("… J.\n- port …")
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(masked)))
    return trim_spans(masked, rows_apart(masked, _split_headings(masked, spans)))


def trim_spans(text: str, spans) -> list[tuple[int, int]]:
    """Spans with surrounding whitespace cut off; empty ones dropped."""
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


TERMINAL = re.compile(r"[.!?…][\"'”’)\]]*$")
_LINE_END = re.compile(r"[.!?…:;,\-–—(\[\"'“‘]$")


def _split_headings(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cut a heading line off the sentence that follows it ("The project and the team\nThe
    plant draws…"). A heading is a short line (under 60 % of the text's longest line) that
    ends without punctuation and is followed by a line opening with a capital: a wrapped
    line of running text is long, and a paragraph's last line ends with punctuation."""
    lines = text.split("\n")
    longest = max((len(ln.strip()) for ln in lines), default=0)
    if longest < 40:
        return spans
    out = []
    for s, e in spans:
        cut = s
        for m in re.finditer(r"\n", text[s:e]):
            pos = s + m.start()
            line_start = text.rfind("\n", 0, pos) + 1
            line = text[line_start:pos].strip()   # the whole physical line
            nxt = text[pos + 1:e].lstrip()[:1]
            # an option's tag alone on its line ("−X node_name") is no heading: its description
            # follows on the next line and is the rest of its entry; a shell command's continued
            # line ("… \\\n--key GraphicsAntialias Disabled") is no tag
            tag = OPTION_LINE.match(line) and not text[:line_start].rstrip("\n").endswith("\\")
            heading_before = (line and len(line) < 0.6 * longest and not _LINE_END.search(line)
                              and (nxt.isupper() or nxt.isdigit()) and not tag)
            if (heading_before or nxt == "#") and text[cut:pos].strip():
                out.append((cut, pos))
                cut = pos + 1
        out.append((cut, e))
    return out


PARAGRAPH_MARGIN = 4   # characters to spare: proportional fonts fit fewer wide letters on a line
UNWRAPPED = 200        # a text whose longest line is longer than this was not wrapped at a width


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph of `text`, for the context a sentence is read in.

    Text extracted from a PDF marks no paragraphs: every line ends in a newline. A line ends
    a paragraph where the typesetter must have broken it on purpose: it ends a sentence and
    the next line's first word would have fitted after it, within the text's longest line
    less a few characters. A blank line always ends one; a heading line is its own paragraph; a page
    number line neither ends nor opens one, so a paragraph runs on across a page break.
    In text not wrapped at a width (DOCX, HTML, markdown), every line that ends a sentence
    ends its paragraph. On the 24 SQuAD dev PDFs this finds 1,007 paragraphs (of more than
    eight words) where the articles have 983."""
    lines, pos = [], 0
    for ln in text.split("\n"):
        lines.append((pos, pos + len(ln), ln.strip()))
        pos += len(ln) + 1
    furniture = [bool(FURNITURE.fullmatch(ln)) for _, _, ln in lines]
    for i in range(len(lines)):  # the blank lines around a page number belong to the page break
        if not lines[i][2] and any(furniture[k] for k in (i - 1, i + 1) if 0 <= k < len(lines)):
            furniture[i] = True
    width = max((len(ln) for _, _, ln in lines), default=0)
    wrapped = width <= UNWRAPPED
    spans, start = [], 0
    for i, (_, end, line) in enumerate(lines):
        if furniture[i]:
            if start == lines[i][0]:  # a page number opens no paragraph
                start = end + 1
            continue
        j = i + 1
        while j < len(lines) and furniture[j]:
            j += 1
        nxt = lines[j][2] if j < len(lines) else ""
        if j < len(lines) and line:
            if not nxt:
                ends = True
            elif page_break_ends(line):  # terminal punctuation that closes no abbreviation
                ends = not wrapped or len(line) + 1 + len(nxt.split()[0]) <= width - PARAGRAPH_MARGIN
            else:  # a heading: short, unpunctuated, followed by a capitalised line
                ends = len(line) < 0.6 * width and not _LINE_END.search(line) and nxt[:1].isupper()
            if not ends:
                continue
        spans.append((start, end))
        start = end + 1
    return trim_spans(text, spans + ([(start, len(text))] if start < len(text) else []))


# a contents line's dot leaders ("Introduction . . . . 3", "……")
_DOT_LEADERS = re.compile(r"(?:\.\s?){4,}|…{2,}")
# a line that goes on after a question mark: a terminal prompt ("… create databases? (y/n) n")
_AFTER_QUESTION = re.compile(r"\?\s*\S")


def is_heading(raw: str) -> bool:
    """A title or heading rather than a statement: a markdown heading, or one short line with no
    closing punctuation. It names a topic; it answers nothing."""
    t = raw.strip()
    if t.startswith("#") or _DOT_LEADERS.search(t):  # markdown heading; contents line with dot leaders
        return True
    return "\n" not in t and not TERMINAL.search(t) and len(t.split()) <= 12


def is_section_title(raw: str) -> bool:
    """The title a section opens with, whose steps follow it: a heading of one line that is not
    a contents line. is_heading also takes a contents line (its section is on another page) and
    any run of lines holding dot leaders, which in a manual's example is a data file's ellipsis
    row ("val1 val1 val1 / ... ... ..."): gnuplot's manual made one such run of example lines the
    "title" of "How do I plot columns 1 and 3 of a data file?", and its next sentence,
    "Comparison is case-sensitive.", the answer. Nor is a line that goes on after a question mark:
    a terminal session's prompt ("Shall the new role be allowed to create databases? (y/n) n", in
    PostgreSQL's createuser page) named every word of "How do I create a new database?"."""
    t = raw.strip()
    return ("\n" not in t and not t.startswith("|") and not _DOT_LEADERS.search(t) and not _AFTER_QUESTION.search(t)
            and is_heading(t))   # "|": a table's row (text/tables.py) is no title, however many words it shares
