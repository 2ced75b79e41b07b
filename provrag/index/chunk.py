"""Documents → text units that remember their document, characters and pages.

Units are packed from sentence-sized pieces so a unit (and so a quote) starts and ends at a
sentence boundary. 300 tokens by default rather than GraphRAG's 1,200: a PDF page holds
roughly 400–700 tokens, so a 300-token unit almost always sits on one page and a citation
resolves to one page, not four; KET-RAG also re-splits into ~150-token pieces for its
skeleton. A unit is closed early at a page break once it is a quarter full, which keeps
most units on a single page without making tiny ones.
"""
from __future__ import annotations

import bisect
import re

from provrag.config import Config
from provrag.store.schema import content_id
from provrag.text.tokens import count_tokens_batch

# A piece: a run of text up to a sentence end or a blank line (hand-written: a regex is ~50×
# faster than a sentence model here and the pieces only need to be sentence-ish).
_PIECE = re.compile(r"\S.*?(?:[.!?…][\"')\]]*(?=\s)|(?=\n\s*\n)|$)", re.S)
_MAX_PIECE_CHARS = 2000


def _pieces(text: str) -> list[tuple[int, int]]:
    spans = []
    for m in _PIECE.finditer(text):
        s, e = m.start(), m.end()
        while e - s > _MAX_PIECE_CHARS:  # a 2 MB single line must still chunk: cut at whitespace
            cut = text.rfind(" ", s + _MAX_PIECE_CHARS // 2, s + _MAX_PIECE_CHARS)
            cut = cut if cut > s else s + _MAX_PIECE_CHARS
            spans.append((s, cut))
            s = cut
            while s < e and text[s].isspace():
                s += 1
        if e > s:
            spans.append((s, e))
    return spans


def _page_of(starts: list[int], pages: list[tuple[int, int, int]], pos: int) -> int:
    i = max(0, bisect.bisect_right(starts, pos) - 1)
    return pages[i][0]


def chunk_text(text: str, pages: list[tuple[int, int, int]] | None, size: int, overlap: int) -> list[dict]:
    """Units of one document: text, char_start, char_end, page_start, page_end, n_tokens."""
    spans = _pieces(text)
    if not spans:
        return []
    toks = count_tokens_batch([text[s:e] for s, e in spans])
    starts = [p[1] for p in pages] if pages else []
    page_at = (lambda pos: _page_of(starts, pages, pos)) if pages else (lambda pos: None)
    piece_page = [page_at(s) for s, _ in spans]

    units, i, n = [], 0, len(spans)
    while i < n:
        j, total = i, 0
        while j < n and (j == i or total + toks[j] <= size):
            if j > i and piece_page[j] != piece_page[j - 1] and total >= size // 4:
                break
            total += toks[j]
            j += 1
        cs, ce = spans[i][0], spans[j - 1][1]
        units.append({"text": text[cs:ce], "char_start": cs, "char_end": ce,
                      "page_start": page_at(cs), "page_end": page_at(ce - 1)})
        if j >= n:
            break
        # step back over whole pieces worth at most `overlap` tokens, always moving forward,
        # never back across a page break (an overlap would drag the next unit onto two pages)
        k, back = j, 0
        while k - 1 > i and back + toks[k - 1] <= overlap and piece_page[k - 1] == piece_page[j]:
            k -= 1
            back += toks[k]
        i = k
    for u, c in zip(units, count_tokens_batch([u["text"] for u in units])):
        u["n_tokens"] = c
    return units


def chunk_stage(documents: list[dict], cfg: Config, progress=None) -> list[dict]:
    """Text-unit rows (without graph columns) for every ok document, in document order."""
    size, overlap = int(cfg.chunk.size_tokens), int(cfg.chunk.overlap_tokens)
    if size < 16 or not 0 <= overlap < size:
        raise ValueError("[chunk] needs size_tokens >= 16 and 0 <= overlap_tokens < size_tokens")
    rows: list[dict] = []
    ok = [d for d in documents if d["status"] == "ok"]
    ctx = progress.stage("chunk", total=len(ok)) if progress else None
    task = ctx.__enter__() if ctx else None
    try:
        for d in ok:
            for u in chunk_text(d["text"], d.get("pages"), size, overlap):
                u["id"] = content_id(d["id"], str(u["char_start"]), u["text"])
                u["document_id"] = d["id"]
                rows.append(u)
            if task:
                task.advance()
    finally:
        if ctx:
            ctx.__exit__(None, None, None)
    for i, r in enumerate(rows):
        r["human_readable_id"] = i
    return rows
