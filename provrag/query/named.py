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

import bisect
import itertools
import threading
from dataclasses import dataclass, field
from pathlib import PurePosixPath

MIN_SHARE = 0.5   # more than this share of the name's weight said by the question: a majority of it
# the units that say a naming term are "about the named subject" only while they are a minority of
# the index: a term in more of it is a word of the whole collection, no subject of its own
NAMING_SHARE = 0.25


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


def naming_units(con, index_path, scope: NamedScope) -> list[str] | None:
    """The units that speak of what the question names: the named documents' and every other unit
    holding one of the terms that named them. None when those terms name no narrower part of the
    index (no term, or units holding them beyond NAMING_SHARE of the index).

    Why: when the named documents do not answer ("Who wrote the booktabs package?": booktabs.pdf
    names its author only as "Simon Fear" on its title page), the wider routes read the whole index,
    where a sentence about another subject that shares the question's other words reads as
    answering ("Carsten Heinz wrote the guides, coded the listings package …", at 0.86). What
    the question asks is about the subject it names, so outside its own documents only a passage
    that names it can answer ("It uses Simon Fear's booktabs package …", ctable's manual)."""
    from provrag.store import terms as lexical

    if not scope.terms:
        return None
    stats = lexical.ensure_terms(con, index_path)
    total = int(stats.get("n_units") or 0)
    cap = int(total * NAMING_SHARE)
    holding = lexical.bm25(con, stats, {t: 1 for t in scope.terms}, limit=cap + 1)
    if not holding or len(holding) > cap:
        return None
    inside = set(scope.unit_ids)
    return scope.unit_ids + sorted(u for u, _ in holding if u not in inside)


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
    from provrag.store.facts import remembered

    # the book of this connection's index version, found once per connection (the key names every document)
    book = remembered(con, ("document names", str(index_path)), lambda: names_of(index_path, stats, documents))
    # only a name holding a word of the question can have a share above 0: only those are weighed
    weighed = book.holding(con, stats, asked)
    shares = {i: max((share(name, asked, book.idf) for name in names), default=0.0) for i, names in weighed.items()}
    top = max(shares.values(), default=0.0)
    picked = sorted(i for i, s in shares.items() if s > MIN_SHARE and s == top)
    named = [documents[i] for i in picked]
    if not named or len(named) == len(documents):
        return None
    rows = con.execute("""SELECT id FROM text_units WHERE document_id IN (SELECT unnest(?::VARCHAR[]))
                          ORDER BY human_readable_id""", [[d["id"] for d in named]]).fetchall()
    if not rows:
        return None
    said = sorted({t for i in picked for name in weighed[i] for w, t in name if t and w in asked})
    return NamedScope([PurePosixPath(d["path"]).name or d["title"] for d in named], [r[0] for r in rows], said)


class DocumentNames:
    """The names of one index version's documents, weighed as questions come to need them.

    Why lazily: weighing every name (its words, their BM25 terms and idf) took ~150 ms of a cold
    ask over 5,544 documents, linear in the documents, though a question's words occur in few of
    them. A name holding a word of the question holds it, case folded, as a substring (case
    folding is context-free and folds a lower-cased word as it folds the word), so a substring
    test over the folded names finds every document that can be named, and a few more that the
    exact word test then drops. A server keeps the book between questions (names_of)."""

    def __init__(self, documents: list[dict]):
        from provrag.query.themes import name_texts

        self.documents = documents
        folded = ["\n".join(name_texts(d)).casefold() for d in documents]
        # all names in one text, each document's after a NUL (a word never holds one), searched
        # with str.find: a Python loop over 5,544 names took ~9 ms a question
        self.text = "".join("\0" + f for f in folded)
        self.starts = list(itertools.accumulate((1 + len(f) for f in folded[:-1]), initial=0))
        self.names: dict[int, list] = {}         # document → its two names as (word, term) lists
        self.idf: dict[str, float] = {}          # the BM25 idf of every term of a weighed name
        self.lock = threading.Lock()

    def holding(self, con, stats: dict, asked: set[str]) -> dict[int, list]:
        """{document: its weighed names} for each document whose title or file name holds one of
        the `asked` words as a word of its own."""
        from provrag.query.themes import document_names
        from provrag.store import terms as lexical

        maybe = sorted({i for w in asked for i in self.finding(w.casefold())})
        with self.lock:
            todo = [i for i in maybe if i not in self.names]
        fresh = {i: [name_terms(words) for words in document_names(self.documents[i])] for i in todo}
        terms = {t for names in fresh.values() for name in names for _, t in name if t}
        with self.lock:
            idf = lexical.idf_of(con, stats, terms - self.idf.keys()) if terms - self.idf.keys() else {}
            self.idf.update(idf)
            self.names.update(fresh)
            found = {i: self.names[i] for i in maybe}
        return {i: names for i, names in found.items() if any(w in asked for name in names for w, _ in name)}

    def finding(self, word: str):
        """The documents whose folded names hold `word` (case folded) as a substring, each once."""
        at = self.text.find(word)
        while at != -1:
            doc = bisect.bisect_right(self.starts, at) - 1
            yield doc
            if doc + 1 >= len(self.starts):
                return
            at = self.text.find(word, self.starts[doc + 1])


# each index version's names (a server asks many questions of one index)
_BOOKS: dict[tuple, DocumentNames] = {}
_KEPT = 8
_BOOKS_LOCK = threading.Lock()   # a server's questions run in threads of their own


def names_of(index_path, stats: dict, documents: list[dict]) -> DocumentNames:
    """The names book of this index and its content (kept per process, the last `_KEPT`)."""
    key = (str(index_path), stats.get("n_units"), stats.get("avgdl"),
           tuple((d["id"], d["title"], d["path"]) for d in documents))
    with _BOOKS_LOCK:
        book = _BOOKS.get(key)
        if book is None:
            if len(_BOOKS) >= _KEPT:
                _BOOKS.pop(next(iter(_BOOKS)), None)
            book = _BOOKS[key] = DocumentNames(documents)
    return book


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
