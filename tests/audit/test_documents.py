"""audit/documents.py on real indexes: the paragraph around a quote (a provrag index with
character offsets, and a GraphRAG index without), and how the page-image budget is spent."""
from __future__ import annotations

import pytest

from provrag.audit.documents import PARA_MAX, Docs, Pages, image_key, mark_in
from tests.audit.runs import rows

pytestmark = pytest.mark.usefixtures("shared")


def test_paragraph_is_the_quote_in_its_document_text(small):
    idx = small[0]
    # a unit of the plain-text speech that starts well into the document
    (uid, text, cs), = rows(
        f"SELECT t.id, t.text, t.char_start FROM read_parquet('{idx}/text_units.parquet') t "
        f"JOIN read_parquet('{idx}/documents.parquet') d ON d.id = t.document_id "
        f"WHERE d.path = 'sotu-1863-lincoln.txt' AND t.char_start > {8 * PARA_MAX} ORDER BY t.char_start LIMIT 1")
    (doc_text,), = rows(f"SELECT d.text FROM read_parquet('{idx}/documents.parquet') d "
                         f"WHERE d.path = 'sotu-1863-lincoln.txt'")
    quote = text[200:320]
    docs = Docs(idx, None)
    try:
        before, found, after = docs.paragraph(uid, quote)
        assert found == quote
        # what is shown is the document's own text around the quote, within its paragraph
        context = before.removeprefix("…") + found + after.removesuffix("…")
        assert context in doc_text and "\n\n" not in context.strip("\n")
        assert len(before.removeprefix("…")) <= PARA_MAX and len(after.removesuffix("…")) <= PARA_MAX
        # the quote is marked where the unit's offsets put it in the document
        assert doc_text.index(context) + len(before.removeprefix("…")) == cs + 200
        assert docs.paragraph("no-such-unit", quote) is None
        assert docs.paragraph(uid, "zebras migrate across the Serengeti every spring") is None
        # the window is read to its end: the connection takes other work after it (a report
        # fetches many units at once through a registered table; DuckDB 2 refused it before)
        docs.paragraph(uid, quote)
        import pyarrow as pa

        docs.reader.con.register("provrag_after_paragraph", pa.table({"v": ["x"]}))
    finally:
        docs.close()


def test_paragraph_on_a_graphrag_index_is_the_unit_itself(dulce_v3):
    """GraphRAG text units carry no character offsets: the unit's text is the context, and
    both ends say the document goes on."""
    gidx = dulce_v3
    (uid, text), = rows(f"SELECT id, text FROM read_parquet('{gidx}/text_units.parquet') LIMIT 1")
    quote = text[300:420]
    docs = Docs(gidx, None)
    try:
        before, found, after = docs.paragraph(uid, quote)
    finally:
        docs.close()
    assert found == quote
    assert (before.removeprefix("…") + found + after.removesuffix("…")) in text
    assert after.endswith("…") or "\n\n" in text[text.index(quote):]


def test_mark_in_cuts_long_context_and_says_so():
    text = "a" * 2000 + " the quote here " + "b" * 2000
    before, q, after = mark_in(text, "the quote here")
    assert q == "the quote here"
    assert before.startswith("…") and len(before) == PARA_MAX + 1    # "…" and PARA_MAX characters
    assert after.endswith("…") and len(after) == PARA_MAX + 1
    assert mark_in("", "x") is None and mark_in("text", "") is None


def test_plan_gives_every_claim_its_best_pdf_page_first(small, small_corpus):
    idx = small[0]
    pages = sorted({p for (p,) in rows(
        f"SELECT t.page_start FROM read_parquet('{idx}/text_units.parquet') t "
        f"JOIN read_parquet('{idx}/documents.parquet') d ON d.id = t.document_id "
        f"WHERE d.path = 'R-FAQ.pdf' AND t.page_start IS NOT NULL")})[:6]

    def src(page, quote):
        return {"path": "R-FAQ.pdf", "page_start": page, "page_end": page, "quote": quote}

    txt = {"path": "sotu-1863-lincoln.txt", "page_start": None, "quote": "x"}
    first = [("evidence", txt), ("evidence", src(pages[0], "a")), ("evidence", src(pages[1], "b"))]
    second = [("evidence", src(pages[2], "c")), ("evidence", src(pages[3], "d"))]
    docs = Docs(idx, small_corpus)
    try:
        plan = Pages(docs, 2).plan([first, second], shown=5)
        assert plan == {image_key(second[0][1]), image_key(first[1][1])}
        # folded evidence (beyond `shown`) never gets an image, budget or not
        assert Pages(docs, 10).plan([first, second], shown=1) == {image_key(second[0][1])}
        assert Pages(docs, 0).plan([first, second], shown=5) == set()
    finally:
        docs.close()
