"""One PDF page as a PNG with the evidence quote highlighted — what `provrag report` shows.

A reader checking a claim wants to see the page itself, not only the quote we extracted
from it. pypdfium2 does everything needed: it renders the page, its text page knows every
character and that character's box, and its bitmap position converter maps PDF canvas
coordinates (origin bottom-left, points) to image pixels, honouring /Rotate and crop boxes.

Finding the quote on the page, in order of preference:
1. pdfium's own text search (`PdfTextPage.search`) for the quote with whitespace collapsed;
2. an exact match of the *normalised* quote in the normalised page characters — letters and
   digits only, NFKC-folded, lower case — which absorbs line breaks, pdfium's hyphenation
   marks, ligatures and the whitespace that `clean_page_text` rewrote at load time;
3. the quote's pieces found in order with small gaps (`_pieces`): a few garbled characters
   (`"fuzzy"`), or the head or tail of a quote that crosses a page boundary (`"partial"`,
   with the share of the quote that is on this page);
4. rapidfuzz's `partial_ratio_alignment` of the normalised strings (noise everywhere),
   accepted at FUZZY_MIN or better.
Every normalised character keeps the index of the pdfium character it came from, so any
match maps straight back to character boxes.
"""
from __future__ import annotations

import io
import threading
import unicodedata
from pathlib import Path

DEFAULT_SCALE = 1.5          # pixels per PDF point before the max_width cap (108 dpi)
DEFAULT_MAX_WIDTH = 900      # widest image we embed; keeps a report mailable
FUZZY_MIN = 85.0             # rapidfuzz partial ratio (0-100) that counts as "the quote is here"
PIECE = 24                   # characters per piece in the piecewise (cross-page, garbled) match
GAP = 12                     # characters a piece may start after the previous one ended
MAX_MISSED = 2               # consecutive pieces not found before a chain ends
PALETTE = 48                 # colours in the embedded PNG
HIGHLIGHT_FILL = (255, 214, 0, 96)
HIGHLIGHT_EDGE = (224, 112, 0, 255)


class RenderError(ValueError):
    """The page cannot be drawn (no such file or page, not a PDF); the message is one line."""


def _fold(ch: str) -> str:
    """The comparable form of one character: NFKC (ligatures → letters), lower case, and
    nothing at all for anything that is not a letter or digit."""
    return "".join(c for c in unicodedata.normalize("NFKC", ch).lower() if c.isalnum())


def normalise(text: str) -> str:
    return "".join(_fold(c) for c in text)


def _page_key(textpage) -> tuple[str, list[int], int]:
    """(normalised page text, pdfium char index of each normalised character, char count)."""
    import pypdfium2.raw as pdfium_c

    n = textpage.count_chars()
    key, idx = [], []
    for i in range(n):
        code = pdfium_c.FPDFText_GetUnicode(textpage, i)
        if not code:
            continue
        try:
            folded = _fold(chr(code))
        except ValueError:
            continue
        for c in folded:
            key.append(c)
            idx.append(i)
    return "".join(key), idx, n


def _search(textpage, quote: str) -> tuple[int, int] | None:
    """pdfium's text search: (first char index, count) of the quote, or None."""
    needle = " ".join(quote.split())
    if not needle:
        return None
    try:
        searcher = textpage.search(needle, match_case=False)
        hit = searcher.get_next()
        searcher.close()
    except Exception:  # pdfium refuses odd needles (very long, control characters): fall back
        return None
    if hit and hit[1] > 0:
        return hit
    return None


def _pieces(qkey: str, key: str) -> tuple[int, int, float] | None:
    """The quote's pieces found in order on the page: (start, end, share of the quote covered)
    of the best chain, or None.

    Hand-written because neither exact nor fuzzy whole-quote matching fits two real cases: a
    quote crossing a page boundary has only its head (or tail) on a given page, and a quote
    with a few garbled characters breaks exact matching. The quote is cut into PIECE-character
    pieces; each is looked up (`str.find`, exact) right after the previous one, allowing a small
    gap, so a garbled piece is skipped and the chain goes on; the chain with the most matched
    characters wins. Exact pieces cannot match scattered letters the way an LCS alignment does.
    """
    pieces = [qkey[i:i + PIECE] for i in range(0, len(qkey), PIECE)]
    if len(pieces) > 1 and len(pieces[-1]) < 8:   # a tiny tail piece would match anywhere
        tail = pieces.pop()
        pieces[-1] += tail
    best, chain, missed = None, None, 0             # chain: [start, end, covered]
    for p in pieces:
        if chain is not None:
            limit = chain[1] + len(p) + GAP + missed * PIECE
            at = key.find(p, chain[1], limit)
            if at >= 0:
                chain[1], chain[2], missed = at + len(p), chain[2] + len(p), 0
                continue
            missed += 1
            if missed <= MAX_MISSED:
                continue
            if best is None or chain[2] > best[2]:
                best = chain
            chain = None
        at = key.find(p)
        if at >= 0:
            chain, missed = [at, at + len(p), len(p)], 0
    if chain is not None and (best is None or chain[2] > best[2]):
        best = chain
    if best is None or best[2] < min(len(qkey), 2 * PIECE):
        return None                                   # one short piece can match by chance
    # the share of the quote this chain spans (skipped garbled pieces inside it count as found)
    return best[0], best[1], min(1.0, (best[1] - best[0]) / len(qkey))


def locate(textpage, quote: str) -> tuple[list[int], str | None, float]:
    """pdfium character indices of the quote on this text page, how they were found
    ("search", "normalised", "fuzzy", "partial" or None) and the share of the quote covered."""
    hit = _search(textpage, quote)
    if hit:
        return list(range(hit[0], hit[0] + hit[1])), "search", 1.0
    qkey = normalise(quote)
    if not qkey:
        return [], None, 0.0
    key, idx, _ = _page_key(textpage)
    if not key:
        return [], None, 0.0
    at = key.find(qkey)
    if at >= 0:
        return list(range(idx[at], idx[at + len(qkey) - 1] + 1)), "normalised", 1.0
    chain = _pieces(qkey, key)
    if chain and chain[2] >= 0.5:
        s, e, cov = chain
        return list(range(idx[s], idx[e - 1] + 1)), ("fuzzy" if cov >= 0.9 else "partial"), round(cov, 3)
    if len(qkey) <= len(key):
        from rapidfuzz import fuzz

        al = fuzz.partial_ratio_alignment(qkey, key, score_cutoff=FUZZY_MIN)
        if al is not None and al.dest_end > al.dest_start:
            return list(range(idx[al.dest_start], idx[al.dest_end - 1] + 1)), "fuzzy", round(al.score / 100.0, 3)
    if chain:
        s, e, cov = chain
        return list(range(idx[s], idx[e - 1] + 1)), "partial", round(cov, 3)
    return [], None, 0.0


def line_boxes(textpage, chars: list[int]) -> list[tuple[float, float, float, float]]:
    """Character boxes (PDF points, l, b, r, t) merged into one rectangle per text line.

    Loose boxes (the font's full height) give even line heights; whitespace and characters
    pdfium generated itself (line breaks it inserted) have no ink and are skipped. A char
    joins the current line when it overlaps the line vertically by half its height and does
    not jump back to the left (a new line of a column starts left of where the last ended).
    """
    import pypdfium2.raw as pdfium_c

    lines: list[list[float]] = []
    for i in chars:
        code = pdfium_c.FPDFText_GetUnicode(textpage, i)
        if not code or chr(code).isspace() or code in (0xFFFE, 0xFFFF) or pdfium_c.FPDFText_IsGenerated(textpage, i) == 1:
            continue
        try:
            l, b, r, t = textpage.get_charbox(i, loose=True)
        except Exception:
            continue
        if r - l <= 0 or t - b <= 0:
            continue
        if lines:
            L = lines[-1]
            overlap = min(t, L[3]) - max(b, L[1])
            if overlap >= 0.5 * min(t - b, L[3] - L[1]) and l >= L[0] - 2:
                L[0], L[1], L[2], L[3] = min(L[0], l), min(L[1], b), max(L[2], r), max(L[3], t)
                continue
        lines.append([l, b, r, t])
    return [tuple(x) for x in lines]


def _open(pdf):
    import pypdfium2 as pdfium

    if isinstance(pdf, (bytes, bytearray)):
        src = bytes(pdf)
    else:
        p = Path(pdf)
        if not p.is_file():
            raise RenderError(f"no such file: {p}")
        src = p.read_bytes()
        if p.suffix.lower() == ".gz":
            import gzip

            try:
                src = gzip.decompress(src)
            except (OSError, EOFError) as e:
                raise RenderError(f"cannot decompress {p.name}: {e}") from None
    try:
        return pdfium.PdfDocument(src)
    except Exception as e:
        raise RenderError(f"not a readable PDF: {str(e).splitlines()[0][:120] if str(e) else type(e).__name__}") from None


# pdfium is not thread-safe (pypdfium2's documentation: never call it from two threads at once):
# a server drawing two page images at a time crashed in libpdfium (SIGSEGV, `make fuzz`'s soak
# once asks ran two at a time). Every drawing in a process takes this lock.
PDFIUM_LOCK = threading.Lock()


def render_page(pdf_path, page_no: int, quote: str | None, scale: float = DEFAULT_SCALE,
                max_width: int = DEFAULT_MAX_WIDTH, draw: bool = True) -> dict:
    """Render physical page `page_no` (1-based) of a PDF (path or bytes) with `quote` highlighted.

    Returns {"png": bytes, "width", "height", "boxes": [(x0, y0, x1, y1) image pixels, one
    per highlighted line], "found": bool, "match": how the quote was found or None,
    "coverage": share of the quote on this page, "n_pages"}. Raises RenderError (one line)
    when the file or page cannot be drawn; a quote not on the page is not an error
    (found=False, the page is still drawn). One drawing at a time per process (PDFIUM_LOCK).
    """
    with PDFIUM_LOCK:
        return _render_page(pdf_path, page_no, quote, scale, max_width, draw)


def _render_page(pdf_path, page_no: int, quote: str | None, scale: float, max_width: int, draw: bool) -> dict:
    from PIL import Image, ImageDraw

    pdf = _open(pdf_path)
    try:
        n_pages = len(pdf)
        if not isinstance(page_no, int) or not 1 <= page_no <= n_pages:
            raise RenderError(f"page {page_no} is not in the document (it has {n_pages} pages)")
        page = pdf[page_no - 1]
        pw, ph = page.get_size()
        if pw <= 0 or ph <= 0:
            raise RenderError(f"page {page_no} has no size")
        # (max_width - 0.01): pypdfium2 rounds the bitmap size up, so the image stays within max_width
        sc = max(0.1, min(float(scale), (float(max_width) - 0.01) / pw)) if max_width else float(scale)
        bitmap = page.render(scale=sc, rev_byteorder=True)
        img = bitmap.to_pil().convert("RGB")
        w, h = img.size
        boxes: list[tuple[int, int, int, int]] = []
        match, coverage = None, 0.0
        if quote and quote.strip():
            tp = page.get_textpage()
            chars, match, coverage = locate(tp, quote)
            conv = bitmap.get_posconv(page)
            pad = max(1, round(sc))
            for l, b, r, t in line_boxes(tp, chars):
                xa, ya = conv.to_bitmap(l, t)
                xb, yb = conv.to_bitmap(r, b)
                x0, x1 = sorted((xa, xb))
                y0, y1 = sorted((ya, yb))
                x0, y0 = max(0, x0 - pad), max(0, y0 - pad)
                x1, y1 = min(w, x1 + pad), min(h, y1 + pad)
                if x1 > x0 and y1 > y0:
                    boxes.append((x0, y0, x1, y1))
            tp.close()
        if draw and boxes:
            overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
            d = ImageDraw.Draw(overlay)
            for x0, y0, x1, y1 in boxes:
                d.rectangle((x0, y0, x1 - 1, y1 - 1), fill=HIGHLIGHT_FILL, outline=HIGHLIGHT_EDGE, width=max(1, round(sc)))
            img = Image.alpha_composite(img.convert("RGBA"), overlay).convert("RGB")
        buf = io.BytesIO()
        # a small palette (fast octree) cuts a text page's PNG to about a quarter of the RGB one, in
        # about a tenth of a second, with no visible loss on text and flat highlight colours
        img.quantize(colors=PALETTE, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(buf, "PNG")
        page.close()
        return {"png": buf.getvalue(), "width": w, "height": h, "boxes": boxes, "found": bool(boxes),
                "match": match if boxes else None, "coverage": coverage if boxes else 0.0, "n_pages": n_pages}
    finally:
        pdf.close()
