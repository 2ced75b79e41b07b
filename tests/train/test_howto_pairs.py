"""train/howto_pairs.py reads Vim's FAQ (the pinned `vim-doc` package) into "how do I" answer pairs.

The package is fetched once per module with apt-get download (checked by sha256), as `make train`
does; PROVRAG_TRAIN_DEBS may name a folder already holding the .deb file.
"""
from __future__ import annotations

import gzip
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "train"))
import howto_pairs  # noqa: E402
import prepare  # noqa: E402


@pytest.fixture(scope="module")
def vim_doc(debs):
    roots, cache, given = debs("vim-doc")
    return roots["vim-doc"], cache, given


def test_the_faq_reads_into_its_how_do_i_questions_with_their_answers(vim_doc):
    root, _, _ = vim_doc
    entries = howto_pairs.faq_entries(gzip.decompress((root / howto_pairs.FAQ).read_bytes()).decode("utf-8"))
    by_question = {q: (section, blocks) for section, q, blocks in entries}
    assert len(by_question) > 200  # the table of contents' indented copies are not entries
    section, blocks = by_question["How do I change the current directory to the directory of the current file?"]
    assert section == "Editing a file"
    sents = [s for s, _ in howto_pairs.answer_sentences(blocks)]
    # the sentence that ends in a colon is read with the command printed under it
    assert sents[0] == ("You can use the following command to change the current directory to the directory "
                        "of the current file: :cd %:p:h")
    assert all(q.endswith("?") and howto_pairs.HOWTO.search(q) for q in by_question)


def test_each_question_has_its_command_as_the_one_positive(vim_doc):
    _, cache, given = vim_doc
    rows = howto_pairs.howto_pairs(random.Random(1729), Counter(), cache, given, prepare.split_of, prepare.pick_hard)
    by_q: dict[str, list[dict]] = {}
    for r in rows:
        by_q.setdefault(r["qid"], []).append(r)
    assert len(by_q) > 200 and {r["source"] for r in rows} == {"howto"}
    for members in by_q.values():
        assert sum(r["label"] for r in members) == 1
        positive = next(r for r in members if r["label"] == 1)
        assert positive["a"] not in positive["c"]  # read under its section, never under the question
        assert all(r["b"] != positive["b"] for r in members if r["label"] == 0)
        assert len({r["split"] for r in members}) == 1
    load = next(ms for ms in by_q.values() if ms[0]["a"] == "How do I load a file in Vim for editing?")
    positive = next(r for r in load if r["label"] == 1)
    assert positive["b"].startswith('The simplest is to use the ":e" (:edit) command: :e <filename>')
    assert [r["b"] for r in load if r["kind"] == "the answer's preamble"] == [
        "There are several ways to load a file for editing."]
