"""The entries of a definition list, as docling writes an HTML or DOCX one: each term on a list
item's line, its definition on the nested lines under it.

    - work_mem (integer)
        - Sets the base maximum amount of memory … The default value is four megabytes (4MB).

Every sentence of a definition is about its term, though only the first is next to it. PostgreSQL's
"What is the default value of work_mem?" was answered "The default value is 2.0, which makes
hash-based operations use twice the usual work_mem base amount." at 0.996: that sentence is
hash_mem_multiplier's, and names work_mem itself; work_mem's own "The default value is four
megabytes (4MB)." names nothing but "default value". So a sentence of a definition is scored with
its entry's term (answer/scoring.py) and shown under it.

Hand-written: the text is docling's plain export, not HTML any more; what is needed is which
character ranges each term's definition covers, across a unit boundary too.
"""
from __future__ import annotations

import re

from provrag.text.tables import lines_of, with_previous
from provrag.text.words import terms_of

# a term's line: a top-level item without closing punctuation, a few words ("- work_mem (integer)")
_TERM = re.compile(r"^- ([^\n]{1,120}?)[ \t]*$")
_NESTED = re.compile(r"^[ \t]{2,}- ")
TERM_WORDS = 12   # a longer item line is a statement in a list, not a term


def definition_entries(text: str) -> list[tuple[int, int, int, str]]:
    """(where the term's line starts, start, end, term) per definition in `text`: its nested
    lines' range, from the line after the term's to the last line before the next top-level line
    (a blank line and an indented line go on with it)."""
    if "\n" not in text or "- " not in text:
        return []
    lines = list(lines_of(text))
    out = []
    i = 0
    while i < len(lines) - 1:
        a, b, line = lines[i]
        m = _TERM.match(line)
        if not (m and _NESTED.match(lines[i + 1][2]) and len(m.group(1).split()) <= TERM_WORDS
                and not re.search(r"[.!?:;,]$", m.group(1))):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and (not lines[j][2].strip() or lines[j][2][:1] in " \t"):
            j += 1
        end = lines[j - 1][1]
        while end > b and text[end - 1].isspace():
            end -= 1
        out.append((a, b + 1, end, m.group(1).strip()))
        i = j
    return out


def entries_of(text: str, previous: str = "") -> list[tuple[int, int, int, str]]:
    """definition_entries of `text`, offsets into it; a definition that began in the previous unit
    (`previous`, the text before it) keeps that unit's term."""
    if "- " not in text and "- " not in previous[-2000:]:
        return []
    joined, shift = with_previous(previous, text)
    return [(line - shift, a - shift, b - shift, term) for line, a, b, term in definition_entries(joined) if b > shift]


def term_at(entries: list[tuple[int, int, int, str]], start: int, end: int) -> tuple[str, bool] | None:
    """(the term whose definition holds the span (start, end), whether the span opens with the
    term's own line — the definition's first sentence, which names it), or None."""
    for line, a, b, term in entries:
        if (line == start or a <= start) and end <= b:
            return term, line == start
    return None


def names_term(term: str, question_terms: set[str]) -> bool:
    """Whether a question (its terms, text/words.terms_of) names the definition's term: every term
    of the term's first word is among them. "… of work_mem?" names "work_mem (integer)"; "… of ssl?"
    names "ssl (boolean)", not "ssl_ciphers (string)", whose name holds "cipher" too."""
    return set(terms_of(term.split()[0])) <= question_terms
