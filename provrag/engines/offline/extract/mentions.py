"""Mentions in one sentence: names, key-phrase runs, and the type of what they name.

The shallow parse of the package docstring: a name is a run of capitalised words (with
connectors), trimmed of sentence-initial common words and honorifics; a phrase run is a run
of lower-case content words cut where the batch's cues say a verb or a predicate starts or
ends it. `type_of` applies the type rules in order, first match wins.
"""
from __future__ import annotations

from collections import Counter

from provrag.engines.offline.extract.lexicon import (
    ADJECTIVE_SUFFIXES,
    BE_VERBS,
    CONNECTORS,
    DETERMINERS,
    EVENT_FIRST,
    EVENT_WORDS,
    GEO_WORDS,
    HONORIFICS,
    IRREGULAR_PAST,
    LONE_GENERIC,
    MODALS,
    ORG_WORDS,
    SUBJECT_PRONOUNS,
)
from provrag.engines.offline.extract.tokens import Batch, Token


def _is_name_word(t: Token, b: Batch, stop) -> bool:
    if t.acr:
        return True
    if not t.cap or t.text.isdigit():
        return False
    if t.initial:
        # sentence-initial: a name only if the batch capitalises it elsewhere too
        return b.cap_mid[t.low] > 0 and b.cap_mid[t.low] >= b.lower[t.low] and t.low not in stop
    return True


def _honorific(t: Token) -> bool:
    """"Dr", "Agent", "Agents" — written as a word, not as an acronym ("MS Windows")."""
    return not t.acr and (t.low in HONORIFICS or (t.low.endswith("s") and t.low[:-1] in HONORIFICS))


def name_spans(toks: list[Token], b: Batch, stop) -> list[tuple[int, int, bool]]:
    """Spans (i, j) of name tokens in one sentence, and whether an honorific preceded them."""
    out, i, n = [], 0, len(toks)
    while i < n:
        t = toks[i]
        if not (t.cap and (t.acr or _is_name_word(t, b, stop) or t.low in HONORIFICS)):
            i += 1
            continue
        j = i + 1
        while j < n and not toks[j].brk:
            if toks[j].cap and not toks[j].text.isdigit():
                j += 1
                continue
            k = j  # connectors between capitalised words ("Bank of the West")
            while k < n and not toks[k].brk and toks[k].low in CONNECTORS and k - j < 2:
                k += 1
            if k > j and k < n and not toks[k].brk and toks[k].cap and toks[j].low != "the":
                j = k + 1
                continue
            break
        span = [i, j]
        while span[0] < span[1] and toks[span[0]].initial and not _is_name_word(toks[span[0]], b, stop):
            span[0] += 1  # drop a sentence-initial common word ("The", "When", "Focus")
        hon = False
        while (span[1] - span[0] > 1 and _honorific(toks[span[0]])
               and toks[span[0] + 1].low not in CONNECTORS):  # "King of the Belgians" stays whole
            span[0] += 1
            hon = True
        if span[1] - span[0] == 1 and _honorific(toks[span[0]]):
            span[0] += 1  # a bare honorific ("Agent", "Doctor") is not a name
        while span[1] - span[0] > 1 and toks[span[0]].low in stop and not toks[span[0]].acr:
            span[0] += 1  # "The R Graphics Package" → "R Graphics Package"
        while span[1] > span[0] and toks[span[1] - 1].low in CONNECTORS:
            span[1] -= 1
        s0, s1 = span
        words = [toks[k].low for k in range(s0, s1) if not toks[k].acr]
        if words and all(w in stop for w in words):
            s1 = s0
        if s1 - s0 == 1 and not toks[s0].acr:
            w = toks[s0].low
            if w in stop or w in LONE_GENERIC or w in HONORIFICS or len(w) < 2 or b.lower[w] > b.cap_mid[w]:
                s1 = s0
        if s1 > s0:
            out.append((s0, s1, hon))
        i = max(j, i + 1)
    return out


def phrase_runs(toks: list[Token], taken: set[int], b: Batch, stop) -> list[tuple[int, int]]:
    """Runs of lower-case content words: the raw material of key phrases (shallow parse)."""
    runs, i, n = [], 0, len(toks)

    def content(k):
        t = toks[k]
        return (k not in taken and (t.text.islower() or (t.initial and t.cap and not t.acr and b.lower[t.low] > 0))
                and t.low not in stop and len(t.low) > 2 and t.low.replace("-", "").isalpha()
                and not _adverb(t.low, b) and t.low not in IRREGULAR_PAST)

    while i < n:
        if not content(i):
            i += 1
            continue
        j = i + 1
        while j < n and not toks[j].brk and content(j):
            j += 1
        a, e = i, j
        prev = toks[a - 1].low if a and not toks[a].brk else ""
        if prev in SUBJECT_PRONOUNS - {"that", "which"} or prev in MODALS or prev in BE_VERBS:
            a += 1  # "he scanned …", "to fight …", "was unsettling": a verb or predicate, not a noun
        if e - a > 1 and toks[a].low.endswith("ing") and b.np_cue[toks[a].low] == 0:
            a += 1  # "detecting electronic anomalies": a gerund taking an object
        nxt = toks[e].low if e < n and not toks[e].brk else ""
        if nxt in DETERMINERS and e > a:
            e -= 1  # "monitors cast a …": the last word takes an object, so it is a verb
        while e > a and _not_a_head(toks[e - 1].low, b):
            e -= 1
        if e > a:
            runs.append((a, e))
        i = j
    return runs

def _not_a_head(w: str, b: Batch) -> bool:
    """A phrase's last word must be noun-ish: used as a verb more than as a noun, or an
    -ed/-ing/adjective-suffixed word the batch never puts after a determiner, is not."""
    return b.verb_cue[w] > b.np_cue[w] or (w.endswith(ADJECTIVE_SUFFIXES) and b.np_cue[w] == 0)


def _adverb(w: str, b: Batch) -> bool:
    """-ly words are adverbs/adjectives unless the batch puts them after a determiner ("the anomaly")."""
    return w.endswith("ly") and len(w) > 4 and b.head_cue[w] == 0


def type_of(words: list[str], cues: Counter, b: Batch, is_name: bool, acronym: bool) -> str:
    """The type rules of the module docstring, in order (first match wins)."""
    last, first = words[-1].lower(), words[0].lower()
    if cues["hon"] and is_name and not acronym:
        return "PERSON"
    if last in ORG_WORDS and (is_name or len(words) > 1):
        return "ORGANIZATION"
    if first in EVENT_FIRST and len(words) > 1 or last in EVENT_WORDS and (is_name or len(words) > 1):
        return "EVENT"
    if last in GEO_WORDS and (is_name or len(words) > 1):
        return "GEO"
    if not is_name or acronym:
        return "ORGANIZATION" if acronym and cues["the"] else "CONCEPT"
    if cues["speech"]:
        return "PERSON"
    if cues["geo"] and cues["geo"] * 2 >= cues["n"]:
        return "GEO"
    if cues["n"] >= 2 and 2 <= len(words) <= 3 and all(b.lower[w.lower()] == 0 and not w.isupper() for w in words):
        return "PERSON"
    return "CONCEPT"
