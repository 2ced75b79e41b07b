"""Lexical similarity between a claim and a passage, and the passage's best-matching span.

Shared by resolve (which cited unit supports this sentence best, and what to quote), ask and
verify. Word overlap is what finds candidate evidence well (RESEARCH.md: it misses negation
and swapped numbers, which the judge handles); rapidfuzz breaks ties between spans of equal
overlap and rescues near-verbatim quotes whose words were inflected differently.

The stop-word list is hand-written: scikit-learn's costs a 1.4 s import of scikit-learn on
every CLI call. Words are stemmed with snowballstemmer (Porter 2).
"""
from __future__ import annotations

import re
from functools import lru_cache

from provrag.text.words import OVERLAP_STOP_WORDS as STOP_WORDS
from provrag.text.words import (
    stem as fold,  # inflections match: signals→signal, decoding→decod
)

# words and numbers; a possessive "'s" is left out of the word (Hayes's → hayes)
_WORD = re.compile(r"[^\W_]+(?:'(?!s\b)[^\W_]+)*", re.UNICODE)

def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` minus stop words and one-letter tokens, in order."""
    if not text:
        return []
    words = _WORD.findall(text.lower().replace("’", "'"))
    return [w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]


@lru_cache(maxsize=4096)
def _terms(text: str) -> tuple[frozenset, frozenset]:
    """(folded words, folded adjacent word pairs) — cached: one query meets many passages."""
    ws = [fold(w) for w in content_words(text)]
    return frozenset(ws), frozenset(zip(ws, ws[1:]))


def lexical_score(query: str, text: str) -> float:
    """How much of the query's content the text covers, in [0, 1].

    0.75 × share of the query's content words found in the text + 0.25 × share of its
    adjacent word pairs found (phrases count, not just a bag of words). 0 when the query has
    no content word.
    """
    qw, qb = _terms(query or "")
    if not qw:
        return 0.0
    tw, tb = _terms(text or "") if len(text or "") < 4000 else _terms_uncached(text)
    cov = len(qw & tw) / len(qw)
    big = len(qb & tb) / len(qb) if qb else cov
    return round(0.75 * cov + 0.25 * big, 6)


def _terms_uncached(text: str) -> tuple[frozenset, frozenset]:
    return _terms.__wrapped__(text)


_SENT_END = re.compile(r"(?<=[.!?;:])[\"'”’)\]]*\s+|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
_SPAN_END = re.compile(r"[.!?;:][\"'”’)\]]*$")   # what ends a span before a page break (as _SENT_END)
_MAX_SPAN_WORDS = 60    # a "sentence" longer than this (tables, run-on PDF text) is cut into windows
_WINDOW, _STEP = 40, 20


def spans(text: str) -> list[tuple[int, int]]:
    """Sentence-ish spans of text as (start, end); long ones cut into overlapping windows.

    A fast regex split, not pysbd: it runs over every candidate unit of every cited sentence,
    and a quote needs a readable span, not a linguistically perfect sentence.
    """
    from provrag.text.sentences import ABBREV, mask_furniture, page_break_ends, trim_spans
    from provrag.text.tables import rows_apart

    out: list[tuple[int, int]] = []
    pos = 0
    masked = mask_furniture(text)  # "Page 8" lines are whitespace
    for m in list(_SENT_END.finditer(masked)) + [None]:
        end = m.start() if m else len(text)
        nxt = m.end() if m else len(text)
        if m and "\n" not in m.group(0) and ABBREV.search(text[max(pos, end - 12):end]):
            continue  # "led by Dr. Imogen Vale": an abbreviation's period ends no sentence
        if m and masked[m.start():m.end()] != text[m.start():m.end()] and not page_break_ends(text[pos:end], _SPAN_END):
            continue  # a page break ("Four of\n\nPage 8\nthe sororities are…") ends a span only after a full stop
        seg = masked[pos:end]  # trimmed as masked: a span never opens or closes on a page number
        if seg.strip():
            lead = len(seg) - len(seg.lstrip())
            s0, s1 = pos + lead, pos + len(seg.rstrip())
            words = list(re.finditer(r"\S+", text[s0:s1]))
            if len(words) <= _MAX_SPAN_WORDS:
                out.append((s0, s1))
            else:
                for w in range(0, len(words) - _STEP, _STEP):
                    chunk = words[w: w + _WINDOW]
                    out.append((s0 + chunk[0].start(), s0 + chunk[-1].end()))
        pos = nxt
    # a table's rows one by one (text/tables.py)
    return trim_spans(text, rows_apart(text, out)) if "|" in text else out


def best_span(query: str, text: str) -> tuple[str, int, int, float]:
    """The span of `text` that best matches `query`: (span text, start, end, score in [0, 1]).

    Each sentence-ish span and each pair of adjacent spans (a claim often spans two source
    sentences) is scored with `lexical_score`; a pair must beat its best single sentence
    clearly to be chosen, so quotes stay short. Ties go to rapidfuzz's token-set ratio. The
    returned text is always `text[start:end]` verbatim.
    """
    if not text:
        return "", 0, 0, 0.0
    from rapidfuzz import fuzz

    sp = spans(text)
    if not sp:
        return "", 0, 0, 0.0
    # a table's row is matched as read under its header and quoted alone: a pair with the text
    # before it would hold the header's words and win (text/tables.py)
    rows = _row_readings(text)
    cands = [(s0, s1, 1) for s0, s1 in sp] + [(sp[i][0], sp[i + 1][1], 2) for i in range(len(sp) - 1)
                                               if sp[i + 1][1] - sp[i][0] < 600
                                               and sp[i][0] not in rows and sp[i + 1][0] not in rows]
    best, best_key = None, None
    for s0, s1, n in cands:
        read = rows.get(s0) if n == 1 else None
        lex = lexical_score(query, read or text[s0:s1])
        if lex == 0 and best is not None:
            continue
        fz = fuzz.token_set_ratio(query, read or text[s0:s1]) / 100.0 if lex > 0 or best is None else 0.0
        # a two-sentence span pays a small toll so it wins only by covering clearly more
        key = (round(lex - (0.08 if n == 2 else 0.0), 6), fz, -(s1 - s0))
        if best_key is None or key > best_key:
            best, best_key = (s0, s1, lex), key
    s0, s1, lex = best
    if lex == 0:
        # nothing in common word-wise: fall back to rapidfuzz's character alignment
        al = fuzz.partial_ratio_alignment(query, text)
        if al is not None and al.score >= 60:
            a0, a1 = _widen(text, al.dest_start, al.dest_end, sp)
            return text[a0:a1], a0, a1, round(al.score / 100.0 * 0.5, 6)
    return text[s0:s1], s0, s1, lex


def _row_readings(text: str) -> dict[int, str]:
    """Each table row's reading under its header, by where its line's text starts."""
    if "|" not in text:
        return {}
    from provrag.text.tables import table_rows

    out = {}
    for r in table_rows(text):
        line = text[r.start:r.end]
        out[r.start + len(line) - len(line.lstrip())] = r.reading()
    return out


def _widen(text: str, a0: int, a1: int, sp: list[tuple[int, int]]) -> tuple[int, int]:
    """Grow a character alignment to the spans it touches, so a quote starts on a word."""
    inside = [s for s in sp if s[1] > a0 and s[0] < a1]
    if inside:
        return inside[0][0], inside[-1][1]
    return a0, a1
