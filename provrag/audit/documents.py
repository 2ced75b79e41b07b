"""The documents behind the audited index, as the report needs them: is the file still the
one that was indexed, the paragraph around a quote, and which PDF pages get an image.

Why the checks: the page drawn must be the page that was indexed. The index's manifest
records the DOCS root and every file's sha256; a file that moved or changed is reported,
never drawn. Why the budget: every page image is a PNG inside the one HTML file, so
`--max-pages` bounds them, and `Pages.plan` spends the budget fairly across claims.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from provrag.audit.markup import as_text
from provrag.audit.pages import RenderError, render_page

PARA_MAX = 700          # characters of context kept on each side of a quote in a page-less paragraph
MAX_PAGES_TRIED = 3     # pages of a multi-page unit searched for the quote before giving up


class Docs:
    """Where each indexed file is now, whether it is still the indexed one, and its text."""

    def __init__(self, index_dir, docs_root, open_reader: bool = True):
        """`open_reader=False`: file states only (state()), no paragraph(): no DuckDB database opened
        (the server draws a page image per request: one index opened per image was churn)."""
        self.reader = None
        self.manifest: dict = {}
        self.notes: list[str] = []
        if index_dir is not None and open_reader:
            from provrag.store.reader import IndexNotFound, open_index

            try:
                self.reader = open_index(index_dir)
            except IndexNotFound as e:
                self.notes.append(str(e))
        if index_dir is not None:
            try:
                self.manifest = json.loads((Path(index_dir) / "manifest.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.manifest = {}
        root = docs_root or self.manifest.get("docs_root")
        self.root = Path(root) if root else None
        if self.root is not None and not self.root.is_absolute() and index_dir is not None:
            # an index built with a relative DOCS path: relative to where `provrag index` ran,
            # which is usually here or the index folder's parent (sha256 still guards the match)
            for base in (Path.cwd(), Path(index_dir).resolve().parent):
                if (base / self.root).is_dir():
                    self.root = (base / self.root).resolve()
                    break
        self.sha = {d.get("path"): d.get("sha256") for d in self.manifest.get("documents") or [] if isinstance(d, dict)}
        self._state: dict[str, tuple[str, str, Path | None]] = {}

    def state(self, rel: str | None) -> tuple[str, str, Path | None]:
        """("ok" | "moved" | "changed" | "unknown", message, file) for a document path."""
        if rel in self._state:
            return self._state[rel]
        if not rel:
            st = ("unknown", "the evidence names no file", None)
        elif Path(rel).is_absolute() or ".." in Path(rel).parts:
            st = ("unknown", f"{rel} is not a path inside the documents folder; page not drawn", None)
        elif self.root is None:
            st = ("unknown", "the index does not record where its documents live (no docs_root in manifest.json)", None)
        elif self.sha and rel not in self.sha:
            st = ("unknown", f"{rel} is not in the index's manifest; page not drawn", None)
        else:
            f = self.root / rel
            try:
                h = hashlib.sha256()
                with open(f, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
                want = self.sha.get(rel)
                if want and h.hexdigest() != want:
                    st = ("changed", f"{f} changed since indexing (sha256 differs); page not drawn", None)
                else:  # no manifest at all (an older index): drawn, unchecked
                    st = ("ok", "" if want else f"{f}: no sha256 recorded, drawn unchecked", f)
            except FileNotFoundError:
                st = ("moved", f"{f} is not there any more (moved or deleted since indexing); page not drawn", None)
            except OSError as e:
                st = ("moved", f"{f} cannot be read ({e.strerror or e}); page not drawn", None)
        self._state[rel] = st
        return st

    def problems(self) -> list[str]:
        """The message of every file looked at so far that is not usable, in the order met."""
        return [msg for state, msg, _ in self._state.values() if state != "ok"]

    def paragraph(self, text_unit_id: str | None, quote: str) -> tuple[str, str, str] | None:
        """(before, quote as found, after): the quote inside its paragraph of the document.

        The unit comes from the shared fetcher (store/units.py); only the window of its
        document's text around it is read here, so a long document is never loaded whole."""
        if self.reader is None or not text_unit_id:
            return None
        from provrag.store.units import fetch_units

        try:
            unit = fetch_units(self.reader, [text_unit_id]).get(text_unit_id)
            if unit is None:
                return None
            window, n, w0 = None, None, 0
            if unit.char_start is not None:
                w0 = max(unit.char_start - PARA_MAX, 0)
                span = unit.char_end - unit.char_start if unit.char_end is not None else 0
                # fetchall, not fetchone: DuckDB 2 holds a result not read to its end as unfinished
                # and refuses the connection's next register() (the next fetch of many units)
                rows = self.reader.con.execute(
                    "SELECT substr(text, ? + 1, ?), length(text) FROM documents WHERE id = ? LIMIT 1",
                    [w0, span + 2 * PARA_MAX, unit.document_id]).fetchall()
                window, n = rows[0] if rows else (None, None)
        except Exception:
            return None
        if not window:  # GraphRAG index (no offsets) or no document text: the unit is the context
            return mark_in(unit.text, quote, True, True)
        return mark_in(window, quote, w0 > 0, w0 + len(window) < (n or 0))

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


def mark_in(text: str, quote: str, more_left: bool = False, more_right: bool = False) -> tuple[str, str, str] | None:
    """Split text around the quote (exact, else rapidfuzz alignment), trimmed to its paragraph
    (blank-line bounded) and to PARA_MAX characters each side; "…" where text was cut."""
    if not text or not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        a, b = at, at + len(quote)
    else:
        from rapidfuzz import fuzz

        al = fuzz.partial_ratio_alignment(quote, text, score_cutoff=80)
        if al is None:
            return None
        a, b = al.dest_start, al.dest_end
    p0 = text.rfind("\n\n", 0, a)
    p1 = text.find("\n\n", b)
    start = p0 + 2 if p0 >= 0 else 0
    end = p1 if p1 >= 0 else len(text)
    cut_left = a - start > PARA_MAX or (p0 < 0 and more_left)
    cut_right = end - b > PARA_MAX or (p1 < 0 and more_right)
    start, end = max(start, a - PARA_MAX), min(end, b + PARA_MAX)
    before = ("…" if cut_left else "") + text[start:a].lstrip("\n")
    after = text[b:end].rstrip() + ("…" if cut_right else "")
    return before, text[a:b], after


def is_pdf(src: dict) -> bool:
    """Whether a source is on a PDF page that can be drawn (a .pdf file and an integer page)."""
    p = str(src.get("path") or "").lower()
    ps = src.get("page_start")
    return (p.endswith(".pdf") or p.endswith(".pdf.gz")) and isinstance(ps, int) and not isinstance(ps, bool)


def image_key(src: dict) -> tuple:
    """What one page image stands for: (file, page, quote) — the same quote on the same page
    is drawn once and referred to after that."""
    return as_text(src.get("path")), as_text(src.get("page_start")), as_text(src.get("quote"))


class Pages:
    """Renders page images within the --max-pages budget; one image per (file, page, quote)."""

    def __init__(self, docs: Docs, max_pages: int):
        self.docs, self.budget = docs, max(0, int(max_pages))
        self.done: dict[tuple, dict | None] = {}
        self.count = 0

    def plan(self, claims_ev: list[list[tuple[str, dict]]], shown: int) -> set[tuple]:
        """The (file, page, quote) keys that get an image: round robin over claims by rank, so
        every claim's best PDF page comes before any claim's second. Only the first `shown`
        sources of a claim are candidates: folded evidence is listed without images."""
        keys, rank = set(), 0
        claims_ev = [ev[:shown] for ev in claims_ev]
        while len(keys) < self.budget and any(rank < len(ev) for ev in claims_ev):
            for ev in claims_ev:
                if rank < len(ev) and is_pdf(ev[rank][1]) and len(keys) < self.budget:
                    s = ev[rank][1]
                    if self.docs.state(as_text(s.get("path")))[0] != "ok":
                        continue
                    keys.add(image_key(s))
            rank += 1
        return keys

    def image(self, src: dict) -> dict | None:
        """render_page's result for the source's page (the first of its pages, up to
        MAX_PAGES_TRIED, where the quote is found), with "page" and an element "id"; a source
        drawn before comes back with "repeat"; {"error": …} where the page cannot be drawn."""
        key = image_key(src)
        if key in self.done:
            return self.done[key] and {**self.done[key], "repeat": True}
        f = self.docs.state(as_text(src.get("path")))[2]
        res = None
        if f is not None:
            first = src["page_start"]
            last = src["page_end"] if isinstance(src.get("page_end"), int) and src["page_end"] >= first else first
            try:
                for p in range(first, min(last, first + MAX_PAGES_TRIED - 1) + 1):
                    r = render_page(f, p, as_text(src.get("quote")))
                    r["page"] = p
                    if res is None or r["found"]:
                        res = r
                    if r["found"]:
                        break
            except RenderError as e:
                res = {"error": str(e)}
        if res is not None and "png" in res:
            self.count += 1
            res["id"] = f"page-{self.count}"
        self.done[key] = res
        return res
