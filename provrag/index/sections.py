"""Stage — sections: each document's parts, as its authors named them or as its text shifts topic.

A "what does this document cover?" answer is a list of the document's themes, and the best
names for them are the ones its authors chose: a PDF's outline (bookmarks), the headings of
DOCX/HTML/Markdown (index/parse.py reads both; load.py carries them as the documents frame's
OUTLINE column). So every ok document gets its sections here, written as `sections.parquet`
(one of the "other tables" CONTRACT.md §1 allows; GraphRAG's six keep their columns):

- **outline**: the shallowest heading level with at least two entries gives the top-level
  sections (level 0), each spanning the text up to the next one; the level below gives their
  sub-sections (level 1). Text before the first heading (title page, contents) is in none.
- **segments**: a document without headings (plain text, an outline-less PDF) is cut into at
  most `_MAX_SEGMENTS` contiguous parts where its topic shifts most: TextTiling's depth score
  over the cosine of neighbouring units' embeddings (Hearst 1997), at most one cut per
  `_UNITS_PER_SEGMENT` units. Each is titled by its key phrases.

A heading that names the document's apparatus (index, licence, bibliography, contents, …) gets
origin "apparatus": a part of the document, but none of its subjects.

Every level-0 section gets **key phrases** by class-based TF-IDF (text/phrases.py, BERTopic's
c-TF-IDF): the words that set it apart from the other sections of the collection. They also get their most **central statement** (engines/offline/report.py's centrality:
TF-IDF cosine to the centroid, statements that read alone first) and the text unit it is
quoted from, so global search can say what each part is about and cite the page. A unit
belongs to every section it overlaps by 100 characters or more.
"""
from __future__ import annotations

import re
from bisect import bisect_right

from provrag.config import Config
from provrag.index.progress import stage
from provrag.index.tables import OUTLINE, frame
from provrag.store import schema

_MAX_SEGMENTS = 8        # parts of a heading-less document at most
_UNITS_PER_SEGMENT = 5   # a cut per this many units at most (~1,500 tokens, 3 pages: a 20-unit text has four parts)
_MIN_SECTION_CHARS = 200  # a "section" shorter than this is a heading line or navigation chrome: no part
_MIN_OVERLAP = 100       # characters of a unit inside a section for the unit to be one of its units
_STATEMENT_UNITS = 24    # units of one section read for its central statement (evenly spread)
_PHRASES = 5             # key phrases kept per section
_PHRASE_UNITS = 60       # units of one section counted for its key phrases (evenly spread: bounds a huge file)
_STATEMENT_WORDS = 25    # a statement longer than this is passed over for a shorter central one
# a document's apparatus, not one of its subjects: kept as a section, marked so that a list of
# what the document covers leaves it out ("Index" is no theme a reader would name)
APPARATUS = re.compile(r"\b(?:index|indices|licen[cs]e|bibliograph\w*|references|acknowledg\w*|copying|colophon|"
                       r"(?:table of )?contents|glossary|change ?log|history of changes|errata)\b", re.I)
_NUMBERING = re.compile(r"^\s*(?:(?:chapter|part|section|appendix)\s+)?(?:[0-9]+|[A-Z]|[IVXLC]+)(?:\.[0-9]+)*[.):]?\s+",
                        re.I)


def plain_heading(title: str) -> str:
    """A heading without its numbering ("2.1 R Basics" → "R Basics"): how a reader names the part."""
    stripped = _NUMBERING.sub("", title or "").strip()
    return stripped or (title or "").strip()


def _outline_spans(outline: list[dict], text_len: int) -> list[tuple[int, str, int, int, int | None]]:
    """(level, title, char_start, char_end, parent index) for the two shallowest heading levels
    that divide the text: the top level is the shallowest with two or more parts of at least
    `_MIN_SECTION_CHARS` (a lone title above them is no part), each part ending at the next
    heading of its level or above; none when fewer than two such parts cover half the text."""
    entries = sorted(((int(o["level"]), str(o["title"]), int(o["char_start"])) for o in outline or []
                      if o.get("title") and o.get("char_start") is not None), key=lambda e: e[2])
    levels = sorted({lv for lv, _, _ in entries})

    def parts(level: int) -> list[tuple[str, int, int]]:
        out = []
        for i, (lv, title, start) in enumerate(entries):
            if lv != level:
                continue
            end = next((e[2] for e in entries[i + 1:] if e[0] <= level and e[2] > start), text_len)
            if end - start >= _MIN_SECTION_CHARS:  # shorter: a heading line or navigation chrome
                out.append((title, start, end))
        return out

    top, tops = None, []
    for lv in levels:
        tops = parts(lv)
        if len(tops) >= 2:
            top = lv
            break
    if top is None or sum(e - s for _, s, e in tops) < 0.5 * text_len:
        return []
    below = next((lv for lv in levels if lv > top), None)
    out: list[tuple[int, str, int, int, int | None]] = []
    for title, start, end in tops:
        parent = len(out)
        out.append((0, title, start, end, None))
        if below is not None:
            out.extend((1, sub, s0, min(s1, end), parent) for sub, s0, s1 in parts(below) if start <= s0 < end)
    return out


def _segments(units: list[dict], vectors) -> list[tuple[int, int]]:
    """[first, last) unit index ranges of a heading-less document's topical parts (TextTiling)."""
    import numpy as np

    n = len(units)
    k = min(_MAX_SEGMENTS, max(1, n // _UNITS_PER_SEGMENT))
    if k == 1 or vectors is None:
        return [(0, n)]
    v = np.asarray(vectors, dtype=np.float32)
    gap = np.einsum("ij,ij->i", v[:-1], v[1:])  # cosine across each boundary (vectors are L2-normalised)
    # how far the similarity dips below its highest point on either side (running maxima: O(n))
    depth = np.maximum.accumulate(gap) + np.maximum.accumulate(gap[::-1])[::-1] - 2 * gap
    cuts: list[int] = []
    for i in np.argsort(-depth, kind="stable"):
        b = int(i) + 1  # a cut before unit b
        if all(abs(b - c) >= 2 for c in cuts) and 2 <= b <= n - 2:
            cuts.append(b)
        if len(cuts) == k - 1:
            break
    bounds = [0] + sorted(cuts) + [n]
    return list(zip(bounds[:-1], bounds[1:]))


def spread(items: list, most: int) -> list:
    """At most `most` of the items, evenly spread over them (a long section read in samples)."""
    if len(items) <= most:
        return items
    step = len(items) / most
    return [items[int(i * step)] for i in range(most)]


def _statement(units: list[dict], phrases: list[str]) -> tuple[str | None, int | None]:
    """The section's most central statement that is short enough to list, and its unit's number."""
    from provrag.engines.offline.report import central_statements

    units = spread(units, _STATEMENT_UNITS)
    ctx = {"text_units": [{"text": u["text"], "human_readable_id": u["hrid"]} for u in units]}
    found = central_statements(ctx, 3, phrases)
    for sent, unit, _ in found:
        if len(sent.split()) <= _STATEMENT_WORDS:
            return sent, unit
    shortest = min(found, key=lambda f: len(f[0].split()), default=None)
    return (shortest[0], shortest[1]) if shortest else (None, None)


def _document_sections(doc: dict, units: list[dict], vectors) -> list[dict]:
    """One document's sections (rows without ids): outline first, else segments. A section holds
    every unit that overlaps it by `_MIN_OVERLAP` characters or more (a unit may straddle two
    headings), each with its text clipped to the section, so a statement is the section's own."""
    spans = _outline_spans(doc[OUTLINE], len(doc["text"] or ""))
    origin = "outline"
    if not spans:
        origin = "segments"
        spans = [(0, "", units[a]["char_start"], units[b - 1]["char_end"], None) for a, b in _segments(units, vectors)]
    starts = [u["char_start"] for u in units]
    rows = []
    for level, title, c0, c1, parent in spans:
        first = max(0, bisect_right(starts, c0) - 1)
        mine, size = [], 0.0
        for u in units[first:bisect_right(starts, c1 - 1)]:
            a, b = max(c0, u["char_start"]), min(c1, u["char_end"])
            if b - a < min(_MIN_OVERLAP, u["char_end"] - u["char_start"]):
                continue
            clipped = u if (a, b) == (u["char_start"], u["char_end"]) else \
                {**u, "text": u["text"][a - u["char_start"]:b - u["char_start"]]}
            mine.append(clipped)
            size += int(u["n_tokens"] or 0) * (b - a) / max(1, u["char_end"] - u["char_start"])
        pages = [p for u in mine for p in (u["page_start"], u["page_end"]) if p is not None]
        rows.append({"level": level, "title": title, "parent_index": parent, "origin": origin, "units": mine,
                     "n_tokens": round(size), "char_start": c0, "char_end": c1,
                     "page_start": min(pages, default=None), "page_end": max(pages, default=None)})
    return rows


def sections_stage(documents, text_units, vectors, cfg: Config, progress=None):
    """The sections frame (schema.SECTIONS), documents in order, each document's parts in text order."""
    import numpy as np
    import polars as pl

    if documents is None or text_units is None or text_units.height == 0:
        return frame(schema.SECTIONS, [])
    position = {uid: i for i, uid in enumerate(text_units[schema.ID].to_list())}
    by_doc: dict[str, list[dict]] = {}
    for r in text_units.select(schema.ID, schema.HRID, schema.TEXT, schema.DOCUMENT_ID, schema.CHAR_START,
                               schema.CHAR_END, schema.PAGE_START, schema.PAGE_END, "n_tokens").iter_rows():
        by_doc.setdefault(r[3], []).append({"id": r[0], "hrid": r[1], "text": r[2], "char_start": r[4],
                                            "char_end": r[5], "page_start": r[6], "page_end": r[7], "n_tokens": r[8]})
    ok = documents.filter(pl.col("status") == schema.STATUS_OK)
    if OUTLINE not in ok.columns:
        ok = ok.with_columns(pl.lit(None).alias(OUTLINE))
    rows: list[dict] = []
    with stage(progress, "sections", ok.height) as task:
        for doc in ok.select(schema.ID, schema.TEXT, OUTLINE).iter_rows(named=True):
            units = sorted(by_doc.get(doc[schema.ID], []), key=lambda u: u["char_start"])
            if units:
                vecs = None if vectors is None else np.asarray(vectors)[[position[u["id"]] for u in units]]
                first = len(rows)
                for r in _document_sections(doc, units, vecs):
                    r["document_id"] = doc[schema.ID]
                    r["parent_index"] = None if r["parent_index"] is None else first + r["parent_index"]
                    rows.append(r)
            task.advance()
        from provrag.text.phrases import class_phrases, unit_counts

        named = [i for i, r in enumerate(rows) if r["level"] == 0]  # level 1 is named by its heading alone
        read = {i: spread(rows[i]["units"], _PHRASE_UNITS) for i in named}
        order = {u: n for n, u in enumerate(dict.fromkeys(u["id"] for i in named for u in read[i]))}
        texts = {u["id"]: u["text"] for i in named for u in read[i]}
        counts, terms = unit_counts([texts[u] for u in order])
        found = class_phrases(counts, terms, [[order[u["id"]] for u in read[i]] for i in named], top=_PHRASES)
        phrases = [[] for _ in rows]
        for i, ph in zip(named, found):
            phrases[i] = ph
    out = []
    for i, (r, ph) in enumerate(zip(rows, phrases)):
        title = r["title"] or ", ".join(ph[:3]) or "untitled part"
        statement, unit = _statement(r["units"], ph + [plain_heading(title)]) if r["level"] == 0 else (None, None)
        out.append({
            schema.ID: schema.content_id("section", r["document_id"], str(r["char_start"]), str(r["level"]), title),
            schema.HRID: i, schema.DOCUMENT_ID: r["document_id"], schema.LEVEL: r["level"],
            schema.PARENT: r["parent_index"], schema.TITLE: title,
            "origin": "apparatus" if r["origin"] == "outline" and APPARATUS.search(title) else r["origin"], "key_phrases": ph,
            "statement": statement, "statement_unit": unit,
            schema.TEXT_UNIT_IDS: [u["id"] for u in r["units"]], "n_tokens": r["n_tokens"],
            schema.PAGE_START: r["page_start"], schema.PAGE_END: r["page_end"],
            schema.CHAR_START: r["char_start"], schema.CHAR_END: r["char_end"],
        })
    return frame(schema.SECTIONS, out)
