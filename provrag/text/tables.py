"""Markdown pipe tables read row by row, each row with its table's header.

docling writes the tables of an HTML, DOCX or PPTX file as Markdown pipe tables in the text it
exports, and Markdown files hold their own. A sentence splitter sees a table as one unpunctuated
run of lines: the whole table became one "sentence", so "What is Helga Marsh's role?" was
answered with every row of the contacts table, and no row could be read on its own. A row alone
("| Senior shift operator | Dana Whitlock | 0555 0123 |") does not say what its cells are; its
header does. So each body row is a sentence of its own, read as "Role: Senior shift operator;
Name: Dana Whitlock; Phone: 0555 0123." — every cell under its column's name, nothing added.

Hand-written: the readers of Markdown in the registries (markdown-it-py, mistune) parse whole
documents into HTML or token streams without offsets into the text; what is needed here is the
offsets of each row line, to quote and cite it, and a header found in the unit before when a
table runs across two units.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
# the line under the header: |---|:---:|---| (GitHub-flavoured Markdown's delimiter row)
_DELIMITER = re.compile(r"^[ \t]*\|(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*$")
_EMPTY_CELL = {"", "-", "–", "—"}


@dataclass(frozen=True)
class TableRow:
    """One body row of a pipe table: its line's offsets in the text and its cells under the
    header's names (a header is None when the table's header line was not in the text)."""
    start: int
    end: int
    header: tuple[str, ...] | None
    cells: tuple[str, ...]

    def reading(self) -> str:
        """The row as a sentence: "Role: Senior shift operator; Name: Dana Whitlock; Phone: 0555 0123."
        Empty cells are left out; without a header the cells are joined as they stand."""
        if self.header and len(self.header) == len(self.cells):
            parts = [f"{h}: {c}" if h else c for h, c in zip(self.header, self.cells) if c not in _EMPTY_CELL]
        else:
            parts = [c for c in self.cells if c not in _EMPTY_CELL]
        text = "; ".join(parts)
        return text + ("" if not text or text[-1] in ".!?" else ".")


def cells(line: str) -> tuple[str, ...]:
    """The cells of a row line, whitespace collapsed; an escaped pipe (\\|) stays in its cell."""
    inner = line.strip()[1:-1]
    return tuple(" ".join(c.replace("\\|", "|").split()) for c in re.split(r"(?<!\\)\|", inner))


def lines_of(text: str):
    """(start, end, line) of each line of `text`, offsets into it."""
    pos = 0
    for line in text.split("\n"):
        yield pos, pos + len(line), line
        pos += len(line) + 1


def table_lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every line of every pipe table in `text`; kind is "header",
    "delimiter" or "row". A table is a run of consecutive lines that open and close with a pipe
    and holds a delimiter line (the header is the line above it), or, when it began before
    `text` (a unit cut inside a table), at least two rows of the same number of cells: a lone
    "|l|c|r|" in a LaTeX manual's text is no table."""
    if "|" not in text:
        return []
    out, block = [], []
    for a, b, line in list(lines_of(text)) + [(len(text) + 1, len(text) + 1, "")]:
        if _ROW.match(line):
            block.append((a, b, line))
            continue
        out += _kinds(block)
        block = []
    return out


def _kinds(block: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    kinds = ["delimiter" if _DELIMITER.match(line) else "row" for _, _, line in block]
    for i in range(1, len(kinds)):
        if kinds[i] == "delimiter" and kinds[i - 1] == "row":
            kinds[i - 1] = "header"
    widths = {len(cells(line)) for (_, _, line), k in zip(block, kinds) if k == "row"}
    is_table = "delimiter" in kinds or (kinds.count("row") >= 2 and len(widths) == 1 and min(widths) >= 2)
    return [(a, b, k) for (a, b, _), k in zip(block, kinds)] if is_table else []


def rows_apart(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sentence spans of `text` with every body row of a pipe table a span of its own, and its
    header and delimiter lines in none: they name the columns, and each row is read under them.
    A span's text outside the table's lines stays a span (a cell's full stop cuts no row). In
    text order, untrimmed: the pieces beside a table keep their line breaks."""
    lines = table_lines(text)
    if not lines:
        return spans
    out = [(a, b) for a, b, kind in lines if kind == "row"]
    for s, e in spans:
        cut = s
        for a, b, _ in lines:
            if a < e and b > cut:
                if a > cut:
                    out.append((cut, a))
                cut = b
        if cut < e:
            out.append((cut, e))
    return sorted(out)


def table_rows(text: str) -> list[TableRow]:
    """The body rows of the pipe tables in `text`, each with the header of its table (None for
    rows above the first header of a table that began before `text`)."""
    out, header, last_end = [], None, None
    for a, b, kind in table_lines(text):
        if last_end is None or a != last_end + 1:   # a line that is no table line ends a table
            header = None
        last_end = b
        if kind == "header":
            header = cells(text[a:b])
        elif kind == "row":
            out.append(TableRow(a, b, header, cells(text[a:b])))
    return out


def with_previous(previous: str, text: str) -> tuple[str, int]:
    """The document's text around a unit and where the unit begins in it: `previous` is the text
    before the unit (its antecedent, query/retrieve.antecedents: the previous unit's text up to
    where this one starts, a line break when they do not touch), so the two are contiguous."""
    return previous + text, len(previous)


def rows_of(text: str, previous: str = "") -> dict[int, TableRow]:
    """The table rows of `text` by their start offset in it; a table that began in the previous
    unit (`previous`, the text before it) lends its rows that unit's header."""
    if "|" not in text:
        return {}
    joined, shift = with_previous(previous, text)
    return {r.start - shift: TableRow(r.start - shift, r.end - shift, r.header, r.cells)
            for r in table_rows(joined) if r.start >= shift}


@dataclass(frozen=True)
class ReadingCopy:
    """A text with each table row replaced by its reading (TableRow.reading) and the table's
    header and delimiter lines blanked, for a reader that judges sentences of prose (the claim
    judge); `original_span` maps a span of the copy back to the text it quotes."""
    text: str
    rows: tuple[tuple[int, int, int, int], ...] = ()   # (copy start, copy end, text start, text end) per row

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that a span of the copy reads: a row read in part is quoted whole."""
        return self._at(start, False), self._at(end, True)

    def _at(self, pos: int, is_end: bool) -> int:
        shift = 0
        for cs, ce, ts, te in self.rows:
            if pos < cs or (is_end and pos == cs):
                break
            if pos < ce or (is_end and pos == ce):
                return te if is_end else ts
            shift = te - ce
        return pos + shift


def reading_copy(text: str) -> ReadingCopy:
    """`text` as a reader of prose should read it (ReadingCopy); the text itself when it holds no table."""
    lines = table_lines(text)
    if not lines:
        return ReadingCopy(text)
    rows = {r.start: r for r in table_rows(text)}
    parts, mapped, cut, size = [], [], 0, 0
    for a, b, kind in lines:
        parts.append(text[cut:a])
        size += a - cut
        shown = rows[a].reading() if kind == "row" and a in rows else " " * (b - a)
        if kind == "row" and a in rows:
            mapped.append((size, size + len(shown), a, b))
        parts.append(shown)
        size += len(shown)
        cut = b
    parts.append(text[cut:])
    return ReadingCopy("".join(parts), tuple(mapped))
