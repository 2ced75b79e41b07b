"""The judge reads an evidence sentence's words once, whatever the number of claims judged
against it: the swap search's tokens and the turn search's words are the sentence's own, so a
second claim over the same unit reads only itself. The features are the same as a fresh read's
(bench/verify_speed.py --same compares every verdict of eval/manuals, small and texlive)."""
from __future__ import annotations

import pytest

from provrag.engines.offline.judge import features as feats
from provrag.engines.offline.judge import opposites, slots
from provrag.engines.offline.judge.analysis import sentences
from provrag.store.reader import open_index

CLAIMS = ["Dr. Imogen Vale leads the Halcyon commissioning team.",
          "The Halcyon plant was commissioned by Dr. Imogen Vale in 2019."]


def forget_sentences() -> None:
    """Empty the judge's caches of sentences read (where it has them)."""
    for cached in (getattr(slots, "sentence_tokens", None), opposites._words):
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


@pytest.fixture
def longest_unit(sample_index) -> str:
    with open_index(sample_index) as reader:
        texts = [r[0] for r in reader.con.execute("SELECT text FROM text_units").fetchall()]
    return max(texts, key=lambda t: len(sentences(t)))


def test_a_sentences_words_are_read_once_across_claims(longest_unit, monkeypatch):
    read = {"tokens": 0, "words": 0}
    real_tokens, real_pattern = slots.tokens, opposites._WORD

    class CountingPattern:
        def finditer(self, text):
            read["words"] += 1
            return real_pattern.finditer(text)

    def counting_tokens(t, raw):
        read["tokens"] += 1
        return real_tokens(t, raw)

    monkeypatch.setattr(slots, "tokens", counting_tokens)
    monkeypatch.setattr(opposites, "_WORD", CountingPattern())
    forget_sentences()
    n_sentences = len(sentences(longest_unit))
    assert n_sentences > 3

    first = feats.features(CLAIMS[0], longest_unit, 2)
    after_first = dict(read)
    assert after_first["tokens"] > n_sentences // 2       # the first claim reads the sentences
    second = feats.features(CLAIMS[1], longest_unit, 2)
    # the second reads only itself: one tokens() of the claim, at most one word list of it
    assert read["tokens"] - after_first["tokens"] <= 1
    assert read["words"] - after_first["words"] <= 1
    assert first["span"] and second["span"]


def test_features_after_the_cache_are_those_of_a_fresh_read(longest_unit):
    forget_sentences()
    fresh = [feats.features(c, longest_unit, 2) for c in CLAIMS]
    again = [feats.features(c, longest_unit, 2) for c in reversed(CLAIMS)][::-1]
    assert again == fresh
