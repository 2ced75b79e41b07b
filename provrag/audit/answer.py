"""The answer as the report shows it: each claim wrapped in a link to its card, coloured by
its verdict, and every `[Data: …]` citation block shown as a marker.

Why the claims are searched for rather than taken from verify's spans alone: the verify JSON
is a file users keep and edit, and the answer text may come from a trace rather than from
the file, so a span is trusted only while it still points at its claim's text; otherwise the
claim is found again (exactly, else by rapidfuzz alignment), in order, never overlapping.
A claim found nowhere is listed under the answer, so no card is left without a way to it.
"""
from __future__ import annotations

from provrag.audit.markup import VERDICT_MARK, as_text, esc, verdict_of
from provrag.audit.pages import normalise


def claim_spans(answer: str, claims: list[dict]) -> list[tuple[int, int, int]]:
    """(start, end, claim index) of each claim found in the answer, in order, not overlapping."""
    from rapidfuzz import fuzz

    spans, cursor = [], 0
    for i, c in enumerate(claims):
        t = as_text(c.get("text")).strip()
        if not t:
            continue
        sp = c.get("span")
        if (isinstance(sp, (list, tuple)) and len(sp) == 2 and all(isinstance(x, int) for x in sp)
                and cursor <= sp[0] < sp[1] <= len(answer)
                and fuzz.ratio(normalise(answer[sp[0]:sp[1]]), normalise(t)) >= 80):
            spans.append((sp[0], sp[1], i))    # verify's own span, still pointing at this claim
            cursor = sp[1]
            continue
        at = answer.find(t, cursor)
        if at >= 0:
            a, b = at, at + len(t)
        else:
            al = fuzz.partial_ratio_alignment(t, answer[cursor:], score_cutoff=80)
            if al is None or al.dest_end <= al.dest_start:
                continue
            a, b = cursor + al.dest_start, cursor + al.dest_end
        spans.append((a, b, i))
        cursor = b
    return spans


def answer_html(answer: str, claims: list[dict]) -> str:
    """The answer with each claim wrapped in a verdict-coloured link to its card and every
    `[Data: …]` block shown as a citation marker; a block right after a claim joins it."""
    from provrag.query.citations import parse_citations

    blocks = [b.span for b in parse_citations(answer).blocks]
    spans = []
    for a, b, i in claim_spans(answer, claims):
        for s, e in blocks:
            if s < a < e:                      # claim starts inside a block: start after it
                a = e
            if a <= s < b < e or (b <= s and not answer[b:s].strip(" \t*_")):
                b = max(b, e)                  # a block inside, crossing the end, or right after
        if spans and a < spans[-1][1]:
            a = spans[-1][1]
        if b > a:
            spans.append((a, b, i))
    out, pos = [], 0

    def plain(s: int, e: int) -> str:
        parts, p = [], s
        for bs, be in blocks:
            if be <= s or bs >= e:
                continue
            parts.append(esc(answer[p:bs]))
            parts.append(f'<span class="cite">{esc(answer[bs:be])}</span>')
            p = be
        parts.append(esc(answer[p:e]))
        return "".join(parts)

    for a, b, i in spans:
        out.append(plain(pos, a))
        v = verdict_of(claims[i])
        out.append(f'<a class="claim v-{v}" href="#claim-{i + 1}" title="claim {i + 1}: {esc(v)}">'
                   f'{plain(a, b)}<sup>{i + 1}{VERDICT_MARK[v]}</sup></a>')
        pos = b
    out.append(plain(pos, len(answer)))
    placed = {i for _, _, i in spans}
    missing = [i for i, c in enumerate(claims) if i not in placed and as_text(c.get("text")).strip()]
    if missing:
        out.append('<span class="unplaced">Claims not found verbatim in the answer: ' + ", ".join(
            f'<a class="claim v-{verdict_of(claims[i])}" href="#claim-{i + 1}">{esc(claims[i].get("text"))}'
            f'<sup>{i + 1}{VERDICT_MARK[verdict_of(claims[i])]}</sup></a>' for i in missing) + "</span>")
    return "".join(out)
