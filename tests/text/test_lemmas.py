"""term_stem's lemmas come from simplemma's stream backend first, its decoded dictionary past
_STREAM_LOOKUPS distinct words (issue #30): both give the same lemma for every word."""
from __future__ import annotations

import re

import simplemma

from provrag.text import words


def _vocabulary(sample_data) -> list[str]:
    text = " ".join(p.read_text(errors="ignore") for p in sorted(sample_data.rglob("*")) if p.suffix in (".md", ".txt", ".html"))
    return sorted(set(re.findall(r"[a-z]+", text.lower())))


def test_the_stream_and_the_decoded_dictionary_give_the_same_lemmas(sample_data):
    vocabulary = _vocabulary(sample_data) + ["led", "wrote", "children", "mice", "went", "analyses", "criteria"]
    assert len(vocabulary) > 300
    streamed = [simplemma.lemmatize(w, lang="en", low_memory=True) for w in vocabulary]
    decoded = [simplemma.lemmatize(w, lang="en", low_memory=False) for w in vocabulary]
    assert streamed == decoded
    assert streamed[-7:] == ["lead", "write", "child", "mouse", "go", "analysis", "criterion"]


def test_term_stem_switches_to_the_decoded_dictionary_with_the_same_stems(sample_data, monkeypatch, tmp_path):
    vocabulary = _vocabulary(sample_data)
    words.term_stem.cache_clear()
    words._lemmatizer.cache_clear()
    # each pass with an empty user cache of its own (provrag/usercache.py): simplemma answers every word
    monkeypatch.setenv("PROVRAG_CACHE_DIR", str(tmp_path / "switched"))
    monkeypatch.setattr(words, "_STREAM_LOOKUPS", 50)   # the switch within this vocabulary
    try:
        switched = [words.term_stem(w) for w in vocabulary]
    finally:
        words.term_stem.cache_clear()
        words._lemmatizer.cache_clear()
    monkeypatch.setenv("PROVRAG_CACHE_DIR", str(tmp_path / "streamed"))
    monkeypatch.setattr(words, "_STREAM_LOOKUPS", 10 ** 9)
    streamed_only = [words.term_stem(w) for w in vocabulary]
    words.term_stem.cache_clear()
    words._lemmatizer.cache_clear()
    assert switched == streamed_only
    assert words.term_stem("led") == words.term_stem("leads") == "lead"
