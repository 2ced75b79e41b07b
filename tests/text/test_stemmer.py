"""provrag stems with Snowball's C implementation (PyStemmer), which snowballstemmer hands its
stemmer() over to when it is installed, and the stems are the pure-Python stemmer's, word for
word: an index built where only the pure-Python one exists matches a question stemmed here."""
from __future__ import annotations

import Stemmer
import snowballstemmer
from snowballstemmer.english_stemmer import EnglishStemmer

from provrag.engines.offline.judge.wordnet import antonym_pairs
from provrag.text.words import WORD, stem


def test_the_stemmer_in_use_is_snowballs_c_implementation():
    assert snowballstemmer.stemmer is Stemmer.Stemmer      # provrag.text.words asks snowballstemmer.stemmer()
    assert isinstance(snowballstemmer.stemmer("english"), Stemmer.Stemmer)
    stem.cache_clear()
    assert [stem(w) for w in ("generously", "commissioning", "led")] == ["generous", "commiss", "led"]


def test_c_and_python_stems_agree_on_real_words(sample_data, shared):
    words = {w for pair in antonym_pairs() for w in pair}               # what a cold answer check stems
    texts = [p.read_text(errors="replace") for p in sample_data.rglob("*") if p.suffix in (".md", ".txt", ".html")]
    texts += [p.read_text(errors="replace") for p in (shared / "fixtures" / "graphrag-dulce").rglob("*.md")]
    for text in texts:
        words.update(w.lower() for w in WORD.findall(text))
    words.update(["naïve", "café", "coöperate", "résumé", "straße", "ﬁnally", "o'neill", "can't", "yeses", "dying",
                  "news", "skis", "generously", "communism", "arsenal", "1st", "αβγ", "пример"])
    assert len(words) > 5_000
    c, python = Stemmer.Stemmer("english"), EnglishStemmer()
    differ = [(w, c.stemWord(w), python.stemWord(w)) for w in sorted(words) if c.stemWord(w) != python.stemWord(w)]
    assert differ == []
