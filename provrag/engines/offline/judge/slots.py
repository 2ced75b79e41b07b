"""A swapped word: where the sentence of the evidence that says the rest of a claim has another
name, command or number in the claim's place.

"\\cmidrule is the analogue of LaTeX's \\hline command" against "\\cmidrule (the analogue of
LaTeX's \\cline command)": the claim's \\hline sits between "LaTeX's" and "command", and so does
the sentence's \\cline. Coverage alone cannot see it when the claim's word stands elsewhere in
the evidence (\\hline a sentence earlier, "version 1.20" in the next sentence about another
feature): the word is found, the claim is "covered". The swap is found by alignment instead: the
claim's neighbours of its name or number (its anchors) stand together in the sentence around a
different token of the same family (a name for a name, a number for a number). A swap counts only
in a sentence that says the rest of the claim (all but MAX_MISSING of its words, with the swapped
ones put back), at least as much of it as the span the claim was matched to or closer to its word
order, and more of it than any sentence of the text says as it stands: a sentence about another
thing that happens to share two words does not deny the claim.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from provrag.engines.offline.judge.analysis import Text
from provrag.engines.offline.judge.quantities import qty_ok

# at most this many tokens between the two anchors in the sentence: "version 0.14f or later"
# holds one; a parenthesis or an article may add one more
MAX_GAP = 2
# the swap's sentence says the rest of the claim: with the claim's run put back it lacks at most
# this many of the claim's words (its topic, the package or product, is often named only in a
# title: "In booktabs, \cmidrule is …" against "… a \cmidrule (the analogue of …)")
MAX_MISSING = 1


@dataclass(frozen=True)
class Token:
    """One content word, name or number of a text, where it stands."""

    pos: int
    kind: str          # "word" | "name" | "num"
    stem: str          # the stem ("" for a number)
    surface: str
    qty: object = None


def tokens(t: Text, raw: str) -> list[Token]:
    """The text's content words, names and numbers in reading order."""
    out = [Token(p, "name" if s in t.names else "word", s, w) for p, s, w in zip(t.pos, t.stems, t.words)]
    out += [Token(q.start, "num", "", raw[q.start:q.end], q) for q in t.numbers]
    return sorted(out, key=lambda k: k.pos)


@lru_cache(maxsize=4_096)
def sentence_tokens(raw: str) -> tuple[Token, ...]:
    """`tokens` of an evidence sentence, read once: the swap search reads every sentence of a
    text for every claim judged against it. Tokens are frozen, so sharing them is safe."""
    from provrag.engines.offline.judge.analysis import analyse, normalise

    return tuple(tokens(analyse(raw), normalise(raw)))


def _same(a: Token, b: Token, covered) -> bool:
    if a.kind == "num" or b.kind == "num":
        return a.kind == b.kind == "num" and qty_ok(a.qty, [b.qty])
    return a.stem == b.stem or _same_stem(a.stem, b.stem, covered)


@lru_cache(maxsize=65_536)
def _same_stem(a: str, b: str, covered) -> bool:
    """Does the stem `a` cover the stem `b`, as `covered` reads a one-word pool? Kept: the swap
    search compares each claim anchor with every token of every evidence sentence (~3,800 such
    comparisons a claim on ~9,500 units, mostly the same pairs again), and `covered` is a pure
    function of its words (features._covered, the only one passed)."""
    return covered(a, frozenset([b]))


def _other(c: Token, s: Token, covered) -> bool:
    """Is the sentence's token another of the claim token's family (a different name for a name,
    a different number for a number)?"""
    if c.kind == "num":
        return s.kind == "num" and not qty_ok(c.qty, [s.qty])
    return c.kind == "name" and s.kind == "name" and not _same(c, s, covered)


def stated(c: Token, sent: Text, pool: frozenset[str], covered) -> bool:
    """Does the sentence state the claim's token anywhere?"""
    return qty_ok(c.qty, sent.numbers) if c.kind == "num" else covered(c.stem, pool)


def swaps(claim: list[Token], sent: list[Token], sent_text: Text, pool: frozenset[str],
          covered) -> list[tuple[list[Token], list[Token]]]:
    """(claim's tokens, sentence's tokens) for each run of claim names or numbers the sentence does
    not state but replaces between the same anchors ("the old Kestrel Point works" against "the
    old Varrow Road works"). An anchor is the claim's word right before or after the run (a
    number is no anchor); a run at the claim's edge needs its one anchor, any other both."""
    out = []
    i = 0
    while i < len(claim):
        if claim[i].kind == "word" or stated(claim[i], sent_text, pool, covered):
            i += 1
            continue
        k = i
        while k + 1 < len(claim) and claim[k + 1].kind != "word" and not stated(claim[k + 1], sent_text, pool, covered):
            k += 1
        run = claim[i:k + 1]
        left = claim[i - 1] if i > 0 and claim[i - 1].kind != "num" else None
        right = claim[k + 1] if k + 1 < len(claim) and claim[k + 1].kind != "num" else None
        i = k + 1
        if left is None and right is None or (0 < i - len(run) and i < len(claim) and (left is None or right is None)):
            continue
        lefts = [j for j, t in enumerate(sent) if left is not None and _same(left, t, covered)]
        rights = [j for j, t in enumerate(sent) if right is not None and _same(right, t, covered)]
        gap = MAX_GAP + len(run) - 1
        if left is not None and right is not None:
            spots = [sent[j + 1:r] for j in lefts for r in rights if 0 < r - j - 1 <= gap]
        elif left is not None:
            spots = [sent[j + 1:j + 1 + len(run)] for j in lefts]
        else:
            spots = [sent[max(0, r - len(run)):r] for r in rights]
        for between in spots:
            # the place holds only tokens of the run's family ("Varrow Road" for "Kestrel Point"),
            # not a year and a title after a name ("Gentleman (1996), "R: A Language"")
            if between and all(_other(c, t, covered) for c in run[:1] for t in between):
                out.append((run, list(between)))
                break
    return out


def find_swap(claim: Text, evidence: str, sents: list[tuple[int, int]], coverage, pool_of, covered,
              floor: float, order_of, floor_order: float) -> tuple[list[tuple[str, str]], tuple[int, int], float] | None:
    """The evidence sentence that says the rest of the claim with another name or number in its
    place: ([(claim's token, sentence's token)], the sentence's span, how much of the claim it
    says with the claim's tokens put back). `coverage(pool, numbers)` is the claim's weighted
    coverage (features.py), `floor` the best span's, `order_of(stems)` the share of the claim's
    words a text says in the claim's order, `floor_order` the best span's: a swap counts only in a
    sentence that, with the claim's tokens put back, says at least as much as the span the claim
    was matched to or says it closer to the claim's word order (a title page that names the
    package covers more of the claim's words than the sentence that states what it requires), and
    where no sentence says as much with them (the claim is stated elsewhere, then, word for word)."""
    from provrag.engines.offline.judge.analysis import analyse, normalise

    ctoks = tokens(claim, normalise(claim.raw))
    if all(k.kind == "word" for k in ctoks):
        return None
    rows = []
    for a, b in sents:
        st = analyse(evidence[a:b])
        rows.append((a, b, st, pool_of(st)))
    said: list[float] = []   # each sentence's coverage as it stands, computed once a swap needs it
    best = None
    for a, b, st, pool in rows:
        stoks = sentence_tokens(st.raw)
        found = swaps(ctoks, stoks, st, pool, covered)
        if not found:
            continue
        back_pool = pool | {c.stem for run, _ in found for c in run if c.kind == "name"}
        back_nums = st.numbers + [c.qty for run, _ in found for c in run if c.kind == "num"]
        lacking = [c for c in ctoks if not (qty_ok(c.qty, back_nums) if c.kind == "num" else covered(c.stem, back_pool))]
        if len(lacking) > MAX_MISSING:
            continue
        put_back = coverage(back_pool, back_nums)
        # the sentence's words with the claim's put in place of the swapped ones, for word order
        instead = {id(between[0]): run for run, between in found if between}
        gone = {id(t) for _, between in found for t in between}
        stems = [x.stem for t in stoks for x in (instead.get(id(t)) or ([] if id(t) in gone else [t]))
                 if x.kind != "num"]
        closer = put_back >= floor - 1e-9 or order_of(stems) > floor_order + 1e-9
        if not closer:
            continue
        said = said or [coverage(p, t.numbers) for _, _, t, p in rows]
        if any(cov >= put_back - 1e-9 for cov in said):
            continue
        if best is None or put_back > best[2]:
            best = ([(" ".join(c.surface for c in run), " ".join(t.surface for t in between))
                     for run, between in found], (a, b), put_back)
    return best
