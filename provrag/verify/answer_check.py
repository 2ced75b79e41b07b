"""The answer shown is the answer checked: before `ask` returns, each sentence of the answer is
judged against the sources it cites, and a sentence they do not support is removed. A sentence
that stands word for word in a unit it cites is held by that unit by construction: it is kept
without asking the judge (which could only keep it).

Why in ask and not only in `verify`: users of a GraphRAG system ask it to "flag any statement
that can't be tied to source"; a reader who never runs verify must not be shown one. The
check is verify's own machinery (claims.split_claims, evidence.check_claim with the engine's
judge), limited to the *cited* sources: what matters here is whether the answer's own
citations hold what it says, not whether some other page of the index does. A sentence that
cites nothing is supported by nothing. The offline engine quotes its sources, so its
sentences normally stand; a model's answer is where sentences go.

What is removed is listed (`removed_sentences`: the sentence, its citations, the verdict and
why) and the text is rebuilt without it: its own citation blocks go with it, unless a kept
sentence of its paragraph relies on the block (GraphRAG closes a paragraph with one block).
When nothing checkable remains, ask gives the honest abstention instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from provrag.config import Config


@dataclass
class CheckedAnswer:
    """The answer with the sentences its sources do not support removed, and what was removed."""

    answer: str
    removed: list[dict] = field(default_factory=list)    # {"sentence", "citations", "verdict", "reason"}
    checked: int = 0                                     # claims checked (found quoted, or judged)
    kept: int = 0                                        # claims kept
    quoted: int = 0                                      # kept as quoted word for word (not judged, or judged otherwise)

    @property
    def emptied(self) -> bool:
        """Every checkable sentence was removed (or there was none to keep)."""
        return self.kept == 0

    def to_json(self) -> dict:
        return {"checked": self.checked, "kept": self.kept, "kept_as_quoted": self.quoted, "removed": self.removed}


def _why(check) -> str:
    """Why a claim's citations do not hold it, in words a reader can act on."""
    if not check.citations and not check.unresolved:
        return "cites nothing"
    if not check.cited:
        return "its citations reach no text in the index"
    best = check.cited[0]
    return best.reason or best.label


def check_answer(reader, answer: str, cfg: Config, engine, question: str | None = None) -> CheckedAnswer:
    """Judge each claim of `answer` against its cited sources (the engine's judge) and remove
    those not supported (see the module docstring)."""
    from provrag.query.citations import parse_citations
    from provrag.verify.claims import split_claims
    from provrag.verify.evidence import check_claim, cited_units
    from provrag.verify.verdicts import Judge

    claims = split_claims(answer, question)
    if not claims:
        return CheckedAnswer(answer, [], 0, 0)
    judge = Judge(engine)
    blocks = parse_citations(answer).blocks
    drop: list[tuple[int, int]] = []
    removed: list[dict] = []
    kept_blocks: set[int] = set()     # blocks a kept sentence relies on
    removed_blocks: set[int] = set()
    quoted = 0
    for claim in claims:
        own = [n for n, blk in enumerate(blocks) if _belongs(blk, claim.span)]
        cited = cited_units(reader, claim, int(cfg.verify.top_k_cited))
        # a quote of a unit it cites is kept whatever a judge would read, so none is asked: an
        # extractive answer's sentences are quotes, and judging them was most of the check's time
        # (bench/results/answer-check-quotes-2026-11-30.md)
        word_for_word = stands_in_a_cited_unit(reader, claim.text, cited[0])
        if not word_for_word:
            check = check_claim(reader, claim, judge, cfg, cited_only=True, cited=cited)
            word_for_word = check.verdict != "supported" and quotes_across_a_seam(reader, claim.text, check)
        quoted += word_for_word
        if word_for_word or check.verdict == "supported":
            kept_blocks.update(own)
            if claim.from_paragraph:
                nxt = _next_block(blocks, claim.span[1])
                if nxt is not None:
                    kept_blocks.add(nxt)
            continue
        cites = [blocks[n].text for n in own]
        nxt = _next_block(blocks, claim.span[1]) if claim.from_paragraph and not cites else None
        if nxt is not None:
            cites = [blocks[nxt].text]
        removed.append({"sentence": claim.text, "citations": cites, "verdict": check.verdict,
                        "reason": _why(check)})
        drop.append(claim.span)
        removed_blocks.update(own)
    if not removed:
        return CheckedAnswer(answer, [], len(claims), len(claims), quoted)
    cut = drop + [blocks[n].span for n in removed_blocks - kept_blocks]
    return CheckedAnswer(_without(answer, cut), removed, len(claims), len(claims) - len(removed), quoted)


def _words(text: str) -> str:
    return " ".join("".join(ch.lower() if ch.isalnum() else " " for ch in text).split())


def _quote_words(sentence: str) -> str | None:
    """The sentence's words as a quote is looked for (case and punctuation aside); None for
    fewer than three words, too short to call a quote."""
    words = _words(sentence)
    return words if len(words.split()) >= 3 else None


def stands_in_a_cited_unit(reader, sentence: str, per_citation: list) -> bool:
    """Whether the sentence stands word for word in one unit its citations reach
    (evidence.cited_units' first part): then the citation holds it by construction, whatever a
    judge would read, so none is asked. The judge reads a claim for what it asserts and errs on
    the very text it was taken from (a file name's "1.2-1.1" read as numbers the evidence does not
    state; a negation two sentences away): an extractive answer's quote removed as "contradicted"
    by its own source turned answered questions into abstentions."""
    from provrag.store.units import fetch_units

    words = _quote_words(sentence)
    ids = list(dict.fromkeys(uid for _, _, units in per_citation for uid, _ in units if uid))
    if words is None or not ids:
        return False
    rows = fetch_units(reader, ids)
    texts = {u: rows[u].text for u in ids if u in rows and rows[u].text}
    if any(words in _words(text) or _read_row_of(words, text) or _under_its_term(sentence, text)
           for text in texts.values()):
        return True
    if ": " not in sentence:
        return False
    # a definition that began in the unit before keeps that unit's term (ask reads it so too)
    from provrag.query.retrieve import antecedents

    before = antecedents(reader, list(texts))
    return any(_under_its_term(sentence, text, (before.get(u) or {}).get("text") or "") for u, text in texts.items())


def _under_its_term(sentence: str, text: str, previous: str = "") -> bool:
    """Whether the sentence is a definition's sentence shown under its term ("work_mem (integer):
    The default value is four megabytes (4MB).", text/definitions.py), both standing in the text:
    the sentence word for word inside the definition of that term, whose line is in the text or,
    for a definition the unit opens inside, in the text before it (`previous`)."""
    from provrag.text.definitions import entries_of

    term, sep, rest = sentence.partition(": ")
    words = _quote_words(rest) if sep else None
    if words is None or f"- {term}\n" not in previous[-2000:] + "\n" + text:
        return False
    return any(t == term and words in _words(text[max(a, 0):b]) for _, a, b, t in entries_of(text, previous))


def _read_row_of(words: str, text: str) -> bool:
    """Whether the words are a table row of the text as ask reads it, under its header ("Role:
    Operations manager; Name: Helga Marsh; …", text/tables.py): a quote of the row, whose cells a
    judge would read beside the next row's ("without time zone" against "with time zone")."""
    if "|" not in text:
        return False
    from provrag.text.tables import reading_copy

    return words in _words(reading_copy(text).text)


def quotes_across_a_seam(reader, sentence: str, check) -> bool:
    """Whether the sentence stands word for word across the seam of two cited units the judge
    read together (a quote cut by a page break: evidence.check_claim's seams), the one kind of
    quote stands_in_a_cited_unit cannot see before the judge has read."""
    from provrag.query.resolve import seam_text
    from provrag.store.units import fetch_units

    words = _quote_words(sentence)
    pairs = [e.text_unit_ids for e in check.cited if e.text_unit_ids and len(e.text_unit_ids) == 2]
    if words is None or not pairs:
        return False
    rows = fetch_units(reader, list(dict.fromkeys(u for pair in pairs for u in pair)))
    for pair in pairs:
        units = [rows[u] for u in pair if u in rows]
        if len(units) != 2:
            continue
        a, b = sorted(units, key=lambda u: u.char_start or 0)
        seam = seam_text(a, b)
        if seam is not None and seam[0] and words in _words(seam[0]):
            return True
    return False


def _belongs(block, span: tuple[int, int]) -> bool:
    """A block is a sentence's own when it stands inside it or right after it (claims.split_claims' rule)."""
    a, b = span
    s0, s1 = block.sentence_span if block.sentence else block.span
    return (s0 < b and s1 > a) or (a <= block.span[0] <= b + 2)


def _next_block(blocks, end: int) -> int | None:
    return next((n for n, blk in enumerate(blocks) if blk.span[0] >= end), None)


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the spans cut out, its spacing tidied (lines and paragraphs kept)."""
    chars = list(text)
    for a, b in spans:
        for i in range(max(0, a), min(len(chars), b)):
            chars[i] = "\0"
    out = "".join(chars).replace("\0", "")
    out = re.sub(r"[ \t]{2,}", " ", out)
    out = re.sub(r"[ \t]+([.,;:!?])", r"\1", out)
    out = re.sub(r"[ \t]+\n", "\n", out)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip()
