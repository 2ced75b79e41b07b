"""What a question asks for, read from its wording alone (no index, no model).

Two readers need this before any text is ranked: search chooses GraphRAG's global method for
a question about the whole collection (`is_broad`), and the offline answerer prefers the
sentence that holds the kind of thing asked for (`answer_type`: a date for "when", a number
for "how many"). Both are rules over the question's words (and `is_procedural` tells the answerer that a "how do I"
question wants the steps of a section), so they live with the other text
rules rather than inside an engine or a search method.
"""
from __future__ import annotations

import re

_BROAD = re.compile(
    r"\b(main|key|major|overall|common|recurring|central|general|top)\s+(themes?|topics?|ideas?|points?|issues?|"
    r"findings?|takeaways?|messages?|trends?|subjects?|concerns?)\b"
    r"|\b(summari[sz]e|summary|overview|gist|in general|as a whole|across (all|the) (documents?|texts?|files?|sources?))\b"
    r"|\bwhat (is|are) (this|these|the) (documents?|corpus|collection|texts?|books?|files?|reports?|dataset)\b.*\babout\b"
    r"|\bwhat (is|are) .{1,60}\babout\??$"
    # "What does the Debian Policy Manual cover?", "What topics does the FAQ answer?"
    r"|^what (does|do) .{1,80}\b(cover|explain|describe|discuss|contain|document|deal with)\??$"
    r"|^what (topics|subjects|themes|areas) (does|do|are|is)\b", re.I)

_DATE = re.compile(r"^(when|what (year|month|day|date|time|century|decade|period)|in (what|which) (year|month|century|decade))\b")
_DATE_ANYWHERE = re.compile(r"\b(what|which) (year|month|date|century|decade)\b")
_MEASURE = re.compile(r"^how (long|old|far|large|big|tall|high|wide|deep|heavy)\b")
_NUMBER = re.compile(r"^how (many|much|often)\b")
_NUMBER_ANYWHERE = re.compile(r"\b(how many|how much|what (percentage|percent|number|amount|fraction|proportion))\b")
_NAME = re.compile(r"^(who|whom|whose)\b")
_NAME_ANYWHERE = re.compile(r"\b(what|which) (person|man|woman|company|organi[sz]ation|team|group)\b")
_PLACE = re.compile(r"^where\b")
_PLACE_ANYWHERE = re.compile(r"\b(what|which) (city|country|place|state|region|river|location)\b")


_PROCEDURE = re.compile(
    r"^(how (do|can|should|would|must|may) (i|you|we|one|a user|users|a maintainer|maintainers)\b|how to\b"
    r"|what (are|is) the (steps?|procedure|process|way) (to|for)\b|what steps\b)", re.I)


def is_procedural(question: str) -> bool:
    """A "how do I …" question: its answer is the steps of one section, not a single sentence."""
    return bool(_PROCEDURE.match((question or "").strip()))


def is_broad(question: str) -> bool:
    """A question about the whole collection (themes, summary, overview): GraphRAG's global case."""
    return bool(_BROAD.search(question or ""))


# The wording of a broad question, which names no subject: its broad words ("main themes",
# "summarise", "overview"), the words for a document or a collection, and the verbs that ask.
_BROAD_WORDING = frozenset("""main key major overall central general common recurring top topic topics theme themes
idea ideas point points issue issues finding findings takeaway takeaways message messages trend trends subject subjects
concern concerns summary summarise summarize summarised summarized summarising summarizing overview gist whole
document documents doc docs file files text texts collection corpus folder dataset source sources pdf pdfs book books
report reports paper papers article articles manual manuals guide guides chapter chapters page pages content contents
documentation docs story stories novel novels essay essays speech speeches letter letters work works material materials writing writings
cover covers covered covering discuss discusses discussed describe describes described say says said tell tells give
does do did explain explains explained answer answers contain contains deal deals address addresses area areas
gives list lists briefly brief short mostly generally overall""".split())
_QUESTION_WORD = re.compile(r"[^\W_]{2,}", re.UNICODE)  # as document names are read (query/themes.py)


def broad_subject(question: str) -> list[str]:
    """The words of a broad question left once its broad wording and stop words are gone: the
    subject it asks about ("Summarise what the President said about foreign relations" →
    president, foreign, relations), or the names of the documents it asks about ("What are the
    main topics covered in the R FAQ?" → faq). Empty: the question is about the whole collection.
    Search tells a document's name from a subject with the index (query/search.py)."""
    from provrag.text.words import ENGLISH_STOP_WORDS

    words = [w.lower() for w in _QUESTION_WORD.findall(question or "")]
    return [w for w in words if w not in ENGLISH_STOP_WORDS and w not in _BROAD_WORDING
            and not (w.endswith("s") and w[:-1] in _BROAD_WORDING)]


def answer_type(question: str) -> str | None:
    """"date", "measure" (a length, age, size: a number with its unit), "number", "name" or "place"
    when the question's wording asks for one, else None
    (a "what is" or "why" question can be answered by any kind of sentence)."""
    q = question.lower().strip()
    if _DATE.match(q) or _DATE_ANYWHERE.search(q):
        return "date"
    if _MEASURE.match(q):
        return "measure"
    if _NUMBER.match(q) or _NUMBER_ANYWHERE.search(q):
        return "number"
    if _NAME.match(q) or _NAME_ANYWHERE.search(q):
        return "name"
    if _PLACE.match(q) or _PLACE_ANYWHERE.search(q):
        return "place"
    return None
