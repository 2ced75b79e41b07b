"""The literal channel: what retrieval's term table cannot see, read from the units' own text.

BM25 reads a question's terms; the term table drops one-letter words ("What is R?"), stop words
("a here document") and keeps no phrases (an FAQ's "2.1 What is R?"). A question that leaves BM25
fewer than LITERAL_BELOW terms is also read here for its one-letter names, for itself as a
phrase, and for "What is X?" for the sentence that defines X and for X as a phrase. Its scores
join BM25's part of the fusion (query/retrieve.retrieve_units, the trace's `literal` channel).
"""
from __future__ import annotations

import math
import re

# a one-letter name ("R", "C", "X"): the term table drops one-letter words, so BM25 cannot see it
_LETTER_NAME = re.compile(r"(?<![\w.])([B-HJ-Z])(?![\w'’-])")
LITERAL_BELOW = 2   # a question with fewer BM25 terms than this is also read for its own words
K1 = 1.2
# "What is zsh?": over a manual whose every page says "zsh", the one word cannot find the sentence
# that defines it; the subject followed by a copula and an article can ("Zsh is a UNIX command
# interpreter …"), as definition questions are answered in question answering since TREC
_DEFINED = re.compile(r"^\s*what\s+(?:is|are)\s+(?:an?\s+|the\s+)?([^?]+?)[\s?]*$", re.I)
DEFINED_WORDS = 3   # a longer subject ("the default thickness of …") asks for a fact, not a definition


def definition_subject(question: str) -> str | None:
    """X of a "What is X?" question (lower case, whitespace collapsed), None for any other."""
    return _subject(_DEFINED, question)


def _subject(form: re.Pattern, question: str) -> str | None:
    """The subject a question of this form asks about, when it is at most DEFINED_WORDS words."""
    m = form.match(question)
    if not m or len(m.group(1).split()) > DEFINED_WORDS:
        return None
    return " ".join(m.group(1).lower().split())


def definition_pattern(question: str) -> str | None:
    """The pattern (RE2, over lower-cased text with its whitespace collapsed) of a sentence that
    defines what a "What is X?" question asks about: "x is a …", "x are the …"; None for any
    other question."""
    subject = definition_subject(question)
    return None if subject is None else defining(subject)


# "is a", "are the": a copula and an article after the subject
_COPULA = r" (?:is|are) (?:an?|the|one)\b"


def defining(subject: str) -> str:
    """definition_pattern's pattern for a subject already found."""
    return r"(?:^|[^\w])" + re.escape(subject) + _COPULA


def defines_pattern(subject: str) -> str:
    """The forms in which a sentence defines `subject` (lower case, whitespace collapsed), for
    the reader's preference among answering sentences (answer/near_miss.preferring_definition):
    defining's "x is a …" with a parenthesis allowed before the verb ("gvpr (previously known as
    gpr) is a graph stream editor"), "x refers to / means / stands for / denotes …", and a manual
    page's NAME line, "neato − filter for drawing undirected graphs" (the subject, a dash, a
    description). For Python's re, over a sentence (the literal channel's SQL keeps `defining`)."""
    s = re.escape(subject)
    return (r"(?:^|[^\w])" + s + r"(?: \([^()]{1,80}\))?,?" + _COPULA +
            r"|(?:^|[^\w])" + s + r" (?:refers? to|means|stands for|denotes|is defined as)\b"
            r"|(?:^|[^\w-])" + s + r" ?[\u2212\u2013\u2014] \w|^" + s + r" - \w")


# "What does VACUUM do?", "What does neato do?": asked what X does, answered by the sentence X
# is the subject of ("The VACUUM command rebuilds the database file …")
_DOES = re.compile(r"^\s*what\s+does\s+(?:an?\s+|the\s+)?([^?]+?)\s+do[\s?]*$", re.I)
# the word a manual names a thing's kind with ("the VACUUM command"); not "program" or "package":
# "A gvpr program consists of …" is about a program written in gvpr, not about gvpr
_KIND = "command|statement|function|option|macro|utility|method|class|module|directive|clause|keyword|operator|flag"
_NOT_ACTING = "is|are|was|were|does|do|did|can|could|will|would|may|might|must|should|has|have|had|also|only|not"


def action_subject(question: str) -> str | None:
    """X of a "What does X do?" question (lower case, whitespace collapsed), None for any other."""
    return _subject(_DOES, question)


def acts_pattern(subject: str) -> str:
    """The pattern of a sentence that says what `subject` does: it opens with the subject ("the"
    and a word of its kind allowed: "The VACUUM command", "neato") and goes on with a verb
    in the present ("rebuilds", "draws"), not an auxiliary ("A VACUUM will fail if …")."""
    s = re.escape(subject)
    return (r"^(?:the )?" + s + rf"(?: (?:{_KIND}))? (?!(?:{_NOT_ACTING})\b)[a-z]+s\b")


def subject_pattern(subject: str) -> str:
    """The pattern (RE2, as definition_pattern's) of a subject of several words as a phrase, its
    last word singular or plural: "here document" finds "Here Documents"."""
    return r"(?:^|[^\w])" + re.escape(subject) + r"(?:s|es)?(?:$|[^\w])"


def literal_key(phrase: str, subject: str | None) -> str | None:
    """A word that the lower case of a unit's text holds wherever the phrase, or the definition of
    `subject`, stands in its whitespace-collapsed lower case: the longest word of the phrase (of
    the subject too, when there is one). Why it is exact: collapsing whitespace changes no other
    character, and DuckDB's lower() maps each character on its own, so a word without whitespace
    found in the collapsed copy stands in lower(text) as it is."""
    words = set(phrase.split()) & (set(subject.split()) if subject else set(phrase.split()))
    return max(sorted(words), key=len) if words else None


def literal_channel(con, question: str, n_terms: int, limit: int = 100,
                    unit_ids: list[str] | None = None) -> tuple[dict[str, float], dict]:
    """BM25-like scores of the units that hold what the term table cannot: a one-letter name of
    the question ("What is R?") as a whole word, case kept, the question itself as a phrase
    (an FAQ's "2.1 What is R?"), and for "What is X?" the sentence that defines X
    (definition_pattern). Read only for a question that leaves BM25 fewer than LITERAL_BELOW
    terms: scanning every unit's text costs a table scan, and a question with terms of its own
    is found by them. Written in SQL because the text lives in DuckDB."""
    if n_terms >= LITERAL_BELOW:
        return {}, {}
    names = list(dict.fromkeys(_LETTER_NAME.findall(question)))
    phrase = " ".join(question.strip().rstrip("?.!").split()).lower()
    if not names and len(phrase.split()) < 2:
        return {}, {}
    subject = definition_subject(question)
    defines = defining(subject) if subject else None
    # a subject of several words ("a here document") is itself a phrase the term table cannot see:
    # its words apart are common ("here" is not even a term), together they name the section
    # ("3.6.6 Here Documents") that a manual defines it in, without an "is a" sentence
    named = subject_pattern(subject) if subject and len(subject.split()) > 1 else None
    where = "WHERE id IN (SELECT unnest($1::VARCHAR[]))" if unit_ids is not None else ""
    # the unit's text holds the key, or neither the phrase nor the definition can match: tested
    # first, it spares the whitespace-collapsed copy (~0.3 s over TeX Live's 39,005 units) of
    # every unit that cannot (see literal_key)
    key = literal_key(phrase, subject) if not names else None
    patterns = [r"(?:^|[^\w.])" + name + r"(?:$|[^\w'’-])" for name in names]
    params: list = [list(unit_ids)] if unit_ids is not None else []

    def param(value) -> str:
        params.append(value)
        return f"${len(params)}"

    cols = ", ".join(f"len(regexp_extract_all(text, {param(p)}))" for p in patterns) or "0"
    has_phrase = f"contains(flat, {param(phrase)})"
    has_definition = f"regexp_matches(flat, {param(defines)})" if defines else "false"
    has_subject = f"regexp_matches(flat, {param(named)})" if named else "false"
    keyed = f"AND contains(lower(text), {param(key)})" if key else ""
    rows = con.execute(f"""
        SELECT id, tfs, phrase, defines, (SELECT count(*) FROM text_units {where}) AS n, subject FROM (
            SELECT id, [{cols}] AS tfs, {has_phrase} AS phrase, {has_definition} AS defines, {has_subject} AS subject
            FROM (SELECT id, text, lower(regexp_replace(text, '\\s+', ' ', 'g')) AS flat FROM text_units
                  {where or "WHERE true"} {keyed}))
        WHERE list_max(tfs) > 0 OR phrase OR defines OR subject
    """, params).fetchall()
    n = max(int(rows[0][4]) if rows else 1, 1)
    df = [sum(1 for r in rows if r[1][i]) for i in range(len(names))]
    idf = [math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in df]

    def phrase_idf(col: int) -> float:   # a phrase scores as a term its units hold once
        d = sum(1 for r in rows if r[col])
        return math.log(1 + (n - d + 0.5) / (d + 0.5)) if d else 0.0

    said, defined, subjected = phrase_idf(2), phrase_idf(3), phrase_idf(5)
    scores: dict[str, float] = {}
    for uid, tfs, has_phrase, has_definition, _, has_subject in rows:
        s = sum(w * tf * (K1 + 1) / (tf + K1) for w, tf in zip(idf, tfs) if tf)
        s += (said if has_phrase else 0.0) + (defined if has_definition else 0.0) + (subjected if has_subject else 0.0)
        if s > 0:
            scores[uid] = s
    top = dict(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])
    return top, {"names": names, "phrase": phrase, "units": len(scores),
                 "phrase_units": sum(1 for r in rows if r[2])} | (
        {"definition": defines, "definition_units": sum(1 for r in rows if r[3])} if defines else {}) | (
        {"subject": named, "subject_units": sum(1 for r in rows if r[5])} if named else {})


def option_channel(con, question: str, limit: int = 100,
                   unit_ids: list[str] | None = None) -> tuple[dict[str, float], dict]:
    """The units that hold the entry of the command-line option a question names
    (text/options.asked_option, entry_pattern), each scored as a term they hold once. The term
    table drops a one-letter word and reads "-K" as no term at all, so "What does the -z option of
    tar do?" found tar(1)'s pages by "tar" alone, and the page that holds "-z, --gzip, --gunzip"
    (the eleventh of twelve) was not among them. A table scan, read only for such a question."""
    from provrag.text.options import asked_option, entry_pattern

    option = asked_option(question)
    if option is None:
        return {}, {}
    within = "AND id IN (SELECT unnest($2::VARCHAR[]))" if unit_ids is not None else ""
    rows = con.execute(f"""SELECT id, (SELECT count(*) FROM text_units WHERE true {within}) FROM text_units
                           WHERE regexp_matches(text, $1) {within} ORDER BY id""",
                       [entry_pattern(option)] + ([list(unit_ids)] if unit_ids is not None else [])).fetchall()
    if not rows:
        return {}, {"option": option, "units": 0}
    ids, n = [r[0] for r in rows], rows[0][1]
    idf = math.log(1 + (max(n, 1) - len(ids) + 0.5) / (len(ids) + 0.5))
    return {uid: idf for uid in ids[:limit]}, {"option": option, "units": len(ids)}
