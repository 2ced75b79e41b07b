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
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING

from provrag.config import Config
from provrag.index.progress import stage
from provrag.index.tables import OCR_PAGES, PAGES, frame
from provrag.store import schema
from provrag.text.tokens import count_tokens_batch

if TYPE_CHECKING:
    import polars as pl

# A piece: a run of text up to a sentence end or a blank line (hand-written: a regex is ~50×
# faster than a sentence model here and the pieces only need to be sentence-ish).
_PIECE = re.compile(r"\S.*?(?:[.!?…][\"')\]]*(?=\s)|(?=\n\s*\n)|$)", re.S)
_MAX_PIECE_CHARS = 2000


_FRAME_ROWS = 8192  # text units per Arrow batch while the chunk stage builds its frame
_COUNT_BATCH = 4096  # texts whose tokens are counted at once: only one batch's token lists are ever held


def _pieces(text: str) -> tuple[array, array]:
    """Start and end offsets of the text's pieces (two arrays of machine integers: a 50 MB text
    has a million pieces, which as tuples of Python ints would cost ~120 MB)."""
    starts, ends = array("q"), array("q")
    for m in _PIECE.finditer(text):
        s, e = m.start(), m.end()
        while e - s > _MAX_PIECE_CHARS:  # a 2 MB single line must still chunk: cut at whitespace
            cut = text.rfind(" ", s + _MAX_PIECE_CHARS // 2, s + _MAX_PIECE_CHARS)
            cut = cut if cut > s else s + _MAX_PIECE_CHARS
            starts.append(s)
            ends.append(cut)
            s = cut
            while s < e and text[s].isspace():
                s += 1
        if e > s:
            starts.append(s)
            ends.append(e)
    return starts, ends


def token_counts(texts: Iterable[str]) -> array:
    """cl100k token count of each text, counted a batch at a time (the encoder's token lists
    of a whole document would be ~36 bytes a token: 1.7 GB for a 50 MB text)."""
    counts, batch = array("q"), []
    for text in texts:
        batch.append(text)
        if len(batch) == _COUNT_BATCH:
            counts.extend(count_tokens_batch(batch))
            batch = []
    counts.extend(count_tokens_batch(batch) if batch else ())
    return counts


def _page_of(starts: list[int], pages: list[tuple[int, int, int]], pos: int) -> int:
    i = max(0, bisect.bisect_right(starts, pos) - 1)
    return pages[i][0]


def chunk_text(text: str, pages: list[tuple[int, int, int]] | None, size: int, overlap: int) -> list[dict]:
    """Units of one document: text, char_start, char_end, page_start, page_end, n_tokens."""
    starts, ends = _pieces(text)
    n = len(starts)
    if not n:
        return []
    toks = token_counts(text[s:e] for s, e in zip(starts, ends))
    page_starts = [p[1] for p in pages] if pages else []
    page_at = (lambda pos: _page_of(page_starts, pages, pos)) if pages else (lambda pos: None)
    piece_page = array("q", (page_at(s) for s in starts)) if pages else [None] * n

    units, i = [], 0
    while i < n:
        j, total = i, 0
        while j < n and (j == i or total + toks[j] <= size):
            if j > i and piece_page[j] != piece_page[j - 1] and total >= size // 4:
                break
            total += toks[j]
            j += 1
        cs, ce = starts[i], ends[j - 1]
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
    for u, c in zip(units, token_counts(u["text"] for u in units)):
        u["n_tokens"] = c
    return units


def unit_id(path: str, text: str, occurrences: dict[str, int]) -> str:
    """A text unit's id: its document's path, its text and which occurrence of that text in
    the document it is. Not its offset, nor the document's hash: a unit whose text is unchanged
    keeps its id (and so its number, provrag/index/ids.py) when the document is edited
    elsewhere, and every citation of it keeps pointing at the same words."""
    k = occurrences.get(text, 0)
    occurrences[text] = k + 1
    return schema.content_id("text_unit", path, text, str(k))


def unit_ocr_pages(unit: dict, document_ocr_pages: list[int] | None) -> list[int]:
    """The unit's pages (page_start..page_end) whose text is OCR output, so a source can say so."""
    first, last = unit[schema.PAGE_START], unit[schema.PAGE_END]
    if first is None:
        return []
    return [p for p in document_ocr_pages or () if first <= p <= last]


CHUNKER_VERSION = "1"  # part of the chunk cache's key: bump when chunk_text's output changes


def chunk_spans(settings: tuple[int, int], document: tuple) -> list[list]:
    """One document's units as spans [char_start, char_end, page_start, page_end, n_tokens]:
    what an executor's worker sends back and the chunk cache stores, never the units' text
    (cut from the document again, in the pipeline's process). `document`: a row
    (id, path, text, pages) of the documents table; `settings`: (size, overlap) in tokens."""
    size, overlap = settings
    return [[u[schema.CHAR_START], u[schema.CHAR_END], u[schema.PAGE_START], u[schema.PAGE_END], u["n_tokens"]]
            for u in chunk_text(document[2], document[3], size, overlap)]


def chunk_stage(documents: pl.DataFrame, cfg: Config, progress=None, cache=None, executor=None) -> pl.DataFrame:
    """The text_units frame of every ok document, in document order: ids, text, characters,
    pages and tokens; the columns later stages fill (skeleton, graph) are null.

    Each document is chunked by `executor` (provrag/executors/; default: in this process), or
    its spans come from `cache` (store/cache.Cache) for the same text, pages and settings: an
    index update does not re-chunk unchanged documents."""
    size, overlap = int(cfg.chunk.size_tokens), int(cfg.chunk.overlap_tokens)
    if size < 16 or not 0 <= overlap < size:
        raise ValueError("[chunk] needs size_tokens >= 16 and 0 <= overlap_tokens < size_tokens")
    from collections import deque

    import polars as pl

    from provrag.executors import cached_map, default_executor
    from provrag.store.cache import key_of

    # the rows become a frame every _FRAME_ROWS units: Python dicts of a whole corpus would
    # cost several times its text, Arrow columns cost the text itself
    frames: list[pl.DataFrame] = []
    rows: list[dict] = []
    numbered = 0
    # a frame made without the load stage (a test's, a page-less source) has no OCR'd pages
    ocr_of = dict(documents.select(schema.ID, OCR_PAGES).iter_rows()) if OCR_PAGES in documents.columns else {}
    ok = documents.filter(documents["status"] == schema.STATUS_OK).select(schema.ID, "path", schema.TEXT, PAGES)
    read: deque = deque()  # the documents handed to the executor whose spans have not come back

    def ok_documents():
        for row in ok.iter_rows():
            read.append(row)
            yield row

    spans_of = cached_map(executor or default_executor(cfg), chunk_spans, ok_documents(), kind="cpu", cache=cache,
                          key=lambda row: key_of("chunk", CHUNKER_VERSION, size, overlap, schema.content_id(row[2]),
                                                 row[3]), shared=(size, overlap))
    with stage(progress, "chunk", ok.height) as task:
        for spans in spans_of:
            doc_id, path, text, _ = read.popleft()
            occurrences: dict[str, int] = {}
            for cs, ce, ps, pe, n in spans:
                u = {schema.TEXT: text[cs:ce], schema.CHAR_START: cs, schema.CHAR_END: ce, schema.PAGE_START: ps,
                     schema.PAGE_END: pe, "n_tokens": n}
                u[schema.ID] = unit_id(path or doc_id, u[schema.TEXT], occurrences)  # a frame built by hand may lack paths
                u[schema.DOCUMENT_ID] = doc_id
                u[OCR_PAGES] = unit_ocr_pages(u, ocr_of.get(doc_id))
                u[schema.HRID] = numbered
                numbered += 1
                rows.append(u)
                if len(rows) == _FRAME_ROWS:
                    frames.append(frame(schema.TEXT_UNITS, rows))
                    rows = []
            task.advance()
    frames.append(frame(schema.TEXT_UNITS, rows))
    return pl.concat(frames, rechunk=True) if len(frames) > 1 else frames[0]


def link_units(documents: pl.DataFrame, text_units: pl.DataFrame) -> pl.DataFrame:
    """documents with `text_unit_ids` filled: each document's units in unit order ([] for a
    document without units, a failed or skipped file included)."""
    import polars as pl

    by_doc: dict[str, list[str]] = {}
    for uid, doc_id in text_units.select(schema.ID, schema.DOCUMENT_ID).iter_rows():
        by_doc.setdefault(doc_id, []).append(uid)
    ids = [by_doc.get(d, []) for d in documents[schema.ID].to_list()]
    return documents.with_columns(pl.Series(schema.TEXT_UNIT_IDS, ids, dtype=pl.List(pl.String)))
