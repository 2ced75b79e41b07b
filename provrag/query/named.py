"""The documents a specific question names, read first: "How do I letterspace text with
microtype?" is a question for microtype.pdf, not for the 900-page manual of another package that
mentions microtype on many pages.

A document is named when the question says most of its title or of its file name, each word
weighted by its idf over the index's text units (the BM25 idf retrieval already uses). A word
that is rare in the text, such as a package's name, weighs a lot. A word in most of the text, such
as "package" or "debian", weighs next to nothing. So "package" alone does not name "The asymptote
package", while "fontspec" names fontspec.pdf. Global search names documents by an idf over the
names alone (query/themes.py). That suits a broad question about "the R FAQ". A specific question
shares ordinary words with the names, and only the text can tell those words from names.

ask's escalation (query/escalate.py) reads the named documents first and goes on to the whole
index when they do not answer.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import PurePosixPath

MIN_SHARE = 0.5   # more than this share of the name's weight said by the question: a majority of it


@dataclass
class NamedScope:
    """The documents a question names and the text units they hold (ask's `named` attempt)."""
    documents: list[str] = field(default_factory=list)   # their file names, in the index's order (all named alike)
    unit_ids: list[str] = field(default_factory=list)
    # the index terms of the question's words that named them ("listings" → "list"): every
    # sentence of these documents is about them, so within the scope they tell no sentence apart
    terms: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"documents": self.documents, "units": len(self.unit_ids), "terms": self.terms}


def named_scope(con, index_path, question: str) -> NamedScope | None:
    """The documents the question names and their units; None when it names none, or names
    every document the index holds (no narrower scope than the whole index)."""
    from provrag.query.themes import all_documents, name_words
    from provrag.store import terms as lexical

    asked = name_words(question)   # as the names' words are read: no stop word or generic word names one
    documents = [d for d in all_documents(con) if d["status"] == "ok"]
    if not asked or len(documents) < 2:
        return None
    stats = lexical.ensure_terms(con, index_path)
    key = (str(index_path), stats.get("n_units"), stats.get("avgdl"),
           tuple((d["id"], d["title"], d["path"]) for d in documents))
    names, idf, by_word = _WEIGHED.get(key) or _weigh(con, stats, documents, key)
    # only a name holding a word of the question can have a share above 0: the others are not
    # weighed (over 5,544 documents named_scope took 42 ms a question, now 18: bench/query_lookups.py)
    shares = [0.0] * len(names)
    for i in {i for w in asked for i in by_word.get(w, ())}:
        shares[i] = max((share(name, asked, idf) for name in names[i]), default=0.0)
    top = max(shares)
    picked = [i for i, s in enumerate(shares) if s > MIN_SHARE and s == top]
    named = [documents[i] for i in picked]
    if not named or len(named) == len(documents):
        return None
    rows = con.execute("""SELECT id FROM text_units WHERE document_id IN (SELECT unnest(?::VARCHAR[]))
                          ORDER BY human_readable_id""", [[d["id"] for d in named]]).fetchall()
    if not rows:
        return None
    said = sorted({t for i in picked for name in names[i] for w, t in name if t and w in asked})
    return NamedScope([PurePosixPath(d["path"]).name or d["title"] for d in named], [r[0] for r in rows], said)


# the documents' names as weighed words, per index and its content (a server asks many questions
# of one index: stemming every name word at each question cost ~40 ms over 606 documents)
_WEIGHED: dict[tuple, tuple[list, dict[str, float], dict[str, list[int]]]] = {}
_KEPT = 8
_WEIGHING = threading.Lock()   # a server's questions run in threads of their own


def _weigh(con, stats: dict, documents: list[dict], key: tuple) -> tuple[list, dict[str, float], dict[str, list[int]]]:
    """(each document's names as weighed words, their terms' idf, the documents each word names)."""
    from provrag.query.themes import document_names
    from provrag.store import terms as lexical

    names = [[name_terms(words) for words in document_names(d)] for d in documents]
    idf = lexical.idf_of(con, stats, {t for pair in names for name in pair for _, t in name if t})
    by_word: dict[str, list[int]] = {}
    for i, pair in enumerate(names):
        for w in {w for name in pair for w, _ in name}:
            by_word.setdefault(w, []).append(i)
    with _WEIGHING:
        if len(_WEIGHED) >= _KEPT:
            _WEIGHED.pop(next(iter(_WEIGHED)), None)
        _WEIGHED[key] = (names, idf, by_word)
    return names, idf, by_word


def name_terms(words: set[str]) -> list[tuple[str, str | None]]:
    """A name's words, each with its BM25 term (None: a word the tokenizer drops, such as the one
    letter of "R-FAQ", which names the document as surely as the name's rarest word). A word is
    said only as itself: "developed" does not say "developers", though both stem to "develop"."""
    from provrag.text.words import terms_of

    return [(w, (terms_of(w) or [None])[0]) for w in sorted(words)]


def share(name: list[tuple[str, str | None]], asked: set[str], idf: dict[str, float]) -> float:
    """The idf-weighted share of the name the question says (a dropped word weighs as the rarest)."""
    top = max((idf.get(t, 0.0) for _, t in name if t), default=1.0) or 1.0
    weights = [(w, idf.get(t, 0.0) if t else top) for w, t in name]
    total = sum(x for _, x in weights)
    return sum(x for w, x in weights if w in asked) / total if total > 0 else 0.0
