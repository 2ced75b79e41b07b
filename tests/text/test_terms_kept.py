"""terms_of keeps the terms of short texts (a sentence, a paragraph) per process: ask reads the
same sentences in each attempt, a server in many questions (issue 30). What it keeps must be what
it computes, a caller's list must be its own, and a unit's whole text is not kept."""
from __future__ import annotations

from provrag.text import words


def sentences(small_corpus) -> list[str]:
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    return [s.strip() for s in text.split(".") if len(s.strip()) > 20][:200]


def test_kept_terms_are_the_terms_computed(small_corpus):
    texts = sentences(small_corpus)
    words._kept_terms.cache_clear()
    first = [words.terms_of(t) for t in texts]
    again = [words.terms_of(t) for t in texts]
    assert first == again == [words._terms(t) for t in texts]
    assert words._kept_terms.cache_info().hits >= len(texts) - len(set(texts))


def test_a_callers_list_is_its_own(small_corpus):
    text = sentences(small_corpus)[0]
    got = words.terms_of(text)
    got.append("changed")
    assert "changed" not in words.terms_of(text)


def test_a_long_text_is_computed_and_not_kept(small_corpus):
    long = " ".join(sentences(small_corpus))
    assert len(long) > words._KEPT_TEXT
    words._kept_terms.cache_clear()
    assert words.terms_of(long) == words._terms(long)
    assert words._kept_terms.cache_info().currsize == 0
