"""Fixtures of the audit tests: real indexes with a real answer and its verification, built
once per session because indexing ../shared/corpora/small takes a while."""
from __future__ import annotations

import shutil

import pytest

from tests.audit.runs import INJECT, QUESTION, ask_and_verify, index_folder


@pytest.fixture(scope="session")
def small(tmp_path_factory, small_corpus):
    """(index of ../shared/corpora/small, ask result, [ask trace, verify trace], verify result)."""
    idx = index_folder(small_corpus, tmp_path_factory.mktemp("report") / "idx")
    asked, trace, verified = ask_and_verify(idx, QUESTION)
    return idx, asked, trace, verified


@pytest.fixture(scope="session")
def injected(tmp_path_factory, small_corpus):
    """A docs folder with a markup-injecting Markdown file beside a real PDF, indexed:
    (docs folder, index, ask result, traces, verify result)."""
    root = tmp_path_factory.mktemp("inject")
    docs = root / "docs"
    docs.mkdir()
    (docs / "evil.md").write_text(INJECT, encoding="utf-8")
    shutil.copy(small_corpus / "asymptote-CAD.pdf", docs / "asymptote-CAD.pdf")
    idx = index_folder(docs, root / "idx")
    asked, trace, verified = ask_and_verify(idx, "Where are the fragile manuscripts stored and what did the committee approve?",
                                            method="basic")
    return docs, idx, asked, trace, verified
