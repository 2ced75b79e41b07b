"""Words and corpus cues: the tokenizer of the offline extractor and the batch it reads.

A word's role is judged from the batch it is in rather than from a tagger: the `Batch`
counts, for every word, how the batch writes it (lower case, capitalised away from a sentence
start, after a determiner, after a subject pronoun or modal), and the rules of mentions.py
read those counts.
"""
from __future__ import annotations

import re
from collections import Counter

from provrag.engines.offline.extract.lexicon import (
    DETERMINERS,
    HONORIFIC_ABBR,
    MODALS,
    NP_PRECEDERS,
    SUBJECT_PRONOUNS,
)
from provrag.engines.offline.extract.text import sentences

_WORD = re.compile(r"[^\W\d_][\w]*(?:[-'’.][^\W_][\w]*)*|\d[\w.,]*")
_URLISH = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|\S+@\S+\.\w+|(?<!\w)(?:~|\.{0,2})/[\w./~-]+|\b[\w-]+(?:\.[\w-]+)+/\S*", re.I)
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,5}$")
_ROMAN = re.compile(r"^(?=[MDCLXVI])M*(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})$")
_INITIAL_GAP = re.compile(r"[\"“”‘(\[—–:;*#_>|•]|^\s*-|\n\s*\n")


def _acronym(text: str) -> bool:
    """"FAQ", "GNU", "LEDs" — not a Roman numeral ("XIV")."""
    base = text[:-1] if len(text) > 2 and text.endswith("s") and text[:-1].isupper() else text
    return bool(_ACRONYM.match(base)) and not _ROMAN.match(base)


class Token:
    """One word of a sentence with the cues the rules read: capitalised, acronym, sentence-initial,
    possessive, and whether punctuation comes before it (which breaks a name or a phrase)."""

    __slots__ = ("text", "low", "start", "end", "cap", "acr", "initial", "poss", "brk")

    def __init__(self, text, start, end, initial, brk):
        poss = text.endswith(("'s", "’s", "'S", "’S")) and len(text) > 2
        if poss:
            text, end = text[:-2], end - 2
        self.text, self.low, self.start, self.end = text, text.lower(), start, end
        self.cap = text[:1].isupper()
        self.acr = self.cap and text[1:2].isupper() and _acronym(text)
        self.initial, self.poss, self.brk = initial, poss, brk  # brk: punctuation before it


def tokenize(text: str, s: int, e: int) -> list[Token]:
    """The words of text[s:e]; "Dr. Hayes" stays one run (an honorific's period is no break)."""
    toks: list[Token] = []
    prev_end = s
    for m in _WORD.finditer(text, s, e):
        gap = text[prev_end:m.start()]
        g = gap.strip()
        abbr = g == "." and toks and toks[-1].low in HONORIFIC_ABBR  # "Dr. Hayes" goes on
        initial = not toks or bool(_INITIAL_GAP.search(gap)) or ("." in g or "!" in g or "?" in g) and not abbr
        brk = not toks or (bool(g) and not abbr) or toks[-1].poss
        toks.append(Token(m.group(), m.start(), m.end(), initial, brk))
        prev_end = m.end()
    return toks


class Batch:
    """Sentences, tokens and corpus cues of one batch of units, before selection.

    No POS tagger ships offline: how the batch itself uses a word (lower case, capitalised
    mid-sentence, after a determiner, after a pronoun or modal) stands in for one.
    """

    def __init__(self, units: list[tuple[str, str]], stop: frozenset[str]):
        self.sents: list[list[tuple[int, int]]] = []
        self.toks: list[list[list[Token]]] = []
        self.lower = Counter()     # word used in lower case
        self.cap_mid = Counter()   # word capitalised away from a sentence start
        self.np_cue = Counter()    # word right after a determiner ("the briefing", "the anomaly")
        self.head_cue = Counter()  # word ends a noun phrase opened by a determiner/preposition
        self.verb_cue = Counter()  # word follows a subject pronoun, "to" or a modal
        for _, text in units:
            spans = sentences(text)
            # URLs, e-mail addresses and paths are not prose: their words must not become
            # names ("HTTPS") — masked with a non-space so they also break names and phrases
            masked = _URLISH.sub(lambda m: "~" * len(m.group()), text)
            tl = [tokenize(masked, a, b) for a, b in spans]
            for toks in tl:
                if len(toks) >= 3 and sum(t.cap for t in toks) >= 0.5 * len(toks):
                    for t in toks:  # a heading or a Title Case list: capitals say nothing here
                        t.initial = True
            self.sents.append(spans)
            self.toks.append(tl)
            for toks in tl:
                for i, t in enumerate(toks):
                    if t.text.islower():
                        self.lower[t.low] += 1
                    elif t.cap and not t.initial:
                        self.cap_mid[t.low] += 1
                    if i and not t.brk:
                        p = toks[i - 1].low
                        if p in SUBJECT_PRONOUNS - {"that", "which"} or p in MODALS:
                            self.verb_cue[t.low] += 1
                        if p in DETERMINERS:
                            self.np_cue[t.low] += 1
                        if p in NP_PRECEDERS and t.text.islower() and t.low not in stop and not t.low.endswith("ly"):
                            j = i  # "the sterile briefing room": the last word is the head noun
                            while (j + 1 < len(toks) and not toks[j + 1].brk and toks[j + 1].text.islower()
                                   and toks[j + 1].low not in stop and toks[j + 1].low.isalpha()
                                   and not toks[j + 1].low.endswith("ly")):
                                j += 1
                            self.head_cue[toks[j].low] += 1
