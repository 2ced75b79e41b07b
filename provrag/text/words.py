"""Words as provrag's lexical parts see them: one Snowball stemmer, dictionary lemmas, and the
stop-word lists, each kept for the reason its caller needs it (all of them here, side by side).

- STOP_WORDS: BM25 terms (`terms_of`), lemmatised then stemmed, lose only true function words:
  idf already down-weights common words, and users do ask about "system" or "first".
- ENGLISH_STOP_WORDS: scikit-learn's list, for the TF-IDF embedder and offline extraction.
- OVERLAP_STOP_WORDS: word overlap between a sentence and a passage (resolve, quotes).
- JUDGE_STOP_WORDS: what a claim may leave unsaid (the offline judge).

`title_key` is when two entity titles name the same entity, for every engine's extraction.
"""
from __future__ import annotations

import re
import threading
from collections import Counter
from functools import lru_cache
from itertools import count

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


# scikit-learn's ENGLISH_STOP_WORDS (1.x), copied so that embedding a query needs no sklearn import
# (≈ 2–3 s of `provrag ask` start-up); tests/embeddings/test_embed.py checks it still equals sklearn's.
# The TF-IDF embedder drops these, as scikit-learn's vectoriser does; extraction starts from them.
ENGLISH_STOP_WORDS = frozenset("""
a about above across after afterwards again against all almost alone along already also although always am
among amongst amoungst amount an and another any anyhow anyone anything anyway anywhere are around as at back be
became because become becomes becoming been before beforehand behind being below beside besides between beyond
bill both bottom but by call can cannot cant co con could couldnt cry de describe detail do done down due during
each eg eight either eleven else elsewhere empty enough etc even ever every everyone everything everywhere except
few fifteen fifty fill find fire first five for former formerly forty found four from front full further get
give go had has hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself his how
however hundred i ie if in inc indeed interest into is it its itself keep last latter latterly least less ltd
made many may me meanwhile might mill mine more moreover most mostly move much must my myself name namely neither
never nevertheless next nine no nobody none noone nor not nothing now nowhere of off often on once one only onto
or other others otherwise our ours ourselves out over own part per perhaps please put rather re same see seem
seemed seeming seems serious several she should show side since sincere six sixty so some somehow someone
something sometime sometimes somewhere still such system take ten than that the their them themselves then thence
there thereafter thereby therefore therein thereupon these they thick thin third this those though three through
throughout thru thus to together too top toward towards twelve twenty two un under until up upon us very via was
we well were what whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
whether which while whither who whoever whole whom whose why will with within without would yet you your yours
yourself yourselves
""".split())

# Word overlap for quoting and resolving (text/similarity.py): scikit-learn's list less the words
# in it that carry meaning — numbers, "system", "fire", "find" — and its misspellings, plus
# contractions and their pieces, which carry none.
CARRY_MEANING = frozenset("""
amoungst amount back bill bottom call cant co con couldnt cry de describe detail due eight eleven
empty fifteen fifty fill find fire first five forty found four front full get give go hasnt hundred
inc interest ltd mill move name nine part serious show side sincere six sixty system take ten thick
thin third three top twelve twenty two un
""".split())
CONTRACTIONS = frozenset("""
aren aren't can't couldn couldn't d did didn didn't does doesn doesn't doing don don't hadn hadn't
hasn hasn't haven haven't having i'd i'll i'm i've isn isn't it's just let's ll m o s shouldn
shouldn't t that's theirs there's they're they've ve wasn wasn't we're we've weren weren't won
won't wouldn wouldn't y you're you've
""".split())
OVERLAP_STOP_WORDS = (ENGLISH_STOP_WORDS - CARRY_MEANING) | CONTRACTIONS

# The judge's function words: words a claim can leave out of its evidence. Not scikit-learn's list,
# which treats meaning-bearing words ("first", "last", "never", "more", "less", "system", "fire",
# "bill") as stop words; not STOP_WORDS either, which keeps "one's", "onto", "whether" and drops
# "not", "no", "more", "after": a claim turns on those.
JUDGE_STOP_WORDS = frozenset("""
a an the and or but if then than that this these those there here of in on at by for from to with
into onto upon as is are was were be been being am do does did doing done has have had having
it its it's he him his she her hers they them their theirs we us our ours you your yours i me my
mine who whom whose which what when where why how whether while also too very so such just
can could may might must shall should will would about around via per etc eg ie
one's oneself himself herself itself themselves ourselves yourself yourselves
some any each every all both either neither other others another same own
s t d ll m re ve
""".split())


_per_thread = threading.local()


def _snowball():
    """Snowball English (Porter 2), the one stemmer of provrag: snowballstemmer's, which is
    Snowball's C implementation (PyStemmer, a dependency) when installed and pure Python otherwise,
    the same stems either way (tests/text/test_stemmer.py); the C one ~30x faster (the WordNet
    antonym table a cold answer check stems, an index's vocabulary). One per thread: a stemmer
    keeps the word it works on in its own fields, so two server requests stemming at once in one
    stemmer corrupted each other ("string index out of range" under `make fuzz`)."""
    stemmer = getattr(_per_thread, "snowball", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _per_thread.snowball = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem of a lower-cased word (cached: the same words come back all the time)."""
    return _snowball().stemWord(word)


# distinct words looked up in simplemma's stream backend before decoding its whole dictionary
# pays (crossover ≈ 125 ms saved ÷ 25 µs per word ≈ 5,000)
_STREAM_LOOKUPS = 5_000


@lru_cache(maxsize=1)
def _lemmatizer():
    """simplemma's English lemma of a word (its dictionary ships in the wheel, no download); None
    if simplemma is absent.

    Porter stems leave irregular forms apart ("led"/"leads", "wrote"/"writes",
    "children"/"child"), and a question is often worded with the other form than its answer.
    A dictionary lemma first, then the stem, joins them.

    Each word's lemma is kept between processes (provrag/usercache.py, keyed by simplemma's
    version): a cold ask whose words were lemmatised before (by an earlier question, or by the
    index run over the same documents) imports nothing of simplemma (~0.3 s cold, issue 30).
    For the others: both of simplemma's backends hold the same dictionary, so give the same
    lemmas: the stream one (low_memory) looks a word up in the front-coded bytes, the first call
    of a process costing ~65 ms and 2 MB where decoding all ~180k entries into a dict costs
    ~190 ms and 20 MB, but each word ~25 µs more. A question computes a few hundred at most:
    the stream serves it; an index run's vocabulary switches to the dict."""
    from provrag.usercache import library_version, remembered

    version = library_version("simplemma")
    if version == "absent":  # pragma: no cover - declared dependency; stems alone still work
        return None
    looked_up = count(1)

    def lemma_en(word: str) -> str:
        import simplemma

        return simplemma.lemmatize(word, lang="en", low_memory=next(looked_up) <= _STREAM_LOOKUPS)

    return remembered(f"simplemma {version} lemma en", lemma_en)


@lru_cache(maxsize=200_000)
def term_stem(word: str) -> str:
    """A word as a BM25 term: its dictionary lemma (when it has one), then its stem."""
    lem = _lemmatizer()
    if lem is not None and word.isalpha():
        lemma = lem(word)
        if lemma.isalpha() and lemma.islower():
            word = lemma
    return stem(word)


# texts up to this long have their terms kept (a sentence, a paragraph: ask reads the same ones
# in each attempt and a server in many questions); a unit's whole text at index time is not kept
_KEPT_TEXT = 1_000


def terms_of(text: str) -> list[str]:
    """The BM25 terms of a text, in order: lowercased words and numbers, stemmed, no stop words."""
    text = text or ""
    return list(_kept_terms(text)) if len(text) <= _KEPT_TEXT else _terms(text)


@lru_cache(maxsize=8_192)
def _kept_terms(text: str) -> tuple[str, ...]:
    """terms_of of a short text, once per process. Bounded: 8,192 texts of at most 1,000
    characters, ~20 MB at worst (the terms are term_stem's own strings, shared)."""
    return tuple(_terms(text))


def _terms(text: str) -> list[str]:
    out = []
    low = text.lower()
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


def title_key(text: str) -> str:
    """The key two entity titles merge on: case, whitespace and punctuation ignored ("Dr. Vale",
    "DR VALE"). Every engine's extraction is merged with it (index/extract.py)."""
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold().replace("_", " ")).split())
