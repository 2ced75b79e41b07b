"""A text as the judge reads it: content stems in order, names, numbers, negation cues
(`analyse`), and the candidate spans of an evidence text (windows of consecutive sentences,
read across line wraps and page breaks) that a claim is measured against."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from provrag.engines.offline.judge.lexicon import NEGATION, NUMBER_WORDS, stem
from provrag.engines.offline.judge.quantities import Qty, quantities
from provrag.text.options import plain_dashes
from provrag.text.segment import evidence_sentences
from provrag.text.words import JUDGE_STOP_WORDS as STOP

# a file-system path ("/var/tmp", "/etc/apt/sources.list") is one word and a name: "/var/tmp" and
# "/tmp" are different places, not two words of which one is missing
PATH = r"(?<![\w/])/[\w.+-]*[\w+-](?:/[\w.+-]*[\w+-])*/?"
_WORD = re.compile(PATH + r"|[A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F'’\-]*|\d[\d,]*(?:\.\d+)?")
_PTB = [("-LRB-", "("), ("-RRB-", ")"), ("-LSB-", "["), ("-RSB-", "]"), ("-LCB-", "{"), ("-RCB-", "}"),
        ("-COLON-", ":"), ("``", '"'), ("''", '"')]



def normalise(text: str) -> str:
    """Undo tokeniser escapes (PTB brackets and quotes) that real corpora carry."""
    for a, b in _PTB:
        text = text.replace(a, b)
    return text


# ---- analysis of a text ---------------------------------------------------------------------------

@dataclass
class Text:
    """A text seen as the judge needs it: content stems (in order), names, numbers, cues."""

    raw: str
    stems: list[str] = field(default_factory=list)          # content stems in order
    words: list[str] = field(default_factory=list)          # the surface words of `stems`
    names: set[str] = field(default_factory=set)            # stems of capitalised words
    numbers: list[Qty] = field(default_factory=list)         # numbers and dates
    negations: int = 0
    neg_at: list[int] = field(default_factory=list)         # index into `stems` of the word after each cue
    all_stems: set[str] = field(default_factory=set)        # every stem, stop words included
    pos: list[int] = field(default_factory=list)            # where each of `stems` starts in the text


# ~31 KB per text unit's worth: 2,048 of them ~60 MB, where 20,000 could hold ~600 MB in a server that
# verifies answers over a large index for days (tests/serve/test_cache_bounds.py); a miss costs ~0.6 ms
@lru_cache(maxsize=2_048)
def analyse(text: str) -> Text:
    t = Text(raw=text)
    text = normalise(text)
    t.numbers = quantities(text)
    inside = set()
    for q in t.numbers:
        inside.update(range(q.start, q.end))
    matches = list(_WORD.finditer(text))
    pos: list[int] = []
    for i, m in enumerate(matches):
        tok = m.group(0)
        low = tok.lower().replace("’", "'")
        if tok[0] == "/":  # a path: compared whole, as a name
            t.all_stems.add(tok.rstrip("/"))
            t.stems.append(tok.rstrip("/"))
            t.words.append(tok)
            t.names.add(tok.rstrip("/"))
            pos.append(m.start())
            continue
        if _is_option(text, m.start()):
            # an option ("-l", "--num-callers", groff's "−K") names one thing, as a path does: one
            # letter is all a claim may say of it (kept, its case too), and a span that does not state
            # it does not state the claim ("ed's -l option makes ed exit with status 1 whenever a
            # command fails" was supported by ed's "Exit status: … 1 for environmental problems")
            s = "-" + tok if len(tok) == 1 else stem(low)
            t.all_stems.add(s)
            t.stems.append(s)
            t.words.append("-" + tok if len(tok) == 1 else tok)
            t.names.add(s)
            pos.append(m.start())
            continue
        if low.endswith("n't"):
            t.negations += 1
            t.neg_at.append(len(t.stems))
            low = low[:-3]
        s = stem(low) if not tok[0].isdigit() else tok.replace(",", "")
        t.all_stems.add(s)
        if low in NEGATION:
            # "No Quarter", "No. 1": a capitalised "No" inside a sentence is a name or an abbreviation;
            # "not only / not just … but" adds rather than denies
            nxt = matches[i + 1].group(0).lower() if i + 1 < len(matches) else ""
            if not (low == "no" and (tok == "No" and i > 0 or text[m.end():m.end() + 1] == ".")) \
                    and not (low == "not" and nxt in ("only", "just", "merely", "simply", "solely")):
                t.negations += 1
                t.neg_at.append(len(t.stems))
            continue
        if low in STOP or low in NUMBER_WORDS or (len(low) < 2 and not low.isdigit()) or m.start() in inside:
            continue  # function words, and words of a number or date (compared as values)
        if tok[0].isdigit():
            continue  # numbers are compared as values, not as words
        t.stems.append(s)
        t.words.append(tok)
        pos.append(m.start())
        if tok[0].isupper() and (i > 0 or tok.isupper() or len(matches) < 3 or low not in COMMON_START):
            t.names.add(s)
        elif text[m.start() - 1:m.start()] == "\\" or any(ch.isupper() for ch in tok[1:]):
            t.names.add(s)  # a command ("\\cline") or a mixed-case name ("pdfTeX") names one thing
    import bisect
    from dataclasses import replace

    t.pos = pos

    for n, q in enumerate(t.numbers):
        a, b = bisect.bisect_left(pos, q.start), bisect.bisect_left(pos, q.end)
        t.numbers[n] = replace(q, ctx=frozenset(t.stems[max(0, a - 3):a] + t.stems[b:b + 3]),
                               after=frozenset(t.stems[b:b + 2]))
    return t


def _is_option(text: str, start: int) -> bool:
    """Is the word at `start` a command-line option: right after a dash ("-l", "--all", a PDF's
    U+2212 "−K") that itself follows no letter or digit ("so-called" and "10-bit" are words)?"""
    before = plain_dashes(text[max(0, start - 2):start])
    return before.endswith("-") and (len(before) < 2 or not before[0].isalnum())


# capitalised only because they start a sentence
COMMON_START = frozenset("""in on at the a an this that these those it he she they there his her its their
after before during since when while as although though however then also both some many most all
according following today currently later early""".split())


# ---- spans --------------------------------------------------------------------------------------

def heading(text: str) -> tuple[str, int]:
    """A leading Markdown heading (the page subject) and where the body starts."""
    m = re.match(r"\s*(#{1,6}\s+[^\n]+)\n", text)
    if m:
        return m.group(1).lstrip("#").strip(), m.end()
    return "", 0


@lru_cache(maxsize=20_000)
def sentences(text: str) -> tuple[tuple[int, int], ...]:
    """The evidence sentences of a text (pysbd is slow: a unit is read once per run, not once
    per claim)."""
    return tuple(evidence_sentences(text))


def spans(text: str, max_window: int) -> list[tuple[int, int]]:
    """Every window of 1..`max_window` consecutive sentences of `text`."""
    sents = sentences(text)
    out = []
    for i in range(len(sents)):
        for w in range(1, max_window + 1):
            if i + w > len(sents):
                break
            out.append((sents[i][0], sents[i + w - 1][1]))
    return out or [(0, len(text))]
