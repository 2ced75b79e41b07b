"""The offline claim judge: does this piece of evidence support, contradict, or not bear on a claim?

No NLI model can be had offline here (RESEARCH.md: no trustworthy NLI weights in the registries),
so the judge is an explicit decision procedure over features that fact-checking work shows to
matter, computed between the claim and the best-matching span of ONE evidence text at a time
(MiniCheck/AlignScore style: never one joined premise, so every verdict keeps its page):

1. spans — the evidence is cut into sentences (pysbd, plus seams where paragraphs were glued
   together without a space) and every window of 1..`max_window` consecutive sentences is a
   candidate span; a leading Markdown heading is context for every span (a page's subject is
   often only in its title).
2. coverage — share of the claim's content words (stemmed, Snowball) found in the span, weighted
   towards names and rare words; names (capitalised tokens) and the claim's *focus* (for a
   question-derived claim: the answer's own words) are also measured alone, in the span and in
   the whole evidence text (multi-hop facts sit in two sentences of one unit).
3. agreement — numbers, years and dates of the claim must be stated in the span; a claim number
   missing from a span that states other numbers is a contradiction signal ("renamed in 1912"
   against "renamed … in 1913"), and so is a claim name missing from a span that otherwise matches.
   Comparatives ("more than 3,000") are checked against the span's numbers, not matched literally.
4. polarity — negation cues ("not", "never", "no longer", "failed to", …) counted on both sides,
   and antonym pairs (a small hand list, see ANTONYMS) where the claim's word is missing from the
   span but its opposite is there.
5. similarity — character n-gram cosine between claim and span (robust to inflection and
   transliteration), and the longest common subsequence of content words (word order: who did
   what to whom).

The features are combined linearly (logistic) into a support score and a contradiction score;
weights and thresholds are fitted on ../shared/eval/dev only (bench/fit_judge.py) and live in
config.toml [verify], so a user can read and change them. Decision for one span:
- vetoes first: a negation that scopes over the claim's words on one side only, an antonym, or a
  claim number the text never states where the span states another → never *supported*;
- *supported* when the support score is at or above `support_threshold`;
- else *contradicted* when the span covers at least `contradict_min_coverage` of the claim and
  a veto fired — a claim's negation only where the span states the negated words (a span silent
  on them is off topic, not of the other polarity) — or a claim name is missing where the span
  names others and the contradiction score is at or above `contradict_threshold` (never on low
  overlap alone);
- else *unsupported*.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from provrag.config import VerifySettings
from provrag.text.words import stem as snowball_stem

# ---- word lists (hand-written: the judge must run with no downloaded lexicon) -------------------

# Function words. sklearn's English list is not used as is: it treats meaning-bearing words
# ("first", "last", "never", "more", "less", "system", "fire", "bill") as stop words.
STOP = frozenset("""
a an the and or but if then than that this these those there here of in on at by for from to with
into onto upon as is are was were be been being am do does did doing done has have had having
it its it's he him his she her hers they them their theirs we us our ours you your yours i me my
mine who whom whose which what when where why how whether while also too very so such just
can could may might must shall should will would about around via per etc eg ie
one's oneself himself herself itself themselves ourselves yourself yourselves
some any each every all both either neither other others another same own
s t d ll m re ve
""".split())

NEGATION = frozenset("""not no never none nobody nothing neither nor without cannot cant n't
dont doesnt didnt isnt wasnt arent werent hasnt havent hadnt wont wouldnt couldnt shouldnt
unable fail fails failed failing refuse refused refuses lack lacks lacked deny denied denies
""".split())

# Opposites that flip a claim without a negation word. Hand list (no offline WordNet here);
# each pair is symmetric and matched on Snowball stems. No ("with", "without"): "without" is a
# negation cue, judged in its scope; as an unscoped pair any "met with" contradicted "without a permit".
ANTONYMS = [
    ("more", "less"), ("more", "fewer"), ("most", "least"), ("increas", "decreas"),
    ("rise", "fall"), ("rose", "fell"), ("gain", "loss"), ("win", "lose"), ("won", "lost"),
    ("win", "defeat"), ("before", "after"), ("earli", "later"), ("first", "last"),
    ("begin", "end"), ("start", "end"), ("start", "finish"), ("high", "low"), ("higher", "lower"),
    ("highest", "lowest"), ("larg", "small"), ("larger", "smaller"), ("largest", "smallest"),
    ("big", "small"), ("bigger", "smaller"), ("biggest", "smallest"), ("long", "short"),
    ("longer", "shorter"), ("longest", "shortest"), ("old", "young"), ("older", "younger"),
    ("oldest", "youngest"), ("old", "new"), ("above", "below"), ("over", "under"),
    ("major", "minor"), ("maximum", "minimum"), ("posit", "negat"), ("success", "failur"),
    ("accept", "reject"), ("allow", "forbid"), ("allow", "prohibit"), ("includ", "exclud"),
    ("open", "close"), ("alive", "dead"), ("male", "femal"),
    ("man", "woman"), ("men", "women"), ("husband", "wife"), ("son", "daughter"),
    ("father", "mother"), ("brother", "sister"), ("king", "queen"), ("north", "south"),
    ("east", "west"), ("northern", "southern"), ("eastern", "western"), ("intern", "domest"),
    ("public", "privat"), ("urban", "rural"), ("modern", "ancient"), ("true", "fals"),
    ("right", "wrong"), ("good", "bad"), ("best", "worst"), ("better", "wors"),
    ("strong", "weak"), ("rich", "poor"), ("hot", "cold"), ("warm", "cool"), ("fast", "slow"),
    ("easi", "difficult"), ("easi", "hard"), ("entir", "partial"), ("alway", "never"),
    ("everi", "none"), ("all", "none"), ("present", "absent"),
    ("support", "oppos"), ("agre", "disagre"), ("like", "dislik"), ("love", "hate"),
    ("friend", "enemi"), ("ally", "enemi"), ("legal", "illeg"), ("import", "export"),
    ("buy", "sell"), ("bought", "sold"), ("arriv", "depart"), ("enter", "exit"),
    ("fiction", "nonfict"), ("comedi", "drama"), ("comedi", "tragedi"), ("film", "televis"),
    ("film", "seri"), ("movi", "televis"), ("singl", "marri"), ("only", "mani"), ("exclus", "primarili"),
    ("sole", "joint"), ("full", "part"), ("full-tim", "part-tim"), ("profession", "amateur"),
    ("same", "differ"), ("similar", "differ"), ("possibl", "imposs"), ("like", "unlik"),
    ("abl", "unabl"), ("known", "unknown"), ("popular", "unpopular"), ("success", "unsuccess"),
]

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "once": 1, "twice": 2, "thrice": 3, "single": 1, "double": 2, "triple": 3,
    "dozen": 12, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}
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
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
_DATE_RES = [  # (regex, kind, group order) — dates before plain numbers so their parts are consumed
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"(?:\s*,\s*|\s+)(\d{4})\b"), "ymd", "dmy"),
    (re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?(?:\s*,\s*|\s+)(\d{4})\b"), "ymd", "mdy"),
    (re.compile(r"\b" + _MONTH + r"(?:\s*,\s*|\s+)(?:of\s+)?(\d{4})\b"), "ym", "my"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b"), "md", "dm"),
    (re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d)"), "md", "md"),
]
_NUM = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:st|nd|rd|th|s)?(?![\w])")
_VERSION = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+)+(?![\w.]\d)")
_NUMWORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")


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
        u = re.match(r"\s*(%|percent\b|°|[a-z][a-z'-]*)", low[b:b + 30])
        unit = "%" if u and u.group(1) in ("%", "percent") else (stem(u.group(1)) if u else "")
        out.append(Qty(kind, float(value), bd, a2, b, unit=unit if unit not in STOP else ""))
        for i in range(a, b):
            taken[i] = True

    for rx, kind, order in _DATE_RES:
        for m in rx.finditer(low):
            if any(taken[m.start():m.end()]):
                continue
            g = dict(zip(order, m.groups()))
            mo, d, y = _month(g.get("m", "")), int(g.get("d") or 0), int(g.get("y") or 0)
            if not mo or (d and not 1 <= d <= 31):
                continue
            value = {"ymd": y * 10000 + mo * 100 + d, "ym": y * 100 + mo, "md": mo * 100 + d}[kind]
            add(kind, value, m.start(), m.end())
    for m in _VERSION.finditer(low):  # "R 1.7.1": a version is one value, compared whole
        parts = [int(x) for x in m.group(0).split(".")][:5]
        add("ver", sum(p * 10000 ** (4 - i) for i, p in enumerate(parts)), m.start(), m.end())
    for m in _NUM.finditer(low):
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
        if taken[m.start()] or w in ("one", "second", "single", "once"):  # mostly not numbers ("one of")
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
    trophies", not with "Leeds United's 9"). Without any overlap, all comparable ones."""
    cands = [q for q in span if _project(q, c.kind) is not None]
    if not c.ctx or not cands:
        return cands
    best = max(len(c.ctx & q.ctx) for q in cands)
    return [q for q in cands if len(c.ctx & q.ctx) == best] if best else cands


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
    for q in same_unit or _anchored(c, cands):
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


_WORD = re.compile(r"[A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F'’\-]*|\d[\d,]*(?:\.\d+)?")
_SEAM = re.compile(r"(?:(?<=[a-z0-9][.!?])|(?<=[a-z0-9][.!?][\"')\]]))(?=[A-Z][a-z])")
_PTB = [("-LRB-", "("), ("-RRB-", ")"), ("-LSB-", "["), ("-RSB-", "]"), ("-LCB-", "{"), ("-RCB-", "}"),
        ("-COLON-", ":"), ("``", '"'), ("''", '"')]


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    w = word.lower().strip("'’-").replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    return snowball_stem(w)


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


@lru_cache(maxsize=20_000)
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
        if tok[0].isupper() and (i > 0 or tok.isupper() or len(matches) < 3 or low not in _COMMON_START):
            t.names.add(s)
    import bisect
    from dataclasses import replace

    for n, q in enumerate(t.numbers):
        a, b = bisect.bisect_left(pos, q.start), bisect.bisect_left(pos, q.end)
        t.numbers[n] = replace(q, ctx=frozenset(t.stems[max(0, a - 3):a] + t.stems[b:b + 3]))
    return t


# capitalised only because they start a sentence
_COMMON_START = frozenset("""in on at the a an this that these those it he she they there his her its their
after before during since when while as although though however then also both some many most all
according following today currently later early""".split())


# ---- spans --------------------------------------------------------------------------------------

def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence offsets: pysbd, then split again where paragraphs were glued ("century.First").

    pysbd ends a segment at every newline, so PDF text wrapped at ~80 characters would be
    judged line by line (a claim spread over three lines fits no two-sentence window): it reads
    a copy of the same length in which a line wrap is a space, and so is a page break with its
    page number ("Four of | Page 8 | the sororities"); a blank line still ends a paragraph."""
    import pysbd

    from provrag.text.sentences import trim_spans

    flat = _reading_copy(text)
    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    out = []
    for s in seg.segment(flat):
        start, end = s.start, s.end
        cut = start
        for m in _SEAM.finditer(flat, start, end):
            if m.start() - cut > 1:
                out.append((cut, m.start()))
                cut = m.start()
        out.append((cut, end))
    return trim_spans(flat, out)


def _reading_copy(text: str) -> str:
    """`text` with line wraps and page breaks (their page-number lines included) as spaces,
    character for character, so offsets into it are offsets into `text`."""
    from provrag.text.sentences import mask_furniture

    masked = mask_furniture(text.replace("\r", " "), "\x00")
    # a whitespace run holding a page number is a page break: all spaces
    masked = re.sub(r"\s*\x00[\x00\s]*", lambda m: " " * len(m.group(0)), masked)
    # a run of whitespace with one newline is a line wrap; with two or more, a paragraph break
    return re.sub(r"[ \t]*\n(?:[ \t]*\n)*", lambda m: m.group(0) if m.group(0).count("\n") > 1 else " " * len(m.group(0)),
                  masked)


def _heading(text: str) -> tuple[str, int]:
    """A leading Markdown heading (the page subject) and where the body starts."""
    m = re.match(r"\s*(#{1,6}\s+[^\n]+)\n", text)
    if m:
        return m.group(1).lstrip("#").strip(), m.end()
    return "", 0


def spans(text: str, max_window: int) -> list[tuple[int, int]]:
    sents = sentences(text)
    out = []
    for i in range(len(sents)):
        for w in range(1, max_window + 1):
            if i + w > len(sents):
                break
            out.append((sents[i][0], sents[i + w - 1][1]))
    return out or [(0, len(text))]


# ---- features -----------------------------------------------------------------------------------

def _covered(s: str, pool: frozenset[str]) -> bool:
    """A claim stem is covered by a span when the span has it; or every part of a hyphenated
    word; or a span word starts with it or it with a span word, sharing ≥ 4 letters and most of
    the shorter word (derivations: Spain/Spanish, England/English; glued words: "CowboysMoore");
    or a near spelling of a long word (transliterations, typos: Raghunandan/Raghunandhan)."""
    if s in pool:
        return True
    if "-" in s and all(stem(p) in pool for p in s.split("-") if p):
        return True
    if len(s) >= 4:
        from rapidfuzz import fuzz, process

        for w in pool:
            n = _common_prefix(s, w)
            if n >= 4 and n >= 0.6 * min(len(s), len(w)) and (n == len(s) or n == len(w) or n >= 5):
                return True
        if len(s) >= 5 and process.extractOne(s, pool, scorer=fuzz.ratio, score_cutoff=85) is not None:
            return True
    return False


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
    too rare for the list (names, typos, "darkrooms") weigh 8."""
    from wordfreq import zipf_frequency

    return max(0.5, 8.0 - zipf_frequency(word, "en", wordlist="small"))


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


def _claim_negated(claim: Text, pool) -> bool:
    """Does a negation of the claim scope over words the span states? The claim's side of the
    rule of `_negated`, used for contradiction only: "no equipment is energised without a permit"
    is not contradicted by a span that never mentions equipment, energising or permits (that span
    is off topic, not of the other polarity), while "was not elected" is by "was elected". A
    claim negation the span does not state still keeps the span from supporting the claim
    (`negation_mismatch`). A cue with no content word after it ("did not") is in scope."""
    for i in claim.neg_at:
        after = claim.stems[i:i + 3]
        if not after or any(_covered(w, pool) for w in after):
            return True
    return False


# every feature is bounded in [0, 1]: a linear score fitted on short dev claims must not run
# away on a long real one (an unbounded count of missing words once did exactly that)
FEATURES = ("coverage", "name_coverage", "unit_coverage", "focus_coverage",
            "max_missing", "number_missing", "number_conflict", "name_conflict",
            "negation_mismatch", "antonym", "similarity", "order", "grounded")


def features(claim: str, evidence: str, max_window: int = 2, focus: str | None = None) -> dict:
    """Feature values of the claim against the best span of one evidence text (see module doc)."""
    c = analyse(claim)
    f_focus = analyse(focus) if focus else None
    head, body_start = _heading(evidence)
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
        n = len(f_focus.stems) + len(f_focus.numbers)
        if not n:
            return 0.0
        return (sum(_covered(s, pool) for s in f_focus.stems) + sum(qty_ok(q, nums) for q in f_focus.numbers)) / n

    body = evidence[body_start:]
    cands = [(a + body_start, b + body_start) for a, b in spans(body, max_window)] if body.strip() \
        else [(0, len(evidence))]
    best = None
    for a, b in cands:
        st = analyse(evidence[a:b])
        pool = _pool(st) | head_pool
        nums = st.numbers + head_nums
        cov = coverage(pool, nums)
        order = _lcs(c.stems, st.stems) / max(1, len(c.stems))
        # with a focus (the answer of a question), the span must be the one that states it
        fkey = focus_coverage(pool, nums) if f_focus is not None else 0.0
        key = (round(fkey, 6), round(cov, 6), order, -(b - a))
        if best is None or key > best[0]:
            best = (key, a, b, st, pool, nums, cov, order)
    _, a, b, st, pool, nums, cov, order = best
    miss_idx = [i for i, s in enumerate(c.stems) if not _covered(s, pool)]
    # with a focus, the question's own quantities are given context: only the answer's are checked
    checked = f_focus.numbers if f_focus is not None else c.numbers
    num_missing = [q for q in checked if not qty_ok(q, nums)]
    name_missing = [s for s in names if not _covered(s, pool)]
    span_names = st.names - set(c.stems)
    if f_focus is not None and (f_focus.stems or f_focus.numbers):
        focus_cov = focus_coverage(pool, nums)
    else:
        focus_cov = cov
    ant = _antonym_hits(c, pool)
    return {
        "span": (a, b),
        "missing_words": [c.words[i] for i in miss_idx],
        "missing_numbers": [(focus if f_focus is not None else claim)[q.start:q.end] for q in num_missing],
        "antonyms": ant,
        "coverage": cov,
        "name_coverage": (1 - len(name_missing) / len(names)) if names else 1.0,
        "unit_coverage": coverage(unit_pool, unit.numbers),
        "focus_coverage": focus_cov,
        "max_missing": max([weights[i] for i in miss_idx] + [0.0]) / 8.0,   # rarest missing word, 0..1
        "number_missing": float(bool(num_missing)),
        # a claim number the whole text never states, where the span states one of its kind
        "number_conflict": float(any(comparable(q, nums) and not qty_ok(q, unit.numbers + head_nums)
                                     for q in num_missing)),
        "name_conflict": float(bool(name_missing) and bool(span_names)),
        "negation_mismatch": float((c.negations > 0) != _negated(st, set(c.stems), pool)),
        # the stricter form a contradiction needs: the claim's negation must bear on what the span states
        "negation_conflict": float(_claim_negated(c, pool) != _negated(st, set(c.stems), pool)),
        "antonym": float(bool(ant)),
        "similarity": _char_cosine(normalise(claim), normalise(evidence[a:b])),
        "order": order,
        # the answer words stated AND the rest of the claim found in the same text: an answer
        # word alone ("1912", "earlier") in an unrelated text is no support
        "grounded": focus_cov * coverage(unit_pool, unit.numbers),
    }


# ---- decision -----------------------------------------------------------------------------------

def _linear(feat: dict, weights: dict[str, float], bias: float, names=FEATURES) -> float:
    """Logistic score of the named features; `weights` maps each feature name to its weight."""
    z = float(bias) + sum(float(weights[n]) * float(feat[n]) for n in names)
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


CONTRA_FEATURES = ("coverage", "name_coverage", "number_conflict", "name_conflict",
                   "negation_mismatch", "antonym", "similarity", "order")


def _reason(feat: dict, label: str) -> str:
    bits = [f"covers {feat['coverage']:.0%} of the claim"]
    if feat["focus_coverage"] != feat["coverage"]:
        bits.append(f"answer words {feat['focus_coverage']:.0%}")
    if feat["missing_numbers"]:
        bits.append("not stated: " + ", ".join(feat["missing_numbers"][:3]))
    if feat["missing_words"]:
        bits.append("missing: " + ", ".join(feat["missing_words"][:5]))
    if feat["negation_mismatch"]:
        bits.append("negation differs")
    if feat["antonyms"]:
        bits.append("opposite: " + ", ".join(feat["antonyms"][:2]))
    if feat["name_conflict"]:
        bits.append("other names in span")
    return f"{label}: " + "; ".join(bits)


def decide(feat: dict, vcfg: VerifySettings) -> tuple[str, float, float]:
    """(label, support score, contradiction score) from one span's features and [verify] settings."""
    s = _linear(feat, vcfg.support_weights, vcfg.support_bias)
    c = _linear(feat, vcfg.contradict_weights, vcfg.contradict_bias, CONTRA_FEATURES)
    # vetoes: a span that states the claim's content with the opposite polarity, an opposite
    # word, or another value for one of its numbers cannot support it, whatever the overlap
    veto = feat["negation_mismatch"] or feat["antonym"] or feat["number_conflict"]
    if veto:
        s = min(s, vcfg.support_threshold - 0.01)
    if s >= vcfg.support_threshold:
        return "supported", s, c
    # a contradiction needs a positive conflict signal on a span that otherwise matches: a veto
    # (a claim's negation only where the span states the negated words), or a name of the claim
    # replaced by other names with a high contradiction score
    conflict = feat["negation_conflict"] or feat["antonym"] or feat["number_conflict"]
    if feat["coverage"] >= vcfg.contradict_min_coverage and (
            conflict or (feat["name_conflict"] and c >= vcfg.contradict_threshold)):
        return "contradicted", s, max(c, vcfg.contradict_threshold) if conflict else c
    return "unsupported", s, c


def judge(claim: str, evidence: list[str], vcfg: VerifySettings, *, focus: str | None = None) -> list[dict]:
    """One verdict per evidence text, never one joined premise: {"label", "score", "reason",
    "span": [start, end] of the best span in that text, "contradiction": score}. `score` is the
    support score in [0, 1]. Bad input (None, non-strings, empty) gives "unsupported"."""
    claim = claim if isinstance(claim, str) else ("" if claim is None else str(claim))
    out = []
    for ev in evidence or []:
        ev = ev if isinstance(ev, str) else ("" if ev is None else str(ev))
        if not claim.strip() or not ev.strip() or not (analyse(claim).stems or analyse(claim).numbers):
            out.append({"label": "unsupported", "score": 0.0, "reason": "nothing to compare",
                        "span": [0, 0], "contradiction": 0.0})
            continue
        feat = features(claim, ev, vcfg.max_window, focus)
        label, s, c = decide(feat, vcfg)
        out.append({"label": label, "score": round(s, 4), "reason": _reason(feat, label),
                    "span": list(feat["span"]), "contradiction": round(c, 4)})
    return out
