"""train/docs_pairs.py reads the real Debian documentation packages into answer pairs.

The packages are fetched once per session with apt-get download (the pinned versions, checked by
sha256), as `make train` does; PROVRAG_TRAIN_DEBS may name a folder already holding the .deb files.
"""
from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "train"))
import docs_pairs  # noqa: E402
import prepare  # noqa: E402


@pytest.fixture(scope="module")
def unpacked(debs):
    return debs("python3.11-doc", "postgresql-doc-15")


def test_the_faq_questions_are_answered_by_their_first_sentence(unpacked):
    roots, _, _ = unpacked
    faq = [(page, q, first) for page, _, q, first, _ in docs_pairs.python_faq(roots["python3.11-doc"])]
    assert len(faq) >= 150
    assert ("python-faq/general", "What is Python?",
            "Python is an interpreted, interactive, object-oriented programming language.") in faq
    assert all(q.endswith("?") and len(first.split()) >= 3 for _, q, first in faq)


def test_reference_entries_and_glossary_terms_become_questions(unpacked):
    roots, _, _ = unpacked
    rng = random.Random(0)
    pg = {first for _, _, _, first, _ in docs_pairs.postgres_reference(roots["postgresql-doc-15"], rng)}
    assert "ALTER TABLE changes the definition of an existing table." in pg
    glossary = {q: (heading, first, rest) for _, heading, q, first, rest in docs_pairs.python_glossary(roots["python3.11-doc"])}
    heading, first, rest = glossary["What is a coroutine?"]
    assert heading == "coroutine"
    assert first.startswith("Coroutines are a more generalized form of subroutines")
    assert first not in rest
    library = {q: (heading, first) for _, heading, q, first, _ in docs_pairs.python_reference(roots["python3.11-doc"], rng)}
    join = [(heading, first) for q, (heading, first) in library.items() if "os.path.join()" in q]
    assert join and join[0][0] == "os.path.join()" and join[0][1].startswith("Join one or more path segments intelligently")


def test_each_question_has_one_positive_and_near_misses_from_its_own_page(unpacked):
    _, cache, given = unpacked
    counts: Counter = Counter()
    rows = docs_pairs.doc_pairs(random.Random(1729), counts, cache, given, prepare.split_of, prepare.pick_hard)
    by_q: dict[str, list[dict]] = {}
    for r in rows:
        by_q.setdefault(r["qid"], []).append(r)
    assert len(by_q) > 2500 and {r["source"] for r in rows} == {"docs"}
    for members in by_q.values():
        assert sum(r["label"] for r in members) == 1
        positive = next(r for r in members if r["label"] == 1)
        assert all(r["b"] != positive["b"] for r in members if r["label"] == 0)
        if positive["kind"] == "python-faq opener":  # read under its own heading; a near miss under another's
            assert positive["a"] in positive["c"]
            assert all(positive["a"] not in r["c"] for r in members if r["kind"] == "another entry's opener")
        assert len({r["split"] for r in members}) == 1 and len({r["group"] for r in members}) == 1
    # a page's questions stay on one side of the train / calib / test split
    splits_per_group: dict[str, set[str]] = {}
    for r in rows:
        splits_per_group.setdefault(r["group"], set()).add(r["split"])
    assert all(len(s) == 1 for s in splits_per_group.values())
    assert counts["docs python-faq questions train"] > 100
