"""An answer keeps the sentence that completes its lead (issue 26, lane honest3): over real TeX
Live manuals (the pinned texlive-latex-recommended-doc PDFs of tests/conftest.py; PROVRAG_TEXLIVE:
a folder that already holds them)."""
from __future__ import annotations

from provrag.config import load_config
from provrag.pipelines.ask import run_ask


def test_the_sentence_that_completes_the_lead_is_kept(four_manuals_index):
    """microtype.pdf p. 7: "The numbers will be divided by 1000, so that a stretch limit of 10
    means that the font may be expanded by up to 1%. The default stretch limit is 20." The lead
    is the first sentence; the reader reads the second low on its own (~0.2), so it was cut and
    the answer never gave the default."""
    res = run_ask("What is microtype's default stretch limit for font expansion?", four_manuals_index,
                  load_config(), save=False)
    assert not res.abstained
    assert res.sources[0].path.endswith("microtype.pdf") and res.sources[0].page_start == 7
    lead_at = res.answer.find("stretch limit of 10")
    assert 0 <= lead_at < res.answer.find("The default stretch limit is 20"), res.answer

