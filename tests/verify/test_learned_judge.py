"""verify with the learned judge (issue 26): per-evidence labels mean what they say, and a claim
with one word swapped is not supported because the swapped word stands elsewhere in the page.

Over real documents: the repository's data/ (the Halcyon handbook) and two TeX Live manuals
(booktabs.pdf, microtype.pdf) from Debian's texlive-latex-recommended-doc, fetched once per
session with apt-get download at a pinned version and checked by sha256 (PROVRAG_TEXLIVE: a
folder that already holds them, e.g. the output of fetch-debian-docs.sh DIR pdf-texlive)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from provrag.config import load_config
from provrag.pipelines.verify import run_verify

TEXLIVE_PDFS = ("booktabs.pdf", "microtype.pdf")


@pytest.fixture(scope="session")
def texlive_pdfs(tmp_path_factory, texlive_package) -> Path:
    """booktabs.pdf and microtype.pdf, byte-identical to the pinned Debian package's (tests/conftest.py)."""
    dest = tmp_path_factory.mktemp("texlive") / "docs"
    dest.mkdir()
    for name in TEXLIVE_PDFS:
        shutil.copy(texlive_package / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def texlive_index(tmp_path_factory, texlive_pdfs):
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("texlive-index") / "idx"
    run_index(texlive_pdfs, out, load_config())
    return out


def test_booktabs_cmidrule_is_the_analogue_of_cline_not_hline(texlive_index):
    """booktabs.pdf p. 4: "a \\cmidrule (the analogue of LaTeX's \\cline command)"; \\hline stands a
    sentence earlier on the same page."""
    res = run_verify(texlive_index, load_config(), save=False,
                     answer="In booktabs, \\cmidrule is the analogue of LaTeX's \\hline command.")
    (claim,) = res.claims
    assert claim.verdict != "supported", [(e.label, e.reason, e.quote) for e in claim.evidence]
    true = run_verify(texlive_index, load_config(), save=False,
                      answer="In booktabs, \\cmidrule is the analogue of LaTeX's \\cline command.")
    assert true.claims[0].verdict == "supported"


def test_microtype_protrusion_needs_pdftex_0_14f_not_1_20(texlive_index):
    """microtype.pdf p. 1: "character protrusion requires pdfTeX (version 0.14f or later) … Font
    expansion works with pdfTeX (version 1.20 for automatic expansion)": 1.20 is the expansion's."""
    res = run_verify(texlive_index, load_config(), save=False,
                     answer="In microtype, character protrusion requires pdfTeX version 1.20 or later.")
    assert res.claims[0].verdict != "supported", [(e.label, e.reason, e.quote) for e in res.claims[0].evidence]
    true = run_verify(texlive_index, load_config(), save=False,
                      answer="In microtype, character protrusion requires pdfTeX version 0.14f or later.")
    assert true.claims[0].verdict == "supported"


def test_evidence_that_does_not_mention_a_date_is_not_stated_never_contradicted(sample_index):
    """The handbook's title page states the claim; page 2 (the owner and the contractor) never
    mentions the date: it is "not stated" evidence, not a contradiction."""
    claim = ("Commissioning Handbook, revision C, issued 27 February 2025 by Brightwater Engineering Ltd. "
             "for the Orrin Valley Water Authority (OVWA).")
    res = run_verify(sample_index, load_config(), save=False, answer=claim)
    (c,) = res.claims
    assert c.verdict == "supported"
    assert [e for e in c.evidence if e.label == "contradicted"] == [], [(e.page_start, e.reason) for e in c.evidence]
    # the first thing the reason says (after the fitted judge's "unsupported: " label) is "not stated"
    assert any(e.label == "unsupported" and e.reason.removeprefix("unsupported: ").startswith("not stated")
               for e in c.evidence)


def test_citations_hold_the_evidence_only_beside_cited_evidence(sample_index):
    from provrag.views.verify import shown_evidence

    answer = ("The commissioning team is led by Dr. Imogen Vale, Brightwater's commissioning manager. "
              "[Data: Sources (3)]")
    res = run_verify(sample_index, load_config(), save=False, answer=answer)
    (c,) = res.claims
    assert c.cited_supports
    shown = shown_evidence(c, 2)
    assert any(e.route in ("cited", "both") and e.label == "supported" for e in shown)


def test_the_fitted_judges_reason_never_says_covers_beside_missing_words():
    """Without the learned reader ([verify] judge = "features"), a reason that lists the claim's
    missing words does not also call the claim "covered" (90 % of its weight can lack five words)."""
    from provrag.engines.offline.judge.decide import judge

    vcfg = load_config().verify
    (v,) = judge("Dr. Imogen Vale leads the Halcyon commissioning team from the Kestrel Point control room "
                 "with four shift engineers and a chemist.",
                 ["The commissioning team is led by Dr. Imogen Vale, Brightwater's commissioning manager."], vcfg)
    assert "missing:" in v["reason"] and "covers" not in v["reason"]
