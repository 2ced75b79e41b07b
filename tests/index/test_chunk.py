"""Chunking keeps characters and pages exact on real documents."""
import re

import pypdfium2 as pdfium
import pytest

from provrag.config import load_config
from provrag.index.chunk import chunk_stage, chunk_text, link_units
from provrag.index.load import documents_frame, load_folder
from provrag.index.tables import frame
from provrag.store import schema
from provrag.text.tokens import count_tokens


def _pdf_pages(path):
    pdf = pdfium.PdfDocument(str(path))
    texts = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    text, pages, pos = "", [], 0
    for i, t in enumerate(texts, start=1):
        if i > 1:
            text += "\n\n"
            pos += 2
        pages.append((i, pos, pos + len(t)))
        text += t
        pos += len(t)
    return text, pages


@pytest.mark.parametrize("size,overlap", [(300, 40), (120, 0), (1200, 100)])
def test_units_cover_text_and_respect_size(small_corpus, size, overlap):
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text()
    units = chunk_text(text, None, size, overlap)
    assert units, "a real speech yields units"
    for u in units:
        assert text[u["char_start"]:u["char_end"]] == u["text"]
        assert u["n_tokens"] == count_tokens(u["text"])
        assert u["page_start"] is None and u["page_end"] is None
    # every non-space character of the document is in some unit
    covered = bytearray(len(text))
    for u in units:
        covered[u["char_start"]:u["char_end"]] = b"\x01" * (u["char_end"] - u["char_start"])
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
    # sizes: only a single over-long sentence may exceed the budget
    assert sum(u["n_tokens"] > size for u in units) <= len(units) // 10
    starts = [u["char_start"] for u in units]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_pdf_units_land_on_their_pages(small_corpus):
    text, pages = _pdf_pages(small_corpus / "R-FAQ.pdf")
    units = chunk_text(text, pages, 300, 40)
    n_pages = len(pages)
    norm = lambda s: re.sub(r"\s+", "", s)
    for u in units:
        assert 1 <= u["page_start"] <= u["page_end"] <= n_pages
        span = norm(text[pages[u["page_start"] - 1][1]:pages[u["page_end"] - 1][2]])
        assert norm(u["text"]) in span
    one_page = sum(u["page_start"] == u["page_end"] for u in units)
    assert one_page / len(units) > 0.8, "300-token units mostly sit on one page"


def test_one_huge_line_is_chunked():
    text = "lorem ipsum dolor sit amet " * 40000  # ~1 MB, no sentence end
    units = chunk_text(text, None, 300, 40)
    assert len(units) > 100
    assert max(u["n_tokens"] for u in units) <= 700


def test_empty_text_has_no_units():
    assert chunk_text("", None, 300, 40) == []
    assert chunk_text("   \n\n  ", None, 300, 40) == []


def test_chunk_stage_numbers_units_and_documents_learn_theirs(tmp_path, small_corpus, bad_corpus):
    import shutil

    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", tmp_path / "a.txt")
    shutil.copyfile(bad_corpus / "invalid-utf8.txt", tmp_path / "b.txt")  # failed: no units
    cfg = load_config(overrides={"load": {"workers": 1}})
    docs = documents_frame(load_folder(tmp_path, cfg))
    units = chunk_stage(docs, cfg)
    assert units.schema == frame(schema.TEXT_UNITS, []).schema
    assert units["human_readable_id"].to_list() == list(range(units.height))
    assert set(units["document_id"]) == {docs["id"][0]} and units["id"].n_unique() == units.height
    want = chunk_text(docs["text"][0], None, cfg.chunk.size_tokens, cfg.chunk.overlap_tokens)
    assert units["text"].to_list() == [u["text"] for u in want]
    assert units["is_skeleton"].null_count() == units["entity_ids"].null_count() == units.height  # later stages
    linked = link_units(docs, units)
    assert linked["text_unit_ids"].to_list() == [units["id"].to_list(), []]
    assert linked.drop("text_unit_ids").equals(docs.drop("text_unit_ids"))


def test_chunk_stage_over_many_batches_equals_chunking_each_document(tmp_path, shared):
    """Past _FRAME_ROWS units the stage builds its frame batch by batch: the table is the one
    chunking each document on its own gives, numbered 0..n-1 across batches and documents."""
    import shutil

    from provrag.index.chunk import _FRAME_ROWS

    novella = next((shared / "fixtures" / "graphrag-dulce" / "source").glob("Operation*.md"))
    for i in range(8):  # ~1,170 units each
        shutil.copyfile(novella, tmp_path / f"copy-{i}.md")
    cfg = load_config(overrides={"load": {"workers": 1}, "chunk": {"size_tokens": 16, "overlap_tokens": 4}})
    docs = documents_frame(load_folder(tmp_path, cfg))
    units = chunk_stage(docs, cfg)
    assert units.height > _FRAME_ROWS
    assert units.schema == frame(schema.TEXT_UNITS, []).schema
    assert units["human_readable_id"].to_list() == list(range(units.height))
    assert units["id"].n_unique() == units.height
    want = [u for text in docs["text"] for u in chunk_text(text, None, 16, 4)]
    assert units.select("text", "char_start", "char_end", "n_tokens").rows() == [
        (u["text"], u["char_start"], u["char_end"], u["n_tokens"]) for u in want]
