"""Words as provrag's lexical parts see them: one Snowball stemmer, dictionary lemmas, and the
stop-word lists, each kept for the reason its caller needs it.

BM25 terms (`terms_of`) are lemmatised, then stemmed, with only true function words removed
(STOP_WORDS): idf already down-weights common words, and users do ask about "system" or
"first".
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

WORD = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)  # a word or a number (1.5, 3,000)
_HYPHENATED = re.compile(r"\b[^\W\d_]{2,}(?:-[^\W\d_]{2,})+\b", re.UNICODE)

# Hand-written on purpose: scikit-learn's English list drops words users do ask about
# ("system", "computer", "fire", "bill", "interest", "first", "amount"); BM25's idf already
# down-weights common words, so only true function words are removed here.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves s t also may might must shall
whose upon within without via per yet
""".split())


@lru_cache(maxsize=1)
def _snowball():
    """Snowball English (Porter 2): well kept, pure Python, the one stemmer of provrag."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem of a lower-cased word (cached: the same words come back all the time)."""
    return _snowball().stemWord(word)


@lru_cache(maxsize=1)
def _lemmatizer():
    """simplemma's English dictionary (shipped in the wheel, no download); None if absent.

    Porter stems leave irregular forms apart ("led"/"leads", "wrote"/"writes",
    "children"/"child"), and a question is often worded with the other form than its answer.
    A dictionary lemma first, then the stem, joins them."""
    try:
        import simplemma
    except ImportError:  # pragma: no cover - declared dependency; stems alone still work
        return None
    return simplemma.lemmatize


@lru_cache(maxsize=200_000)
def term_stem(word: str) -> str:
    """A word as a BM25 term: its dictionary lemma (when it has one), then its stem."""
    lem = _lemmatizer()
    if lem is not None and word.isalpha():
        lemma = lem(word, lang="en")
        if lemma.isalpha() and lemma.islower():
            word = lemma
    return stem(word)


def terms_of(text: str) -> list[str]:
    """The BM25 terms of a text, in order: lowercased words and numbers, stemmed, no stop words."""
    out = []
    low = (text or "").lower()
    for m in WORD.finditer(low):
        w = m.group(0)
        if w in STOP_WORDS or (len(w) == 1 and not w.isdigit()):
            continue
        out.append(w if w[0].isdigit() else term_stem(w))
    # "half-time" also matches "halftime" (and the reverse): hyphenated compounds add the joined form
    for m in _HYPHENATED.finditer(low):
        out.append(term_stem(m.group(0).replace("-", "")))
    return out


def query_terms(question: str) -> dict[str, int]:
    return dict(Counter(terms_of(question)))
