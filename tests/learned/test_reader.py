"""The learned reader at run time: it loads without torch, refuses weights that are not the
measured ones with one line, and reads real documents sensibly (R-FAQ from ../shared/corpora/small;
the booktabs and microtype manuals when a TeX Live download is at hand).

The behaviour tests need the trained weights (provrag/learned/weights/ or $PROVRAG_READER_DIR;
`make train` makes them) and are skipped without them; the refusal tests build their own folder.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from provrag.errors import UsageError
from provrag.learned import reader

needs_weights = pytest.mark.skipif(not reader.available(), reason="no reader weights: run `make train` "
                                   "or set PROVRAG_READER_DIR (e.g. /work/cache/models/reader-latest)")
TEXLIVE = Path(os.environ.get("PROVRAG_TEXLIVE", "/work/cache/corpora/pdf-texlive"))


def page_text(pdf: Path, page: int) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        text = doc[page].get_textpage().get_text_range()
    finally:
        doc.close()
    return " ".join(text.replace("\ufffe", "").split())


@pytest.fixture(scope="module")
def rfaq_basics(small_corpus) -> str:
    """R-FAQ section 2.1 "What is R?" (page 7 of the PDF), as extracted text."""
    return page_text(small_corpus / "R-FAQ.pdf", 6)


def sentences_of(text: str) -> list[str]:
    from provrag.text.sentences import split_sentences

    return [text[a:b] for a, b in split_sentences(text)]


# ---- loading and refusing ---------------------------------------------------------------------

def fake_folder(tmp_path: Path, sha: str | None = None) -> Path:
    (tmp_path / "reader.onnx").write_bytes(b"not an onnx graph")
    manifest = {"name": "x", "version": "0", "weights": "reader.onnx", "sha256": sha or "0" * 64, "bytes": 17,
                "tokenizer_sha256": "0" * 64, "heads": {}, "max_length": {}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_wrong_weights_are_refused_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(reader.ENV_DIR, str(fake_folder(tmp_path)))
    with pytest.raises(UsageError) as e:
        reader.get()
    msg = str(e.value)
    assert "\n" not in msg and "sha256" in msg and "not the measured weights" in msg


def test_missing_weights_are_refused_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(reader.ENV_DIR, str(tmp_path))
    assert not reader.available()
    with pytest.raises(UsageError) as e:
        reader.get()
    assert "\n" not in str(e.value) and "make train" in str(e.value)


def test_nothing_loads_at_import_and_no_torch():
    code = ("import sys; import provrag.learned.reader as r; "
            "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules; "
            "ok = r.available()\n"
            "if ok:\n    x = r.get(); x.answer_probs('What is R?', ['R is a language.'])\n"
            "print(ok, 'torch' in sys.modules, 'onnxruntime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1] == "False"  # never torch
    assert out[2] == out[0]   # onnxruntime only once the reader was used


@needs_weights
def test_info_names_the_heads_and_the_checked_hash():
    info = reader.get().info
    assert set(info["heads"]) == {"answer", "relevance", "claim"}
    assert info["heads"]["claim"] == list(reader.CLAIM_LABELS)
    assert len(info["sha256"]) == 64 and set(info["calibration"]["scale"]) == {"answer", "relevance", "claim"}


# ---- real documents -----------------------------------------------------------------------------

@needs_weights
@pytest.mark.xfail(strict=True, reason="reader 0.1.0's answer head alone, reading the sentence in its paragraph, "
                   "ranks R-FAQ 2.1's definition below other sentences (0.10): ask answers 'What is R?' with it "
                   "because the fitted decision adds word overlap and meaning "
                   "(tests/pipelines/test_ask_reads.py); a retrained head that ranks it first turns this XPASS "
                   "into a failure to remove the mark")
def test_what_is_r_is_answered_by_its_definition(rfaq_basics):
    sents = sentences_of(rfaq_basics)
    gold = next(i for i, s in enumerate(sents) if s.startswith("R is a system for statistical computation"))
    probs = reader.get().answer_probs("What is R?", sents, [rfaq_basics] * len(sents))
    assert probs.shape == (len(sents),)
    assert int(np.argmax(probs)) == gold, [(round(float(p), 3), s[:60]) for p, s in zip(probs, sents)]
    assert probs[gold] >= 0.5


@needs_weights
def test_a_sentence_on_the_topic_without_the_fact_does_not_answer(rfaq_basics):
    """Near miss: every word of the question is on the page, the asked fact is not."""
    sents = sentences_of(rfaq_basics)
    author = next(s for s in sents if s.startswith("R was initially written by Ross Ihaka"))
    r = reader.get()
    asked = r.answer_probs("Who initially wrote R?", [author])[0]
    not_there = r.answer_probs("In which year was R first released to the public?", [author])[0]
    assert asked >= 0.5 > not_there


@needs_weights
@pytest.mark.xfail(strict=True, reason="reader 0.1.0's claim head calls a one-name swap (Toronto for Auckland) "
                   "supported: measured, and why [verify] judge stays 'features' (its aligned-span conflict rule)")
def test_swapped_word_claims_from_the_r_faq(rfaq_basics):
    evidence = next(s for s in sentences_of(rfaq_basics) if s.startswith("R was initially written by"))
    probs = reader.get().claim_probs("R was initially written by Ross Ihaka and Robert Gentleman at the University of Auckland.",
                                     [evidence])
    swapped = reader.get().claim_probs("R was initially written by Ross Ihaka and Robert Gentleman at the University of Toronto.",
                                       [evidence])
    assert probs.shape == (1, 3) and np.allclose(probs.sum(1), 1.0)
    assert probs[0].argmax() == 0 and swapped[0].argmax() != 0


@needs_weights
def test_not_stated_is_not_contradicted(rfaq_basics):
    """Evidence that merely does not mention the claim's fact: unsupported, not contradicted."""
    evidence = next(s for s in sentences_of(rfaq_basics) if s.startswith("R is a system for statistical computation"))
    p = reader.get().claim_probs("R was released under the MIT licence in 2001.", [evidence])[0]
    assert p.argmax() == 2


@needs_weights
def test_passages_rank_the_answering_one_first(rfaq_basics, small_corpus):
    other = page_text(small_corpus / "R-FAQ.pdf", 20)
    scores = reader.get().passage_scores("What is R?", [other[:1500], rfaq_basics[:1500]])
    assert scores[1] > scores[0]


SWAPPED_WORD_MANUALS = [
    # (manual, page, words of the evidence sentence, true claim, the same with one word swapped)
    pytest.param("booktabs", 3, "analogue of", "In booktabs, \\cmidrule is the analogue of LaTeX's \\cline command.",
                 "In booktabs, \\cmidrule is the analogue of LaTeX's \\hline command.",
                 marks=pytest.mark.xfail(strict=True, reason="reader 0.1.0's claim head misses a swapped command "
                                         "name; verify's default judge is 'features' for this reason")),
    ("microtype", 0, "character protrusion requires", "Character protrusion requires pdfTeX version 0.14f or later.",
     "Character protrusion requires pdfTeX version 1.20 or later."),
]


@needs_weights
@pytest.mark.parametrize("manual,page,marker,true_claim,swapped_claim", SWAPPED_WORD_MANUALS)
def test_a_swapped_word_from_a_texlive_manual_is_not_supported(manual, page, marker, true_claim, swapped_claim):
    pdf = TEXLIVE / f"{manual}.pdf"
    if not pdf.is_file():
        pytest.skip(f"no TeX Live manuals in {TEXLIVE} (../shared/corpora/fetch-debian-docs.sh DIR pdf-texlive)")
    evidence = next(s for s in sentences_of(page_text(pdf, page)) if marker in s)
    r = reader.get()
    assert r.claim_probs(true_claim, [evidence])[0].argmax() == 0
    assert r.claim_probs(swapped_claim, [evidence])[0].argmax() != 0


@needs_weights
def test_a_sentence_scores_the_same_whatever_else_is_read_with_it(rfaq_basics):
    """The int8 weights quantise activations per run (onnxruntime's dynamic quantisation): a
    sentence read in one batch with others moved with its batch-mates and could cross the answer
    threshold because of what else a question read. Each pair runs alone: its score is the pair's."""
    sents = sentences_of(rfaq_basics)
    r = reader.get()
    together = r.answer_probs("Who initially wrote R?", sents, [rfaq_basics] * len(sents))
    alone = np.array([r.answer_probs("Who initially wrote R?", [s], [rfaq_basics])[0] for s in sents])
    assert len(sents) > 5 and np.array_equal(together, alone), np.abs(together - alone).max()
    claims = r.claim_probs("R was initially written by Ross Ihaka and Robert Gentleman.", sents[:6])
    assert np.array_equal(claims[2], r.claim_probs("R was initially written by Ross Ihaka and Robert Gentleman.",
                                                   [sents[2]])[0])


def test_a_printed_minus_is_read_as_the_hyphen_a_question_types():
    """dot(1)'s option list as its Debian PDF prints it (graphviz-doc; eval/options' dot.1.pdf, p. 7):
    groff prints an option's "-" as U+2212, which BERT's pre-tokenizer does not split from the word,
    so "−Klayout" was one word cut into pieces no question shares. Read as "-", it is the pieces of
    what a user types ("-K …"), and the reader reads each pair as it would with ASCII hyphens."""
    from provrag.embeddings.minilm import model_dir
    from provrag.learned.encode import PairEncoder
    from provrag.text.options import plain_dashes

    encoder = PairEncoder(model_dir() / "tokenizer.json")
    printed = "\u2212Klayout override the default layout engine implied by the command name."
    typed = "-Klayout override the default layout engine implied by the command name."
    assert plain_dashes(printed) == typed and plain_dashes("\u2010x \u2011y") == "-x -y"
    assert encoder.pieces([printed]) == encoder.pieces([typed])
    assert encoder.tokenizer.encode(typed, add_special_tokens=False).tokens[:2] == ["-", "k"]
