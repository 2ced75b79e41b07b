"""Near misses: which read candidates may answer.

The learned reader reads technical sentences low whether they answer or not, and the answer's
fitted combination then rests on word overlap (bench/results/named-scope-passage-2026-11-27.md),
so a sentence that shares every word of "What is the largest value … accepts?" and states no
maximum reads as answering. Two rules decide what reading.py may choose from (names_nowhere
before any sentence is read, stating_asked_fact after):

- a question that names something the index holds nowhere ("How do I sign my uploads with a
  YubiKey?" over Debian's manuals) is answered by no sentence: none speaks of it;
- for the three kinds of fact issue 26 names — a limit, a version, a cost (provrag/text/asked.py)
  — a candidate must have the fact's form and stand in a passage that names what the question
  is about.
"""
from __future__ import annotations

import re
import unicodedata

from provrag.text.asked import asked_facts, states_all
from provrag.text.words import terms_of


def names_nowhere(question: str, unseen: list[str] | None, records: list[dict]) -> list[str]:
    """The question's names (capitalised words after its first) whose term the index holds
    nowhere and that no retrieved passage spells, accents aside, in its text or its document's
    title or file name. The second look is for a name
    typed without its accents: the index holds "schrödinger", the question's "Schrodinger" is
    the term "schroding", no term of the index, yet the passages retrieved for it name him."""
    names = unseen_names(question, unseen)
    if not names:
        return []
    # a passage's document title and file name count: "sotu-1863-lincoln.txt" never says "Lincoln"
    text = _folded(" ".join(" ".join((r.get("text") or "", str(r.get("document") or ""),
                                      str(r.get("path") or "").replace("\\", "/").rsplit("/", 1)[-1]))
                            for r in records))
    return [n for n in names if not re.search(r"(?<!\w)" + re.escape(_folded(n)) + r"(?!\w)", text)]


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _folded(text: str) -> str:
    """Lowercased, accents dropped (NFKD, then no combining mark). Only the text's non-ASCII
    characters are tested for being marks, and those found are cut by one regex: testing every
    character of a question's passages (~56,000) took ~30 ms of a served ask (issue 30)."""
    if text.isascii():
        return text.lower()
    nfkd = unicodedata.normalize("NFKD", text)
    marks = [c for c in set(_NON_ASCII.findall(nfkd)) if unicodedata.combining(c)]
    return (re.sub("[" + "".join(map(re.escape, marks)) + "]", "", nfkd) if marks else nfkd).lower()


def stating_asked_fact(question: str, cands: list[dict], records: list[dict],
                       idf: dict[str, float] | None) -> tuple[list[dict], tuple[str, ...]]:
    """The candidates (in their order) that may answer: for a question asking for a limit, a
    version or a cost (text/asked.py), only those with that fact's form, read in a passage that
    names what the question is most specifically about (its term the index holds most rarely).
    A near miss shares the question's words and reads as answering by word overlap, but states no
    maximum, no version, no quantity — or states one of something else: "Version 1.1.1 added
    support for Asturian, Lithuanian, and Urdu" for the version that added Swahili. All
    candidates for any other question. Also the kinds asked for."""
    kinds = asked_facts(question)
    if not kinds:
        return cands, kinds
    # a word the index lacks ("roughly", a British spelling) says nothing of the subject (a name
    # it lacks is names_nowhere's): the rarest term the index holds is required
    held = {t: w for t, w in (idf or {}).items() if w and w > 0}
    rarest = max(held, key=lambda t: (held[t], t)) if held else None
    named: dict[int, bool] = {}

    def names_it(c: dict) -> bool:
        if rarest is None:
            return True
        ri = c["record"]
        if ri not in named:
            text = (records[ri].get("text") or "") if 0 <= ri < len(records) else ""
            named[ri] = rarest in set(terms_of(text))
        return named[ri] or rarest in set(terms_of(c["sentence"] + " " + (c.get("antecedent") or "")))

    return [c for c in cands if states_all(kinds, c["sentence"], question) and names_it(c)], kinds


def unseen_names(question: str, unseen: list[str] | None) -> list[str]:
    """The question's names (capitalised words after its first) whose term the index holds nowhere."""
    if not unseen:
        return []
    gone = set(unseen)
    words = re.findall(r"[^\W_][\w'’-]*", question or "")[1:]
    return [w for w in words if w[:1].isupper() and gone & set(terms_of(w))]
