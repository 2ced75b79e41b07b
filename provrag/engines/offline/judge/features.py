"""The features of a claim against one evidence text, each bounded in [0, 1]: coverage of
the claim's words (weighted towards rare words and names), its numbers and dates, its focus;
negation and antonym conflicts; character and word-order similarity. They are measured on the
best span of the text (see the package doc); the fitted scores that combine them are decide.py's."""
from __future__ import annotations

import math
import re
from bisect import bisect_left
from functools import lru_cache

from provrag.engines.offline.judge.analysis import (
    Text,
    analyse,
    heading,
    normalise,
    sentences,
    spans,
)
from provrag.engines.offline.judge.lexicon import ANTONYMS, NUMBER_WORDS, stem
from provrag.engines.offline.judge.opposites import find_turned
from provrag.engines.offline.judge.quantities import comparable, qty_ok
from provrag.engines.offline.judge.roles import subject_conflict
from provrag.engines.offline.judge.slots import find_swap


def _covered(s: str, pool: frozenset[str]) -> bool:
    """A claim stem is covered by a span when the span has it; or every part of a hyphenated
    word; or a span word starts with it or it with a span word, sharing ≥ 4 letters and most of
    the shorter word (derivations: Spain/Spanish, England/English; glued words: "CowboysMoore");
    or a near spelling of a long word (transliterations, typos: Raghunandan/Raghunandhan)."""
    if s in pool:
        return True
    if s.startswith(("/", "-")):
        # a path names one place: "/var" is not "/var/tmp"; a short option is its letter after a dash
        # ("-r" is not the "R." of "Emden R. Gansner")
        return False
    if "-" in s and all(stem(p) in pool for p in s.split("-") if p):
        return True
    if len(s) >= 4:
        return _near_any(s, pool)
    return False


def _near_any(s: str, pool: frozenset[str]) -> bool:
    """Is a word of the pool the claim stem `s` derived or glued (a common start of ≥ 4 letters and
    most of the shorter word: Spain/Spanish, "CowboysMoore"), or misspelt (rapidfuzz ratio ≥ 85:
    Raghunandan/Raghunandhan)? Without a Python call per pool word: the derived and glued words
    share s's first four letters, so they are found by bisection in the pool's sorted words, and a
    near spelling is rapidfuzz's extractOne over the pool (in C). The per-word loop it replaces made
    ~70,000 calls a question in an ask's answer check over ~9,500 units (37 ms, all of it holding
    the GIL a server's other requests wait on; 20 ms now); a verify's judge features 24.8 -> 22.2 ms
    a claim, the same verdicts (bench/results/verify_speed-near-2026-11-28.json)."""
    words = _sorted_words(pool)
    head = s[:4]
    for i in range(bisect_left(words, head), len(words)):
        w = words[i]
        if not w.startswith(head):
            break
        n = _common_prefix(s, w)
        if n >= 0.6 * min(len(s), len(w)) and (n == len(s) or n == len(w) or n >= 5):
            return True
    if len(s) >= 5:
        from rapidfuzz import fuzz, process

        return process.extractOne(s, words, scorer=fuzz.ratio, score_cutoff=85) is not None
    return False


@lru_cache(maxsize=512)
def _sorted_words(pool: frozenset[str]) -> tuple[str, ...]:
    """The pool's words in order (a claim's stems are looked up in the same pool many times)."""
    return tuple(sorted(pool))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _pool(t: Text) -> frozenset[str]:
    pool = set(t.all_stems)
    for s in list(pool):
        if "-" in s:
            pool.update(stem(p) for p in s.split("-") if p)
    return frozenset(pool)


def _lcs(a: list[str], b: list[str]) -> int:
    """Longest common subsequence length (small inputs: a claim against one span)."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _char_cosine(a: str, b: str) -> float:
    """Cosine of character 3-gram counts (lower-cased, per word): a lexical similarity that
    survives inflection, compounding and transliteration."""
    def grams(s):
        c: dict[str, int] = {}
        for w in re.findall(r"\w+", s.lower()):
            w = f" {w} "
            for i in range(len(w) - 2):
                g = w[i:i + 3]
                c[g] = c.get(g, 0) + 1
        return c
    ga, gb = grams(a), grams(b)
    if not ga or not gb:
        return 0.0
    dot = sum(v * gb.get(k, 0) for k, v in ga.items())
    return dot / math.sqrt(sum(v * v for v in ga.values()) * sum(v * v for v in gb.values()))


@lru_cache(maxsize=100_000)
def rarity(word: str) -> float:
    """How much a word says: 8 minus its Zipf frequency in English (wordfreq's "small" list, the
    fast one to load: every CLI call pays it), so "put" weighs ~2.3 and "acoustics" ~4.9; words
    too rare for the list (names, typos, "darkrooms") weigh 8. The frequency comes through the
    user cache (provrag/usercache.py): a cold ask whose words were weighed before does not
    import wordfreq (~0.3 s with ftfy and langcodes, issue 30)."""
    return max(0.5, 8.0 - _zipf_en()(word))


@lru_cache(maxsize=1)
def _zipf_en():
    from provrag.usercache import library_version, remembered

    def zipf(word: str) -> float:
        from wordfreq import zipf_frequency

        return zipf_frequency(word, "en", wordlist="small")

    return remembered(f"wordfreq {library_version('wordfreq')} zipf en small", zipf)


NUMBER_WEIGHT = 8.0  # a number or date says as much as the rarest word


def _antonym_hits(claim: Text, span_pool: frozenset[str]) -> list[str]:
    hits = []
    cs = set(claim.all_stems)
    for a, b in ANTONYMS:
        for x, y in ((a, b), (b, a)):
            if x in cs and x not in span_pool and y in span_pool and y not in cs:
                hits.append(f"{x}/{y}")
    return hits


def _negated(span: Text, claim_stems: set[str], pool) -> bool:
    """Does a negation cue in the span scope over the claim's words? A cue counts when one of the
    next three content words is a claim word ("does not form oxides"), so a negation in an
    unrelated clause of the same span ("had not put up a notice") does not flip the claim."""
    for i in span.neg_at:
        if any(w in claim_stems for w in span.stems[i:i + 3]):
            return True
    return False


def _negates_lent(sent: Text, claim: Text, core_pool, pool) -> bool:
    """Does a negation cue of this sentence scope over a claim word that the claim's core sentence
    (the span's sentence that states most of it) does not state — a word the span lends from
    this sentence, which states it negated — where the sentence says at least half the claim's
    words itself (a sentence about the claim, not an aside that shares its topic word: "Do not
    include the package name…" beside "The single line synopsis should be kept brief")?"""
    lent = {s for s in claim.stems if not _covered(s, core_pool)}
    words = set(claim.stems)
    return any(w in lent for i in sent.neg_at for w in sent.stems[i:i + 3]) \
        and 2 * sum(_covered(s, pool) for s in words) >= len(words)


def _claim_negated(claim: Text, pool) -> bool:
    """Does a negation of the claim scope over words the span states? The claim's side of the
    rule of `_negated`, used for contradiction only: "no equipment is energised without a permit"
    is not contradicted by a span that never mentions equipment, energising or permits (that span
    is off topic, not of the other polarity), while "was not elected" is by "was elected". A
    claim negation the span does not state still keeps the span from supporting the claim
    (`negation_mismatch`). A cue with no content word after it ("did not") is in scope."""
    for i in claim.neg_at:
        after = claim.stems[i:i + 3]
        # the word the negation is on (the first after it: "does not monitor", "was not elected")
        # must be stated: "Back to normal" does not bear on "does not monitor the normal \ref command"
        if not after or _covered(after[0], pool):
            return True
    return False


# every feature is bounded in [0, 1]: a linear score fitted on short dev claims must not run
# away on a long real one (an unbounded count of missing words once did exactly that)
FEATURES = ("coverage", "name_coverage", "unit_coverage", "focus_coverage",
            "max_missing", "number_missing", "number_conflict", "name_conflict",
            "negation_mismatch", "antonym", "similarity", "order", "grounded")


_NUMBER_TOKEN = re.compile(r"\d(?:[\d.,]*\d)?|[a-z]+")


def answer_numbers(claim: str, c, focus: str, f_focus) -> list:
    """The answer's quantities as the claim states them. A focus is the answer's words without
    their order or small words ("dollar risen less two percent per year"), so its numbers parsed
    again lose their bound and unit ("less than two percent" → 2, "by 70%, to $5.11 a barrel" →
    70 barrels) and a verbatim sentence would not state its own number; the claim's quantities
    whose number words the focus holds are the answer's (the focus's own, when none is)."""
    words = set(_NUMBER_TOKEN.findall(focus.lower()))
    mine = [q for q in c.numbers if any(tok in words and (tok[0].isdigit() or tok in NUMBER_WORDS)
                                        for tok in _NUMBER_TOKEN.findall(claim[q.start:q.end].lower()))]
    return mine or f_focus.numbers


def features(claim: str, evidence: str, max_window: int = 2, focus: str | None = None) -> dict:
    """Feature values of the claim against the best span of one evidence text (see the package doc)."""
    c = analyse(claim)
    f_focus = analyse(focus) if focus else None
    f_numbers = answer_numbers(claim, c, focus, f_focus) if f_focus is not None else []
    head, body_start = heading(evidence)
    head_t = analyse(head) if head else None
    head_pool = _pool(head_t) if head_t else frozenset()
    head_nums = head_t.numbers if head_t else []
    unit = analyse(evidence)
    unit_pool = _pool(unit)
    weights = [rarity(w) for w in c.words]
    total = (sum(weights) + NUMBER_WEIGHT * len(c.numbers)) or 1.0
    names = [s for s in dict.fromkeys(c.stems) if s in c.names]

    def coverage(pool, nums):
        hit = sum(w for s, w in zip(c.stems, weights) if _covered(s, pool))
        hit += NUMBER_WEIGHT * sum(qty_ok(q, nums) for q in c.numbers)
        return hit / total

    def focus_coverage(pool, nums):
        n = len(f_focus.stems) + len(f_numbers)
        if not n:
            return 0.0
        return (sum(_covered(s, pool) for s in f_focus.stems) + sum(qty_ok(q, nums) for q in f_numbers)) / n

    body = evidence[body_start:]
    cands = [(a + body_start, b + body_start) for a, b in spans(body, max_window)] if body.strip() \
        else [(0, len(evidence))]
    best = None
    for a, b in cands:
        st = analyse(evidence[a:b])
        pool = _pool(st) | head_pool
        nums = st.numbers + head_nums
        cov = coverage(pool, nums)
        # with a focus (the answer of a question), the span must be the one that states it
        fkey = focus_coverage(pool, nums) if f_focus is not None else 0.0
        # word order only breaks ties: a span behind the best on focus and coverage cannot win on it
        # (the claim's LCS with every span was ~a tenth of the judge's time, bench/verify_speed.py)
        if best is not None and (round(fkey, 6), round(cov, 6)) < best[0][:2]:
            continue
        order = _lcs(c.stems, st.stems) / max(1, len(c.stems))
        key = (round(fkey, 6), round(cov, 6), order, -(b - a))
        if best is None or key > best[0]:
            best = (key, a, b, st, pool, nums, cov, order)
    _, a, b, st, pool, nums, cov, order = best
    parts = [(x + body_start, y + body_start) for x, y in sentences(body)
             if a <= x + body_start and y + body_start <= b] if body.strip() else []
    # an affirmative claim's polarity is read in the sentence of the span that states most of it,
    # not in its neighbour ("…under 80 characters. Do not include the package name…"); a negated
    # claim's negation may be stated in any sentence of the span that bears on its words
    core, core_pool = st, pool
    if len(parts) > 1 and not c.negations:
        texts = [analyse(evidence[x:y]) for x, y in parts]
        covs = [coverage(_pool(t) | head_pool, t.numbers + head_nums) for t in texts]
        if covs.count(max(covs)) == 1:
            core = texts[covs.index(max(covs))]
            core_pool = _pool(core) | head_pool
            # …unless the span needs a neighbour for claim words that the neighbour negates: "…which
            # is rotated by 90 degrees. This does not affect the logical pages, which will not be
            # rotated…" says nothing for "rotates the logical pages" but under a negation
            lent = [t for t in texts if t is not core and _negates_lent(t, c, core_pool, _pool(t) | head_pool)]
            if lent:
                core, core_pool = lent[0], _pool(lent[0]) | head_pool
    miss_idx = [i for i, s in enumerate(c.stems) if not _covered(s, pool)]
    # with a focus, the question's own quantities are given context: only the answer's are checked
    checked = f_numbers if f_focus is not None else c.numbers
    num_missing = [q for q in checked if not qty_ok(q, nums)]
    name_missing = [s for s in names if not _covered(s, pool)]
    span_names = st.names - set(c.stems)
    if f_focus is not None and (f_focus.stems or f_numbers):
        focus_cov = focus_coverage(pool, nums)
    else:
        focus_cov = cov
    ant = _antonym_hits(c, pool)
    # a negated claim is matched by a negation of what it negates ("should not be kept brief" by
    # no "Do not include the package name"); an affirmative one is flipped by a negation of any of its words
    scope = {s for i in c.neg_at for s in c.stems[i:i + 3]} or set(c.stems)
    # the sentence that says the rest of the claim with another name or number in its place
    # (slots.py): found over every sentence of the text, since the claim's own word may stand in
    # another sentence of the best span or elsewhere in the text
    swap = find_swap(c, evidence, [(x + body_start, y + body_start) for x, y in sentences(body)] if body.strip()
                     else [(0, len(evidence))], lambda p, n: coverage(p, n + head_nums), lambda t: _pool(t) | head_pool,
                     _covered, cov, lambda stems: _lcs(c.stems, stems) / max(1, len(c.stems)), order)
    # else the sentence that says it with a word turned into its opposite, or two terms the other
    # way round (opposites.py): the claim's own word may stand elsewhere in the span, as in (6)
    turned = swap is None
    if turned:
        swap = find_turned(c, evidence, [(x + body_start, y + body_start) for x, y in sentences(body)]
                           if body.strip() else [(0, len(evidence))], lambda p, n: coverage(p, n + head_nums),
                           lambda t: _pool(t) | head_pool, _covered, lambda t: _negated(t, scope, None),
                           lambda stems: _lcs(c.stems, stems) / max(1, len(c.stems)))
    # the span's numbers that stand in a claim number's place: those of the sentence that states the
    # rest of the claim (`core`), and a neighbour's that count the same thing (words around them
    # shared: "opened in 2009" against "opened in 2010"); a neighbour's other numbers are about
    # its own subject ("…the value specified by --num-callers. --error-limit … after 10,000,000 in
    # total" does not say --num-callers' maximum is other than 500)
    said = [(core, n) for n in core.numbers] + [(head_t, n) for n in head_nums]
    in_place = {id(q): said + [(st, n) for n in st.numbers if n.ctx & q.ctx] for q in num_missing}
    conflicting = [q for q in num_missing if comparable(q, [n for _, n in in_place[id(q)]])
                   and not qty_ok(q, unit.numbers + head_nums)]
    return {
        "slot_swap": float(swap is not None),
        "swap_order": swap[3] if turned and swap is not None else 0.0,
        "turned": turned and swap is not None,   # the swap is an opposite word or a reversed pair
        "swaps": swap[0] if swap else [],
        "swap_span": swap[1] if swap else None,
        "swap_coverage": swap[2] if swap else 0.0,
        "span": (a, b),
        "missing_words": [c.words[i] for i in miss_idx],
        # missing words that are not names: a swapped name leaves none (the span says the rest)
        "missing_other": sum(1 for i in miss_idx if c.stems[i] not in set(names)),
        "missing_numbers": [(focus if f_focus is not None and any(q is x for x in f_focus.numbers) else claim)[q.start:q.end]
                            for q in num_missing],
        "antonyms": ant,
        "coverage": cov,
        "name_coverage": (1 - len(name_missing) / len(names)) if names else 1.0,
        "unit_coverage": coverage(unit_pool, unit.numbers),
        "focus_coverage": focus_cov,
        "max_missing": max([weights[i] for i in miss_idx] + [0.0]) / 8.0,   # rarest missing word, 0..1
        "number_missing": float(bool(num_missing)),
        # a claim number the whole text never states, where the span states one of its kind in its place
        "number_conflict": float(bool(conflicting)),
        # what the span states there, as it reads ("12"), for the reason shown: not the numbers
        # the claim states too ("0555" of "0555 0123" against "0555 0199")
        "stated_numbers": list(dict.fromkeys(
            normalise(t.raw)[n.start:n.end] for q in conflicting for t, n in in_place[id(q)]
            if comparable(q, [n]) and not any(qty_ok(x, [n]) for x in c.numbers))),
        "name_conflict": float(bool(name_missing) and bool(span_names)),
        "negation_mismatch": float((c.negations > 0) != _negated(core, scope, core_pool)),
        # the stricter form a contradiction needs: the claim's negation must bear on what the span states
        "negation_conflict": float(_claim_negated(c, core_pool) != _negated(core, scope, core_pool)),
        # the claim's words a negation of the span scopes over, where the claim affirms them
        "negated_words": [] if c.negations else list(dict.fromkeys(
            w for i in core.neg_at for w, s in zip(c.words, c.stems) if s in core.stems[i:i + 3])),
        "antonym": float(bool(ant)),
        # the span gives the claim's deed to another named subject ("the S language which was developed…")
        "subject_conflict": float(subject_conflict(claim, [evidence[x:y] for x, y in parts] or [evidence[a:b]])),
        "similarity": _char_cosine(normalise(claim), normalise(evidence[a:b])),
        "order": order,
        # the answer words stated AND the rest of the claim found in the same text: an answer
        # word alone ("1912", "earlier") in an unrelated text is no support
        "grounded": focus_cov * coverage(unit_pool, unit.numbers),
    }


def states(words: str, span: str, text: str) -> bool:
    """Does the span (with its text's heading) state every content word, number and opposable
    word ("below", "all") of `words` — a claim's words that another text states otherwise?"""
    from provrag.engines.offline.judge.opposites import opposite_words

    w, t = analyse(words), analyse(span)
    head, _ = heading(text)
    head_t = analyse(head) if head else None
    pool = _pool(t) | (_pool(head_t) if head_t else frozenset())
    nums = t.numbers + (head_t.numbers if head_t else [])
    return all(_covered(s, pool) for s in w.stems) and all(qty_ok(q, nums) for q in w.numbers) \
        and all(s in pool for s in w.all_stems if s in opposite_words())
