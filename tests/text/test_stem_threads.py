"""Stems made by several threads at once (a server answers two asks at a time) are the stems one
thread makes: snowballstemmer's stemmer keeps the word it works on in its own fields, and one
stemmer shared by two requests raised "string index out of range" under `make fuzz`."""
from __future__ import annotations

import threading

import snowballstemmer

from provrag.text.words import WORD, stem


def test_threads_stemming_at_once_get_the_stems_of_one_thread(shared):
    text = next((shared / "fixtures" / "graphrag-dulce" / "source").glob("Operation*.md")).read_text()
    words = sorted({w.lower() for w in WORD.findall(text) if w.isalpha()})
    # distinct words of several lengths and endings, so that no thread finds a cached stem
    words = [w + end for w in words for end in ("", "ing", "ations", "ness", "fully")]
    alone = snowballstemmer.stemmer("english")
    expected = [alone.stemWord(w) for w in words]
    results, errors = {}, []

    def work(k: int) -> None:
        try:
            results[k] = [stem(w) for w in (words if k % 2 == 0 else words[::-1])]
        except Exception as e:   # the shared stemmer's failure, reported below
            errors.append(repr(e))

    for _ in range(3):
        stem.cache_clear()
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for k, got in results.items():
            assert got == (expected if k % 2 == 0 else expected[::-1])
