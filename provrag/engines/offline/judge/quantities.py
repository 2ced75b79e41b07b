"""Numbers, dates and bounds: what a claim's quantities are, and whether a span states them.

A claim number missing from a span that states other numbers is a contradiction signal
("renamed in 1912" against "renamed … in 1913"), so quantities are compared as values at the
claim's granularity (a year against a full date), with the bound words in front of them
("more than 3,000", "before October 2014") checked against the span's values, never matched
literally.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from provrag.engines.offline.judge.lexicon import NUMBER_WORDS, stem
from provrag.text.words import JUDGE_STOP_WORDS as STOP

SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "k": 1e3, "m": 1e6, "bn": 1e9}
# "first" is left out: it is mostly an order ("came out first"), kept as a word (ANTONYMS: first/last)
MONTHS = {m: i + 1 for i, m in enumerate("january february march april may june july august "
                                            "september october november december".split())}
# words in front of a number or date that make it a bound, not a value (longest first)
BOUNDS = [
    ("no more than", "<="), ("no less than", ">="), ("more than", ">"), ("greater than", ">"),
    ("higher than", ">"), ("larger than", ">"), ("in excess of", ">"), ("upwards of", ">"),
    ("later than", ">"), ("at least", ">="), ("less than", "<"), ("fewer than", "<"),
    ("lower than", "<"), ("smaller than", "<"), ("earlier than", "<"), ("prior to", "<"),
    ("at most", "<="), ("up to", "<="), ("over", ">"), ("above", ">"), ("exceeding", ">"),
    ("after", ">"), ("since", ">="), ("under", "<"), ("below", "<"), ("before", "<"),
    ("until", "<="), ("by", "<="), ("about", "~"), ("around", "~"), ("approximately", "~"),
    ("nearly", "~"), ("almost", "~"), ("roughly", "~"), ("circa", "~"), ("some", "~"),
    ("estimated", "~"), ("c.", "~"), ("approx.", "~"),
]
_BOUND_RE = re.compile(r"(?:" + "|".join(re.escape(w) for w, _ in BOUNDS) + r")\s*(?:[$€£¥#]\s*)?$")
_BOUND_OF = dict(BOUNDS)
_BOUND_AFTER = re.compile(r"\s+or\s+(more|greater|higher|above|over|later|less|fewer|lower|below|under|earlier)\b")
_BOUND_AFTER_OF = {w: ">=" for w in ("more", "greater", "higher", "above", "over", "later")} | \
    {w: "<=" for w in ("less", "fewer", "lower", "below", "under", "earlier")}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
_DATE_RES = [  # (regex, kind, group order) — dates before plain numbers so their parts are consumed
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"(?:\s*,\s*|\s+)(\d{4})\b"), "ymd", "dmy"),
    (re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?(?:\s*,\s*|\s+)(\d{4})\b"), "ymd", "mdy"),
    (re.compile(r"\b" + _MONTH + r"(?:\s*,\s*|\s+)(?:of\s+)?(\d{4})\b"), "ym", "my"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b"), "md", "dm"),
    (re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d)"), "md", "md"),
]
# a unit written against its number ("20pt", "2.5m", "10mm") is the number's unit, read by `add`
# after it as it would be after a space; without it "20pt" was no number at all. The unit may end a
# sentence ("… a minimum of 10MB."): a full stop after it was taken for a file name's ("10mb.txt"),
# so "10MB." was no number and a claim of 10MB where the evidence says 100MB was supported
_NUM = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:st|nd|rd|th|s)?(?:(?![\w])|(?=[a-z]{1,3}(?!\w|\.\w)))")
# a release named with a "v" ("v4.08", "v3.0f") is a version, compared whole: read as the number
# 4.08 it was within rounding of 4.09
_V_VERSION = re.compile(r"(?<![\w.])v(\d+(?:\.\d+)+)([a-z])?(?![\w.]\d|\w)")
# an ISO date ("2021-12-31", "2022/06/12"): one date, not a year and two numbers
_ISO_DATE = re.compile(r"(?<![\w.\-/])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\w\-/]|\.\d)")
_VERSION = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+)+(?![\w.]\d)")
# a release with a letter ("pdfTeX 0.14f", "2.4b") is one version; read as a number it was "0"
# (the letter glued to it hid the decimals). Letters that are units after a number ("2.5m",
# "1.5k", "3.2x") are left to the number reader.
_LETTERED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+)([a-fh-jn-rt-wyz])(?![\w.])")
_NUMWORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
# a manual page's name with its section ("gvpack(1)", "printf(3)", "exit(3p)") names a page, it
# states no quantity: the "1" of a page's running header "GVPACK(1)" stood against a claim's
# "at most 1,000" and made gvpack's page contradict it
_MAN_REF = re.compile(r"(?<=[a-z0-9_+-])\(\d[a-z]{0,2}\)")
# every pattern above but _NUMWORD matches a digit (\d) or nothing: a text without one is searched
# for number words alone (half the judge's sentences and spans have no digit; the ten searches
# were ~40 % of reading one, bench/verify_speed.py)
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Qty:
    """A number or a date. Dates are (kind, value): "y" year, "ym" y*100+m, "md" m*100+d,
    "ymd" y*10000+m*100+d; numbers are kind "num", dotted versions ("1.7.1") kind "ver"."""

    kind: str
    value: float
    bound: str      # "" | ">" | ">=" | "<" | "<=" | "~"
    start: int      # the matched characters, bound words included
    end: int
    ctx: frozenset = frozenset()  # content stems around it (3 each side): what the number counts
    unit: str = ""                # the word or sign right after it ("%", "km", "troph"): its unit
    after: frozenset = frozenset()  # content stems right after it (2): what it counts ("competitive trophies")


def _month(s: str) -> int:
    s = s.lower().rstrip(".")
    for name, i in MONTHS.items():
        if name.startswith(s[:3]):
            return i
    return 0


def quantities(text: str) -> list[Qty]:
    """Dates ("1 July 2015", "October 2014", "August 6"), numbers (1,000 / 3.5 million / 7th /
    "seven"), each with the bound words before it ("more than", "before", "about")."""
    low = text.lower()
    taken = [False] * (len(low) + 1)
    out: list[Qty] = []

    def bound_at(start: int) -> tuple[str, int]:
        m = _BOUND_RE.search(low, max(0, start - 16), start)
        return (_BOUND_OF[m.group(0).rstrip(" $€£¥#\t\n")], m.start()) if m else ("", start)

    def add(kind, value, a, b):
        bd, a2 = bound_at(a)
        after = _BOUND_AFTER.match(low, b)  # "two or more spaces": a bound written after the number
        if after and not bd:
            bd = _BOUND_AFTER_OF[after.group(1)]
        u = re.match(r"\s*(%|percent\b|°|[a-z][a-z'-]*)", low[after.end() if after else b:b + 30])
        unit = "%" if u and u.group(1) in ("%", "percent") else (stem(u.group(1)) if u else "")
        # "1.20 or later": the bound written after the number is part of the quantity (compared
        # as a value), not a content word a span could lack
        b = after.end() if after else b
        out.append(Qty(kind, float(value), bd, a2, b, unit=unit if unit not in STOP else ""))
        for i in range(a, b):
            taken[i] = True

    digits = _DIGIT.search(low) is not None
    for m in _MAN_REF.finditer(low) if digits else ():
        for i in range(m.start(), m.end()):
            taken[i] = True
    for rx, kind, order in _DATE_RES if digits else ():
        for m in rx.finditer(low):
            if any(taken[m.start():m.end()]):
                continue
            g = dict(zip(order, m.groups()))
            mo, d, y = _month(g.get("m", "")), int(g.get("d") or 0), int(g.get("y") or 0)
            if not mo or (d and not 1 <= d <= 31):
                continue
            value = {"ymd": y * 10000 + mo * 100 + d, "ym": y * 100 + mo, "md": mo * 100 + d}[kind]
            add(kind, value, m.start(), m.end())
    for m in _ISO_DATE.finditer(low) if digits else ():
        y, mo, d = (int(x) for x in m.groups())
        if not any(taken[m.start():m.end()]) and 1 <= mo <= 12 and 1 <= d <= 31:
            add("ymd", y * 10000 + mo * 100 + d, m.start(), m.end())
    for m in _V_VERSION.finditer(low) if digits else ():
        if taken[m.start()]:
            continue
        parts = [int(x) for x in m.group(1).split(".")][:4] + ([ord(m.group(2)) - 96] if m.group(2) else [])
        add("ver", sum(p * 10000 ** (4 - i) for i, p in enumerate(parts)), m.start(), m.end())
    for m in _LETTERED.finditer(low) if digits else ():  # "0.14f": the letter is the version's last part
        parts = [int(x) for x in m.group(1).split(".")][:4] + [ord(m.group(2)) - 96]
        add("ver", sum(p * 10000 ** (4 - i) for i, p in enumerate(parts)), m.start(), m.end())
    for m in _VERSION.finditer(low) if digits else ():  # "R 1.7.1": a version is one value, compared whole
        if taken[m.start()]:
            continue
        parts = [int(x) for x in m.group(0).split(".")][:5]
        add("ver", sum(p * 10000 ** (4 - i) for i, p in enumerate(parts)), m.start(), m.end())
    for m in _NUM.finditer(low) if digits else ():
        if taken[m.start()]:
            continue
        v = float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))
        end = m.end()
        nxt = re.match(r"\s*(thousand|million|billion|trillion|bn)\b", low[end:])
        if nxt:
            v *= SCALES[nxt.group(1)]
            end += nxt.end()
        plain_year = m.group(2) is None and "," not in m.group(1) and 1000 <= v <= 2100 and not nxt
        add("y" if plain_year else "num", v, m.start(), end)
    for m in _NUMWORD.finditer(low):
        w = m.group(1)
        # mostly not numbers: "one of", "a second time", "double quote", "triple jump"
        if taken[m.start()] or w in ("one", "second", "single", "once", "double", "triple"):
            continue
        v, end = float(NUMBER_WORDS[w]), m.end()
        nxt = re.match(r"\s*(thousand|million|billion|trillion)\b", low[end:])
        if nxt:
            v *= SCALES[nxt.group(1)]
            end += nxt.end()
        add("num", v, m.start(), end)
    return out


def _cmp(cv: float, bound: str, sv: float, tol: float) -> bool:
    if bound == ">":
        return sv > cv
    if bound == ">=":
        return sv >= cv - tol
    if bound == "<":
        return sv < cv
    if bound == "<=":
        return sv <= cv + tol
    if bound == "~":
        return abs(sv - cv) <= max(tol, 0.1 * abs(cv))
    return abs(sv - cv) <= tol


def _project(q: Qty, kind: str) -> float | None:
    """A span quantity seen at the granularity of a claim quantity of `kind` (None: not comparable)."""
    v = int(q.value)
    if kind == "num":
        return q.value if q.kind in ("num", "y") else None
    if kind == "y":
        return {"y": v, "ym": v // 100, "ymd": v // 10000}.get(q.kind)
    if kind == "ym":
        return {"ym": v, "ymd": v // 100}.get(q.kind)
    if kind == "md":
        return {"md": v, "ymd": v % 10000}.get(q.kind)
    if kind == "ymd":
        return v if q.kind == "ymd" else None
    if kind == "ver":
        return q.value if q.kind == "ver" else None
    return None


def _anchored(c: Qty, span: list[Qty]) -> list[Qty]:
    """The span quantities that count the same thing as the claim's: those whose surrounding
    words overlap the claim quantity's most ("under 65 trophies" is compared with "65 competitive
    trophies", not with "Leeds United's 9"). Without any overlap, none: a bound met by a number
    about something else is not stated ("pdfTeX version 1.20 or later" is not met by the "23" of a
    title page's date). A claim number with no words around it is compared with all of them."""
    cands = [q for q in span if _project(q, c.kind) is not None]
    if not c.ctx or not cands:
        return cands
    best = max(len(c.ctx & q.ctx) for q in cands)
    return [q for q in cands if len(c.ctx & q.ctx) == best] if best else []


def qty_ok(c: Qty, span: list[Qty]) -> bool:
    """Is the claim's quantity stated or implied by one of the span's quantities? An exact value
    may be anywhere in the span; a bound ("more than 3,000 km²") is compared with the span's
    quantities of the same unit ("3,178 km²"), else with the best-anchored ones."""
    cands = [q for q in span if _project(q, c.kind) is not None]
    if c.bound == "":
        tol = 0.005 * abs(c.value) if c.kind == "num" else 0.0
        if any(q.bound in ("", "~") and abs(_project(q, c.kind) - c.value) <= tol for q in cands):
            return True
    same_unit = [q for q in cands if c.unit and q.unit == c.unit]
    # a bound is met only by a value of the same thing: "under 40 characters" by "80 characters",
    # "under 65 trophies" by "65 competitive trophies", never by "two or more spaces"
    for q in same_unit or [q for q in _anchored(c, cands) if not c.unit or c.unit in q.after]:
        sv = _project(q, c.kind)
        if sv is None:
            continue
        tol = 0.005 * abs(c.value) if c.kind == "num" else 0.0
        if q.bound in ("", "~") or q.bound == c.bound:
            if q.bound == "~" and c.bound == "":
                if abs(sv - c.value) <= max(tol, 0.1 * abs(c.value)):
                    return True
            elif q.bound == c.bound and c.bound:
                # same kind of bound: "over 20 million" implies "over 10 million"
                if c.bound in (">", ">=") and sv >= c.value - tol or c.bound in ("<", "<=") and sv <= c.value + tol \
                        or c.bound == "~" and abs(sv - c.value) <= max(tol, 0.1 * abs(c.value)):
                    return True
            elif _cmp(c.value, c.bound, sv, tol):
                return True
    return False


def comparable(c: Qty, span: list[Qty]) -> bool:
    """Does the span state a quantity of the same kind (so a missing value is a mismatch)?"""
    return any(_project(q, c.kind) is not None for q in span)

