"""Finds every GraphRAG `[Data: …]` citation block in an answer, and the sentence it backs.

Model output is messy: `[Data: Reports (4, 0, 3, +more)]`, `[data: entities(2,17); relationships
(201)].`, ids wrapped over lines, `**[Data: Sources (1)]**`, `\\[Data: …\\]` from escaped
markdown, singular kinds, `Reports [1, 2]`, a forgotten `)` or `]`. A regex over the whole
block breaks on the first oddity and silently drops the citation, so this is a small
hand-written scanner (a grammar library would be stricter than the model it reads): it finds
an opener, closes on the first `]` at bracket depth 0 (never past the next opener), then
reads kind/id groups leniently. It never raises: every fragment it cannot read is reported
in `ParseResult.problems` with its span, so an unreadable citation is never dropped silently.

The sentence that carries a block (the claim it cites) is found with pysbd over the answer
with every block masked out, so the block's own brackets and periods cannot split sentences.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from provrag.text.segment import answer_sentences

KINDS = ("Reports", "Entities", "Relationships", "Claims", "Sources")

# every spelling of a kind seen in model output → the canonical (plural) kind
_KIND_ALIASES = {
    "report": "Reports", "reports": "Reports", "community report": "Reports",
    "community reports": "Reports", "communities": "Reports", "community": "Reports",
    "entity": "Entities", "entities": "Entities",
    "relationship": "Relationships", "relationships": "Relationships",
    "relation": "Relationships", "relations": "Relationships",
    "claim": "Claims", "claims": "Claims", "covariate": "Claims", "covariates": "Claims",
    "source": "Sources", "sources": "Sources", "text unit": "Sources", "text units": "Sources",
}
_KIND_ALT = (r"community\s+reports?|communit(?:y|ies)|reports?|entit(?:y|ies)|relationships?|relations?|"
             r"claims?|covariates?|sources?|text\s+units?")
_KIND_RE = re.compile(rf"\b({_KIND_ALT})\b", re.I)
# "[Data:" with the spacing, case, markdown emphasis and escaping real answers show; the colon
# may be missing when a kind follows ("[Data Reports (1)]")
_OPEN_RE = re.compile(
    rf"\\?\[\s*(?:\*\*|__|\*|_)?\s*data\s*(?:\*\*|__|\*|_)?\s*(?:[:：]|(?=\s*(?:{_KIND_ALT})\b))", re.I)
_MORE_RE = re.compile(r"^(?:\+\s*(?:\d+\s*)?more|(?:and\s+)?(?:\d+\s+)?more|\+|\.\.\.|…|etc\.?)$", re.I)
_RANGE_RE = re.compile(r"^(\d+)\s*[-–]\s*(\d+)$")
_MAX_BLOCK = 4000      # a "block" longer than this is an unclosed opener, not a citation
_MAX_RANGE = 200       # "3-7" is expanded; a wider range is reported instead of guessed


@dataclass
class Ref:
    kind: str                 # one of KINDS
    ids: list[int]
    more: bool = False        # the model cut the list ("+more"): a flag, never an id

    def to_dict(self) -> dict:
        return {"kind": self.kind, "ids": list(self.ids), "more": self.more}


@dataclass
class Problem:
    fragment: str
    span: tuple[int, int]
    reason: str

    def to_dict(self) -> dict:
        return {"fragment": self.fragment, "span": list(self.span), "reason": self.reason}


@dataclass
class CitationBlock:
    """One `[Data: …]` block as written in the answer, with the sentence it backs (what the
    parser read; provrag.results.Citation is what a resolution reports per ref)."""

    refs: list[Ref]
    span: tuple[int, int]              # the block in the answer, brackets included
    text: str                          # the block as written
    sentence: str = ""                 # the claim it backs, without any block, markdown trimmed
    sentence_span: tuple[int, int] = (0, 0)
    sentence_index: int = 0            # cited sentences numbered from 1 in answer order


@dataclass
class ParseResult:
    blocks: list[CitationBlock] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def refs(self) -> list[Ref]:
        return [r for b in self.blocks for r in b.refs]

    def pairs(self) -> set[tuple[str, int]]:
        """Every (kind, id) cited anywhere in the answer."""
        return {(r.kind, i) for r in self.refs() for i in r.ids}


def parse_citations(text) -> ParseResult:
    """All `[Data: …]` blocks of `text` with their refs, spans and sentences. Never raises."""
    res = ParseResult()
    if not isinstance(text, str):
        if text is None:
            return res
        try:
            text = str(text)
        except Exception:  # an object whose __str__ fails is simply no answer
            return res
    try:
        _scan(text, res)
        _attach_sentences(text, res.blocks)
    except Exception as e:  # defensive: a parser bug must not take an audit down
        res.problems.append(Problem(text[:80], (0, len(text)), f"parser error: {e!r}"))
    return res


# ---- scanning -------------------------------------------------------------------------

def _scan(text: str, res: ParseResult) -> None:
    opens = [m for m in _OPEN_RE.finditer(text)]
    for n, m in enumerate(opens):
        start = m.start()
        if res.blocks and start < res.blocks[-1].span[1]:
            continue  # an opener inside the previous block's text (cannot happen, defensive)
        limit = min(opens[n + 1].start() if n + 1 < len(opens) else len(text), start + _MAX_BLOCK)
        end = _close(text, m.end(), limit)
        closed = end is not None
        if not closed:
            # unclosed: read up to the end of the line (or the next opener)
            nl = text.find("\n", m.end(), limit)
            end = nl if nl != -1 else limit
            res.problems.append(Problem(text[start:end][:200], (start, end), "unclosed [Data: block"))
        body = text[m.end(): end - 1 if closed else end]
        refs = _read_body(body, m.end(), res.problems)
        if not refs:
            if closed:
                res.problems.append(Problem(text[start:end][:200], (start, end), "no readable citation in block"))
            continue
        res.blocks.append(CitationBlock(refs=refs, span=(start, end), text=text[start:end]))


def _close(text: str, i: int, limit: int) -> int | None:
    """Index just past the `]` closing a block opened before i, or None before `limit`."""
    depth = 0
    while i < limit:
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            if depth == 0:
                # `\]` from escaped markdown closes too; the backslash is body noise
                return i + 1
            depth -= 1
        i += 1
    return None


def _read_body(body: str, offset: int, problems: list[Problem]) -> list[Ref]:
    kinds = list(_KIND_RE.finditer(body))
    lead = body[: kinds[0].start()] if kinds else body
    if _has_words(lead):
        problems.append(Problem(lead.strip()[:200], (offset, offset + len(lead)), "text without a citation kind"))
    refs: list[Ref] = []
    for n, km in enumerate(kinds):
        kind = _KIND_ALIASES[re.sub(r"\s+", " ", km.group(1).lower())]
        arg_end = kinds[n + 1].start() if n + 1 < len(kinds) else len(body)
        arg = body[km.end():arg_end]
        span = (offset + km.start(), offset + arg_end)
        ids, more, bad = _read_ids(arg)
        for b in bad:
            problems.append(Problem(b[:200], span, f"unreadable id in {kind}"))
        if not ids and not more:
            if not bad:
                problems.append(Problem(body[km.start():arg_end].strip()[:200], span, f"{kind} without ids"))
            continue
        # the same kind twice in one block ("Reports (1); Reports (2)") is one ref
        same = next((r for r in refs if r.kind == kind), None)
        if same:
            same.ids.extend(i for i in ids if i not in same.ids)
            same.more = same.more or more
        else:
            refs.append(Ref(kind, ids, more))
    return refs


def _read_ids(arg: str) -> tuple[list[int], bool, list[str]]:
    # strip the brackets, markdown and separators around the list: "(1, 2, +more);" → "1, 2, +more"
    s = re.sub(r"[()\[\]{}*_`\\]", " ", arg)
    s = s.strip().strip(";|,:").strip()
    s = re.sub(r"\s+and\s*$", "", s, flags=re.I)
    ids: list[int] = []
    more, bad = False, []
    for tok in re.split(r"[,;|]", s):
        t = tok.strip().rstrip(".").strip()
        if not t:
            continue
        t = re.sub(r"^(?:#|id\s*|no\.?\s*)", "", t, flags=re.I).strip()
        if t.isdecimal():   # not isdigit(): "²" and "①" are digits that int() refuses
            _add(ids, int(t))
        elif _MORE_RE.match(t):
            more = True
        elif (r := _RANGE_RE.match(t)) and 0 <= int(r.group(2)) - int(r.group(1)) <= _MAX_RANGE:
            for i in range(int(r.group(1)), int(r.group(2)) + 1):
                _add(ids, i)
        elif re.fullmatch(r"(?:\d+\s+)+\d+", t):   # "1 2 3": commas lost over line breaks
            for p in t.split():
                _add(ids, int(p))
        elif re.fullmatch(r"and\s+\d+", t, re.I):  # "1, 2 and 3" → last token "and 3"... "2 and 3"
            _add(ids, int(t.split()[-1]))
        elif re.fullmatch(r"\d+\s+and\s+\d+", t, re.I):
            for p in re.split(r"\s+and\s+", t, flags=re.I):
                _add(ids, int(p))
        elif re.fullmatch(r"\d+\s*\+\s*more", t, re.I):  # "5 +more" with the comma lost
            _add(ids, int(re.match(r"\d+", t).group()))
            more = True
        else:
            bad.append(tok.strip())
    return ids, more, bad


def _add(ids: list[int], i: int) -> None:
    if i not in ids:
        ids.append(i)


def _has_words(s: str) -> bool:
    return bool(re.search(r"[A-Za-z0-9]", s))


# ---- sentences --------------------------------------------------------------------------

_MD_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+|>\s*)+")


def _attach_sentences(text: str, blocks: list[CitationBlock]) -> None:
    """Give each block the sentence it closes, numbering distinct sentences from 1."""
    if not blocks:
        return
    masked = _mask(text, blocks)
    sents = answer_sentences(masked)
    numbering: dict[tuple[int, int], int] = {}
    for n, b in enumerate(blocks):
        i = b.span[0] - 1
        while i >= 0 and masked[i].isspace():
            i -= 1
        # punctuation-only or empty text before the block: the block stands on its own line
        # after a paragraph, so the claim is the previous sentence
        k = _sentence_at(sents, i)
        if k is None:
            b.sentence_span, b.sentence = (b.span[0], b.span[0]), ""
            continue
        s0, s1 = sents[k]
        # several blocks in one sentence each back their own clause ("A [Data…] and B [Data…].")
        prev_end = blocks[n - 1].span[1] if n > 0 and blocks[n - 1].span[1] > s0 else s0
        nxt = blocks[n + 1].span[0] if n + 1 < len(blocks) and blocks[n + 1].span[0] < s1 else None
        lo = prev_end
        hi = b.span[0] if nxt is not None else s1
        if len(_clean(masked[lo:b.span[0]]).split()) < 3:  # too short to be a claim: whole sentence
            lo, hi = s0, s1
        b.sentence_span = (lo, hi)
        b.sentence = _clean(masked[lo:hi])
    for b in blocks:
        # a block with no sentence before it (answer starts with it) is numbered on its own
        key = b.sentence_span if b.sentence else ("block", b.span)
        b.sentence_index = numbering.setdefault(key, len(numbering) + 1)


def _mask(text: str, blocks: list[CitationBlock]) -> str:
    chars = list(text)
    for b in blocks:
        for i in range(*b.span):
            chars[i] = " "
    return "".join(chars)


def _sentence_at(sents: list[tuple[int, int]], i: int) -> int | None:
    """The last sentence starting at or before i (sentences are in order)."""
    import bisect

    if i < 0 or not sents:
        return None
    k = bisect.bisect_right([s0 for s0, _ in sents], i) - 1
    return k if k >= 0 else None


def _clean(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    s = _MD_LEAD.sub("", s)
    s = re.sub(r"\*\*|__|`", "", s)
    s = re.sub(r"\s+([.,;:!?])", r"\1", s)
    return s.strip()


def answer_in_json(raw: str) -> tuple[str, str | None] | None:
    """(answer, question) when `raw` is a JSON object with an "answer" string — what
    `provrag ask --json` (or GraphRAG's own tooling) wrote — else None: the text is the answer."""
    import json

    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("answer"), str):
        q = obj.get("question")
        return obj["answer"], q if isinstance(q, str) else None
    return None
