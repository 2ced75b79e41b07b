"""The sentence that says a claim with one of its words turned round: an opposite word in its
place, or two of its terms in the other order.

"the caption always comes out below the body" against "the caption always comes out above the
body"; "unicode-math should be loaded before any other maths package" against "It should be
loaded after any other maths package"; "dvipsnames colors overrule svgnames colors" against
"svgnames colors will always overrule dvipsnames colors". Coverage cannot see these: every word
of the claim but one small word is there, and the claim's own word often stands elsewhere in the
span ("Before you…"), so the span-wide antonym test (features._antonym_hits) finds the claim's
word and stays silent. They are found here sentence by sentence, as slots.py finds a swapped name
or number, and count under the same conditions: the sentence says the rest of the claim (all
but MAX_MISSING of its content words), and no sentence of the text says the claim as it stands.

Opposites are the judge's antonym pairs (lexicon.ANTONYMS) and WordNet 3.0's (wordnet.py, a table
shipped in the package), read on stems. Two terms in the other
order count only around a relation the claim and the sentence share (the words between them, a
verb or a preposition, in the same order), never around a symmetric one ("A and B", "A with B",
"between A and B"), nor in the passive ("A is overruled by B" says what "B overrules A" says).
"""
from __future__ import annotations

import re
from functools import lru_cache

from provrag.engines.offline.judge.lexicon import ANTONYMS, stem
from provrag.engines.offline.judge.quantities import qty_ok
from provrag.engines.offline.judge.slots import MAX_MISSING

_WORD = re.compile(r"[A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F'’\-]*")
# the claim's words besides the turned one that its sentence must state (a relation and its
# arguments: "automatic spacing … typewriter font", never one name alone)
MIN_SAID = 2
# relations that read the same both ways round, and the passive's agent: no reversal around them
_SYMMETRIC = frozenset("and or nor with between vs versus both by".split())



@lru_cache(maxsize=1)
def opposite_words() -> dict[str, frozenset[str]]:
    """Each stem's opposites: the judge's hand list (lexicon.ANTONYMS) and WordNet 3.0's antonyms
    (wordnet.py)."""
    from provrag.engines.offline.judge.wordnet import opposite_stems

    out = {k: set(v) for k, v in opposite_stems().items()}
    for a, b in ANTONYMS:
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


@lru_cache(maxsize=4_096)
def _words(text: str) -> tuple[tuple[str, str], ...]:
    """(surface, stem) of every word of `text`, function words included, in order. Cached: an
    evidence sentence is read this way for every claim it is judged against (a few KB a sentence)."""
    return tuple((m.group(0), stem(m.group(0))) for m in _WORD.finditer(text))


def _lacking(claim, pool: frozenset[str], nums, covered) -> int:
    """How many of the claim's content words and numbers the sentence does not state."""
    return sum(not covered(s, pool) for s in dict.fromkeys(claim.stems)) + \
        sum(not qty_ok(q, nums) for q in claim.numbers)


def _opposite(claim_words, sent_words) -> tuple[str, str] | None:
    """(the claim's word, the sentence's opposite) where the sentence has the opposite of a claim
    word and not the word itself, and the claim does not have the opposite too."""
    have = {s for _, s in sent_words}
    mine = {s for _, s in claim_words}
    for surface, s in claim_words:
        if s in have:
            continue
        for o in opposite_words().get(s, ()):
            if o in have and o not in mine:
                return surface, next(w for w, x in sent_words if x == o)
    return None


def _reversed(claim_words, sent_words) -> tuple[str, str] | None:
    """(the claim's "A … B", the sentence's "B … A") where two content words, each once in the
    claim, stand the other way round in the sentence around the same relation words (those
    between them in the claim, in order, between them in the sentence), and nowhere in the
    sentence the claim's way round."""
    from provrag.text.words import JUDGE_STOP_WORDS as STOP

    seen: dict[str, list[int]] = {}
    for i, (w, s) in enumerate(claim_words):
        if w.lower() not in STOP and len(s) > 2:
            seen.setdefault(s, []).append(i)
    c_at = {s: v[0] for s, v in seen.items() if len(v) == 1}
    s_at: dict[str, list[int]] = {}
    for i, (_, s) in enumerate(sent_words):
        if s in c_at:
            s_at.setdefault(s, []).append(i)

    def around(first: str, second: str, between: list[str]) -> tuple[int, int] | None:
        """Where `first` … `second` stand in the sentence with `between` between them, in order."""
        for p in s_at[first]:
            for q in s_at[second]:
                if p < q <= p + len(between) + 4:
                    there = [s for _, s in sent_words[p + 1:q]]
                    it = iter(there)
                    if not any(t in _SYMMETRIC for t in there) and all(b in it for b in between):
                        return p, q
        return None

    for x in s_at:
        for y in s_at:
            i, j = c_at[x], c_at[y]
            if not i < j <= i + 5:
                continue
            between = [s for _, s in claim_words[i + 1:j]]
            if not between or any(b in _SYMMETRIC for b in between):
                continue
            turned = around(y, x, between)
            if turned and around(x, y, between) is None:
                return (" ".join(w for w, _ in claim_words[i:j + 1]),
                        " ".join(w for w, _ in sent_words[turned[0]:turned[1] + 1]))
    return None


def find_turned(claim, evidence: str, sents: list[tuple[int, int]], coverage, pool_of, covered,
                negated, order) -> tuple[list[tuple[str, str]], tuple[int, int], float, float] | None:
    """The evidence sentence that says the claim with a word turned into its opposite or two terms
    the other way round: ([(claim's words, sentence's words)], the sentence's span, how much of
    the claim it says) — slots.find_swap's shape — and how much of it the sentence says in the
    claim's order with the claim's word put back (two terms the other way round have no order to
    put back: 0). `coverage(pool, numbers)` is the claim's weighted coverage, `pool_of(text)` a
    sentence's stems, `negated(text)` whether a negation in a sentence bears on the claim's words
    (a negated opposite, "not after", is no opposite), `order(stems)` the claim's in-order share."""
    from provrag.engines.offline.judge.analysis import analyse, normalise

    claim_words = _words(normalise(claim.raw))
    claim_negated = claim.negations > 0
    rows = []
    for a, b in sents:
        st = analyse(evidence[a:b])
        rows.append((a, b, st, pool_of(st)))
    best = None
    for a, b, st, pool in rows:
        if negated(st) != claim_negated:
            continue
        sent_words = _words(normalise(st.raw))
        opposite = _opposite(claim_words, sent_words)
        turned = opposite or _reversed(claim_words, sent_words)
        back = {stem(opposite[0])} if opposite else set()   # the claim's word, put back in its opposite's place
        # the sentence says the rest of the claim, with the claim's word back
        if turned is None or _lacking(claim, pool | back, st.numbers, covered) > MAX_MISSING:
            continue
        # and says something of it besides the turned word: two of the claim's other words at
        # least ("Early in the 1971–72 season, … Reed went down" does not turn "Reed is late")
        if opposite and sum(covered(x, pool) for x in set(claim.stems) - back) < MIN_SAID:
            continue
        said = coverage(pool | back, st.numbers)
        lacks = _lacking(claim, pool | back, st.numbers, covered)
        # the claim said as it stands elsewhere in the text (as much of it and as many of its
        # words, with the claim's own word, or with its terms in the claim's order): the turned
        # sentence is about another thing. As many words, not only as much weight: "Note that
        # amsmath should be loaded before unicode-math" weighs as much as "It should be loaded
        # after any other maths or font-related package" for "unicode-math should be loaded before
        # any other maths or font-related package" (a package's name is rare, so it weighs much)
        # but says three fewer of its words: another fact, not the claim
        if any(r[2] is not st and coverage(r[3], r[2].numbers) >= said - 1e-9
               and _lacking(claim, r[3], r[2].numbers, covered) <= lacks
               and (back <= set(r[2].all_stems) if opposite
                    else _reversed(claim_words, _words(normalise(r[2].raw))) is None)
               for r in rows):
            continue
        if best is None or said > best[2]:
            put_back = [next(iter(back)) if x == stem(opposite[1]) else x for x in st.stems] if opposite else None
            best = ([turned], (a, b), said, order(put_back) if opposite else 0.0)
    return best
