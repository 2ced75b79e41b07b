"""What the reader's reads cost, never what they decide: onnxruntime's threads do not spin, and
the logits are the same bit for bit whatever the session's threading (timings: bench/question_speed.py).

Why it matters: the reader's int8 graph quantises each batch's activations with the batch's own
range, so a sentence's logit depends on the batch it is read in (measured up to 0.19 on manuals
sentences); a cost change may change how threads wait, never which rows make up a batch.
"""
from __future__ import annotations

import numpy as np
import pytest

from provrag.learned import reader
from provrag.learned.reader import Reader

needs_weights = pytest.mark.skipif(not reader.available(), reason="no reader weights: run `make train` "
                                   "or set PROVRAG_READER_DIR (e.g. /work/cache/models/reader-latest)")


@pytest.fixture(scope="module")
def rfaq_sentences(small_corpus) -> list[str]:
    """The sentences of R-FAQ's page 7 ("What is R?"), as extracted."""
    import pypdfium2 as pdfium

    from provrag.text.sentences import split_sentences

    doc = pdfium.PdfDocument(str(small_corpus / "R-FAQ.pdf"))
    try:
        text = " ".join(doc[6].get_textpage().get_text_range().split())
    finally:
        doc.close()
    return [text[a:b] for a, b in split_sentences(text)]


@needs_weights
def test_the_sessions_threads_do_not_spin_and_a_run_has_one():
    """An idle intra-op thread that busy-waits takes a shared core from the thread with work; a
    one-pair run, side by side with the others, is too small for two threads to share."""
    opts = reader.get().session.get_session_options()
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.inter_op_num_threads == 1 and opts.intra_op_num_threads == 1


@needs_weights
def test_logits_do_not_depend_on_how_threads_wait_or_how_many(rfaq_sentences, monkeypatch):
    import onnxruntime as ort

    r = reader.get()
    question = "Who initially wrote R?"
    ours = r.answer_probs(question, rfaq_sentences)
    spinning = ort.SessionOptions()
    spinning.intra_op_num_threads = 2
    monkeypatch.setattr(r, "session", ort.InferenceSession(str(reader.folder() / r.manifest["weights"]), spinning,
                                                          providers=["CPUExecutionProvider"]))
    assert np.array_equal(ours, r.answer_probs(question, rfaq_sentences))
    monkeypatch.setenv("PROVRAG_READER_THREADS", "1")
    one_thread = Reader(reader.folder().resolve())
    assert np.array_equal(ours, one_thread.answer_probs(question, rfaq_sentences))
