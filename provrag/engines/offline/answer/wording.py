"""How the answerer writes a sentence out and compares two: one clean line, a form for
comparison, a closing full stop; and what it says when nothing answers.

Ranking, selection, composing and global map/reduce all quote sentences taken from the
index's text, which carries page furniture, line breaks and (in community reports) the
`[Data: …]` blocks of an earlier model; they clean and compare them the same way.
"""
from __future__ import annotations

import re

from provrag.text.sentences import FURNITURE, TERMINAL

NO_ANSWER = "I could not find anything in the index that answers this question."

_CITATION = re.compile(r"\s*\[Data:[^\]]*\]\s*", re.I)
_WS = re.compile(r"\s+")


def clean(sentence: str) -> str:
    """One line, no page furniture, no existing `[Data: …]` blocks (an answer adds its own)."""
    return _WS.sub(" ", _CITATION.sub(" ", FURNITURE.sub(" ", sentence))).strip()


def normalised(sentence: str) -> str:
    """Lower-case words only: two sentences that differ in case or punctuation compare equal."""
    return " ".join(re.findall(r"\w+", sentence.lower()))


def said_already(sentence: str, kept: list[str]) -> bool:
    """The same sentence as one kept already: equal, inside it, or ≥ 90 % alike (rapidfuzz) —
    the same sentence quoted from two overlapping units, or from two documents, so that an
    answer never says one thing twice."""
    from rapidfuzz import fuzz

    n = normalised(sentence)
    for k in kept:
        kn = normalised(k)
        if n == kn or n in kn or kn in n or fuzz.ratio(n, kn) >= 90:
            return True
    return False


def closed(sentence: str) -> str:
    """The sentence ending in terminal punctuation (a full stop added where it has none; one
    closed by a quote or bracket after its stop, `…us."`, has one)."""
    return sentence if TERMINAL.search(sentence) else sentence + "."
