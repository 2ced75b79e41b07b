"""The spelling fix of a question's words (store/terms.match_terms) over real TeX Live manuals
(listings.pdf, polyglossia.pdf from the pinned texlive-latex-recommended-doc, tests/conftest.py):
a typo is fixed, but a rare word the index never saw is not read as a shorter word that merely
shares its first letters (issue 26: "monokai" was answered as "mono" at 0.885)."""
from __future__ import annotations

import duckdb
import pytest

from provrag.store.terms import TERMS_VIEW, build_terms, match_terms


@pytest.fixture(scope="module")
def manuals_terms(texlive_package):
    """A connection holding the BM25 term table of listings.pdf and polyglossia.pdf, one unit a page."""
    import polars as pl
    import pypdfium2 as pdfium

    ids, texts = [], []
    for name in ("listings.pdf", "polyglossia.pdf"):
        pdf = pdfium.PdfDocument(texlive_package / name)
        for n in range(len(pdf)):
            ids.append(f"{name}:{n + 1}")
            texts.append(pdf[n].get_textpage().get_text_range())
        pdf.close()
    con = duckdb.connect()
    con.register("_terms", build_terms(pl.DataFrame({"id": ids, "text": texts})).to_arrow())
    con.execute(f"CREATE TEMP TABLE {TERMS_VIEW} AS SELECT * FROM _terms")
    yield con
    con.close()


def test_a_rare_word_is_not_cut_down_to_another_word_with_its_prefix(manuals_terms):
    # polyglossia.pdf holds "mono" (a monospaced font); no manual here mentions Monokai
    assert manuals_terms.execute(f"SELECT count(*) FROM {TERMS_VIEW} WHERE term = 'mono'").fetchone()[0] >= 1
    terms, fixes = match_terms(manuals_terms, "How do I typeset a listing in the Monokai colour scheme with listings?")
    assert "monokai" not in fixes and "mono" not in terms
    assert {"list", "colour", "scheme"} <= set(terms)


def test_a_typo_is_still_fixed(manuals_terms):
    terms, fixes = match_terms(manuals_terms, "How do I set the backgroud colour in polyglosia?")
    assert fixes == {"backgroud": "background", "polyglosia": "polyglossia"}
    assert {"background", "colour", "polyglossia"} <= set(terms)
