"""An answer → the claims `verify` checks, one per sentence, each with its own citations.

Why sentence-level: ALCE and RefChecker judge sentences (or sub-sentences) separately, and a
sentence is what a citation block backs. The `[Data: …]` blocks are cut out of the text (a
judge must not read "Reports (4)" as words) but their parsed refs stay with the claim, so the
claim's own citations can be checked (cited evidence) beside what the whole index holds.

A claim with no block of its own takes the next block of its paragraph: GraphRAG closes a
paragraph (or a list item) with one block for all its sentences (`Claim.from_paragraph` says so).

Kept out: headings (markdown, bold, numbered "5.15. /var/tmp : Temporary files…", or a short
title-case line over more text), section and list numbers, page furniture ("Page 12"),
questions, and connective filler ("Here is a summary:", "I hope this helps"; a lead-in such as
"In summary," is dropped from the sentence it opens); numbers, dates and names are never rewritten.

A short answer is not a claim on its own: "Delhi" answering "…has its head office in what
city?" is checkable only with its question. `question_to_claim` rewrites question + answer into
a declarative sentence and names the answer as the claim's *focus* (the words the evidence must
state for the claim to hold); the judge uses it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from provrag.text.segment import answer_sentences
from provrag.text.sentences import FURNITURE, TERMINAL, is_heading

_FILLER = re.compile(
    r"^(?:in summary|in conclusion|to summarize|to sum up|overall|here (?:is|are)|below (?:is|are)|"
    r"the following|i hope|hope this|let me know|feel free|please note|note that|as an ai|"
    r"i (?:don't|do not|cannot|can't) |i could not find anything in the index|"
    r"nothing in the index answers|"  # an abstention speaks of the index, not of the world
    r"sure[,!.]|certainly[,!.]|of course[,!.]|based on the (?:data|context|provided))",
    re.I)
# a heading mark, a bullet, a list or section number ("3.", "5.15.1.", "2)") or a quote mark
_MD_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d+(?:\.\d+)*\.\s+|\d+\)\s+|>\s*)+")
# a section number opens a heading: at the sentence's start, or just before it (a segmenter cut it off)
_NUMBERED = re.compile(r"\s*\d+(?:\.\d+)*\.\s")
_NUMBERED_BEFORE = re.compile(r"(?:(?:^|\s)\d+(?:\.\d+)+\.?|(?:^|\n)\s*\d+\.)\s*$")
# a lead-in that says nothing, before a sentence that does ("In summary, Operation Dulce is…")
_LEAD_IN = re.compile(r"^(?:in summary|in conclusion|to summarize|to summarise|to sum up|overall|in short|"
                      r"in brief|additionally|furthermore|moreover)\s*,\s*(?=\w)", re.I)
# where an answer's paragraph starts: after a blank line, or on a line that opens a heading, a
# list item, a quote or a table row (each list item is a paragraph of its own)
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=[ \t]*(?:#{1,6}\s|[-*+•]\s|\d+[.)]\s|>|\|))")
# a number keeps its separators ("61,000", "3.5"): split, a focus would ask the evidence for "61" and "000"
_WORDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|[^\W_]+(?:['’][^\W_]+)*")
_FUNCTION = frozenset("""a an the and or but of in on at by for from to with as is are was were be been it its
this that these those there here he she they we you i his her their our your my not no yes so also
which who whom what when where why how than then such very more most some any all each both
if else can could may might will would shall should do does did have has had must just only""".split())
_AUX = ("is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "had", "will",
        "would", "should", "shall", "may", "might", "must")
_YES = {"yes", "yes.", "yeah", "true", "correct", "right"}
_NO = {"no", "no.", "false", "incorrect", "not"}


@dataclass
class Claim:
    text: str                               # the sentence, citation blocks and markdown removed
    span: tuple[int, int]                   # where it sits in the answer
    refs: list = field(default_factory=list)  # provrag.query.citations.Ref of its own blocks
    focus: str | None = None                # words the evidence must state (question-derived claims)
    index: int = 0                          # 1-based position among the answer's claims
    from_paragraph: bool = False            # refs are those of the citation that closes its paragraph

    def to_dict(self) -> dict:
        return {"text": self.text, "span": list(self.span), "refs": [r.to_dict() for r in self.refs],
                "focus": self.focus, "from_paragraph": self.from_paragraph}


def _content(text: str) -> list[str]:
    return [w for w in _WORDS.findall(text.lower()) if w not in _FUNCTION]


def _clean(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    s = _MD_LEAD.sub("", s)
    s = re.sub(r"\*\*|__|`", "", s)
    s = re.sub(r"\s+([.,;:!?])(?=\s|$)", r"\1", s)   # "word ." (tokenised text), not " .C()"
    s = s.strip(" \t-–—:;")
    rest = _LEAD_IN.sub("", s)
    return rest[:1].upper() + rest[1:] if rest != s and is_checkable(rest) else s


def is_checkable(sentence: str) -> bool:
    """False for what states nothing: headings, questions, filler, label-only lines."""
    s = sentence.strip()
    if not s or s.endswith("?") or s.endswith(":"):
        return False
    if _FILLER.match(s):
        return False
    # numbers alone ("5.15.1.") are a section number; "Page 12" is page furniture
    if not re.search(r"[^\W\d_]", s) or FURNITURE.fullmatch(s.rstrip(".")):
        return False
    if len(_content(s)) < 2 and not re.search(r"\d", s):
        return False
    return True


def _is_heading_line(text: str, a: int, b: int) -> bool:
    """A markdown heading, a bold line, or a short line of its own in title case with no closing
    period, with text after it (a section title or running head quoted from a document: "The
    /var Hierarchy")."""
    line_start = text.rfind("\n", 0, a) + 1
    line = text[line_start:text.find("\n", b) if text.find("\n", b) != -1 else len(text)]
    if re.match(r"\s*#{1,6}\s", line) or (line.strip().startswith("**") and line.strip().endswith("**")
                                          and len(line.split()) <= 12):
        return True
    words = _MD_LEAD.sub("", line).split()
    return line.strip() == text[a:b].strip() and 0 < len(words) <= 12 and not TERMINAL.search(line.strip()) \
        and all(not w[0].islower() for w in words if w.lower() not in _FUNCTION) \
        and bool(text[b:].strip())   # a title heads something: a one-line answer ("Village of the Damned") is none


def split_claims(answer: str, question: str | None = None) -> list[Claim]:
    """The checkable claims of an answer, in order, each with the refs of its own citation blocks."""
    from provrag.query.citations import parse_citations
    from provrag.text.options import is_option_entry

    if not isinstance(answer, str):
        answer = "" if answer is None else str(answer)
    parsed = parse_citations(answer)
    chars = list(answer)
    for blk in parsed.blocks:
        for i in range(*blk.span):
            chars[i] = " "
    masked = "".join(chars)
    sents = answer_sentences(masked)

    claims: list[Claim] = []
    if question and question.strip() and len(sents) <= 1:
        text = _clean(masked)
        # an option's entry ("-S sort by file size, largest first") says what the option does in the
        # manual's own words: checked as it stands, not read as a short answer to fit into the question
        if text and (is_fragment(text) or not is_checkable(text)) and not is_option_entry(masked.strip()):
            claim_text, focus = question_to_claim(question, text)
            refs = [r for blk in parsed.blocks for r in blk.refs]
            return [Claim(claim_text, (0, len(answer)), refs, focus, 1)]

    paragraphs = _paragraphs(answer)
    for a, b in sents:
        text = _clean(masked[a:b])
        if _is_heading_line(masked, a, b) or not is_checkable(text) \
                or ((_NUMBERED.match(masked[a:b]) or _NUMBERED_BEFORE.search(masked[max(0, a - 24):a]))
                    and is_heading(text)):  # "5.15. /var/tmp : Temporary files preserved…", no verb, no period
            continue
        refs = []
        for blk in parsed.blocks:
            s0, s1 = blk.sentence_span if blk.sentence else blk.span
            # a block belongs to the sentence its own sentence overlaps, or that it directly follows
            if (s0 < b and s1 > a) or (a <= blk.span[0] <= b + 2):
                refs.extend(blk.refs)
        from_paragraph = False
        if not refs:
            # GraphRAG closes a paragraph with one block for all of it: a sentence without its own
            # citation is backed by the next block of its paragraph
            end = next((p1 for p0, p1 in paragraphs if p0 <= a < p1), len(answer))
            nxt = next((blk for blk in parsed.blocks if b <= blk.span[0] < end), None)
            if nxt is not None and nxt.refs:
                refs, from_paragraph = list(nxt.refs), True
        focus = None
        if question and question.strip():
            new = [w for w in _content(text) if w not in set(_content(question))]
            focus = " ".join(new) or None
        claims.append(Claim(text, (a, b), refs, focus, len(claims) + 1, from_paragraph))
    return claims


def _paragraphs(answer: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph of an answer (a list item is one)."""
    cuts = [0] + [m.end() for m in _PARAGRAPH.finditer(answer)] + [len(answer)]
    return [(p0, p1) for p0, p1 in zip(cuts, cuts[1:]) if p1 > p0]


def is_fragment(answer: str) -> bool:
    """An answer that is no sentence by itself: a name, a number, yes/no, a short noun phrase
    (no finite verb among its first words and no closing period on a multi-word clause)."""
    words = answer.strip().rstrip(".!").split()
    if not words:
        return False
    if answer.strip().lower().rstrip(".!") in _YES | _NO:
        return True
    verbs = set(_AUX) | {"be", "been", "became", "become", "won", "wrote", "directed", "played", "made"}
    if any(w in verbs for w in words):  # lower-case only: "This Is England" is a title
        return False
    if re.search(r"\b\w+ed\b", answer) and len(words) > 3:
        return False
    return len(words) <= 8


def _matches(option: str, answer: str) -> bool:
    from rapidfuzz import fuzz

    strip = lambda s: re.sub(r"^(?:the|a|an)\s+", "", s.strip().strip(" ,\"'").lower())
    o, a = strip(option), strip(answer)
    return bool(o) and bool(a) and (o == a or fuzz.ratio(o, a) >= 85 or fuzz.token_set_ratio(o, a) >= 90)


def question_to_claim(question: str, answer: str) -> tuple[str, str | None]:
    """Question + short answer → (declarative claim, focus).

    "Deuce Bigalow is a character played by an alumn of what NBC sketch comedy series?" +
    "Saturday Night Live" → "Deuce Bigalow is a character played by an alumn of the NBC sketch
    comedy series Saturday Night Live". Rules, in order: yes/no questions (leading auxiliary
    dropped; "no" adds a negation); "A or B" alternatives (the chosen one replaces the pair);
    wh-words (who/whom/whose/what/which/where/when/how many/how much …) replaced by the answer.
    A question that fits no rule gives "question — answer": the judge still sees both."""
    q = re.sub(r"\s+", " ", (question or "").strip()).rstrip("?").strip()
    a = re.sub(r"\s+", " ", (answer or "").strip()).rstrip(".").strip()
    if not q:
        return a, a
    low_a = a.lower()
    first = q.split(" ", 1)[0].lower()

    # "A or B": the answer picks one; the other must not stay in the claim as if stated
    if low_a not in _YES | _NO:
        tail = re.search(r"[,:]\s*((?:the\s+)?[^,]+?)\s+or\s+((?:the\s+)?[^,]+)$", q, re.I) or \
            re.search(r"\s((?:[Tt]he\s+)?(?:[A-Z0-9][\w'’.:&-]*\s*)+?)\s+or\s+((?:the\s+)?[A-Z0-9].*)$", q)
        mid = re.search(r"\b((?:the\s+)?[A-Z][^,]*?)\s+or\s+((?:the\s+)?[A-Z][^,]*?)(?=\s+(?:"
                        + "|".join(_AUX) + r")\b)", q)
        if tail and (_matches(tail.group(1), a) or _matches(tail.group(2), a)):
            q = q[:tail.start()]                      # "Who …, A or B" → "Who …"
            first = q.split(" ", 1)[0].lower()
        elif mid and (_matches(mid.group(1), a) or _matches(mid.group(2), a)):
            q = (q[:mid.start()] + a + q[mid.end():]).strip()   # "Does A or B have …" → "Does <a> have …"
            if first in _AUX:
                return _tidy(q.split(" ", 1)[1] if " " in q else q), a

    if low_a in _YES or low_a in _NO:
        body = q.split(" ", 1)[1] if first in _AUX and " " in q else q
        body = body[:1].upper() + body[1:]
        # focus None: the whole statement is what the evidence must hold
        return (_tidy(body) if low_a in _YES else "It is not so that " + _tidy(body)), None

    wh = re.search(r"\b(how many|how much|how long|how old|how far|how tall|how big|"
                   r"in what year|in which year|what year|which year|"
                   r"whose|whom|who|where|when|what|which)\b", q, re.I)
    if not wh:
        return f"{q} — {a}", a
    word = wh.group(1).lower()
    before, after = q[:wh.start()], q[wh.end():]
    if word in ("what", "which"):
        # "what NBC sketch comedy series" → "the NBC sketch comedy series <answer>"; the noun
        # phrase ends at the first auxiliary verb (or the end of the question)
        m = re.match(r"\s*((?:(?!(?:" + "|".join(_AUX) + r")\b)[^\s,]+\s*){0,5})", after, re.I)
        np = (m.group(1) if m else "").strip()
        tail = after[m.end():] if m else after
        if np and not re.match(r"(?:" + "|".join(_AUX) + r")\b", after.strip(), re.I):
            phrase = f"the {np} {a}" if before.strip() else f"{a} ({np})"
            return _tidy(f"{before}{phrase} {tail}"), a
        return _tidy(f"{before}{a}{after}"), a
    if word in ("who", "whom"):
        return _tidy(f"{before}{a}{after}"), a
    if word == "whose":
        return _tidy(f"{before}{a}'s{after}"), a
    if word in ("where",):
        prep = "" if re.match(r"(?:in|at|on|near|from)\b", low_a) else "in "
        return _tidy(f"{before}{after} {prep}{a}"), a
    if word in ("when", "in what year", "in which year", "what year", "which year"):
        prep = "" if re.match(r"(?:in|on|at|during|from|since|by)\b", low_a) else "in "
        return _tidy(f"{before}{after} {prep}{a}"), a
    # how many / how much / how long …: the answer is the quantity
    return _tidy(f"{before}{a}{after}"), a


def _tidy(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip(" ,")
    s = re.sub(r"\s+([,.;:])", r"\1", s)
    return s[:1].upper() + s[1:] if s else s
