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

from provrag.text.asked import asked_facts, gives_default, preferred_facts, states_all
from provrag.text.definitions import names_term
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


# the words a question asks for a default with, which a sentence stating one need not repeat
_DEFAULT_WORDS = frozenset(terms_of("default defaults value values setting settings"))
# the sentence that follows a position in a text (up to its first full stop)
_NEXT_SENTENCE = re.compile(r"\s*([^.!?]{1,300}[.!?]?)")


def preferring_asked_fact(question: str, eligible: list[dict], threshold: float, records: list[dict],
                          idf: dict[str, float] | None) -> list[dict]:
    """Of the candidates that may answer, those answering (probability ≥ threshold) that have the
    form of a fact the question asks for only by preference (a default: text/asked.py) and name
    all that the question names (every term of it the index holds, the asking words aside), when
    any does; else all of them. "bgwriter_lru_maxpages (integer): The default value is 100
    buffers." says a default, of another setting than bgwriter_flush_after's; under its term,
    "jit_expressions (boolean): The default is on." says whose it is. Of those, the ones under the
    term the question names (a definition list's entry, text/definitions.names_term: ssl's, not
    ssl_ciphers'), when any is; and of those, the ones that give the default's value rather than only
    mention a default (text/asked.gives_default), when any does.

    The order stays when the lead says none and its next sentence does without naming whose:
    "The option chapterlistsgap=<value> sets the amount of the vertical gap … The default value is
    10pt." is answered by the two together, the first saying what the second is the default of.

    Only an order: whether a sentence answers stays the reader's and the combination's call, and a
    question none of whose answering sentences says "default" keeps them all (a default given in
    code: "\\heavyrulewidth=.08em")."""
    preferred = preferred_facts(question)
    if not preferred or not eligible:
        return eligible
    named = {t for t in terms_of(question) if (idf or {}).get(t, 0.0) > 0} - _DEFAULT_WORDS
    if not named:   # nothing to say whose default a sentence gives (no index-wide idf): no preference
        return eligible
    lead = eligible[0]
    if not states_all(preferred, lead["sentence"], question):
        text = (records[lead["record"]].get("text") or "") if 0 <= lead["record"] < len(records) else ""
        after = _NEXT_SENTENCE.match(text, lead["end"])
        # as read: a definition's sentence under its term (text/definitions.py)
        shown = next((c["sentence"] for c in eligible if c["record"] == lead["record"] and after
                      and c["start"] == after.start(1)), after.group(1) if after else "")
        if after and states_all(preferred, shown, question) and not named <= set(terms_of(shown)):
            return eligible
    stating = [c for c in eligible if c["prob"] >= threshold and states_all(preferred, c["sentence"], question)
               and named <= set(terms_of(c["sentence"]))]
    # of those, the ones under the term the question names (as scoring.py weighs them): "What is the
    # default value of ssl?" is ssl's "The default is off.", not ssl_ciphers' "The default value is
    # HIGH:…", whose name holds "ssl" too and which the reader read as more likely (0.39 against 0.10)
    qset = set(terms_of(question))
    own = [c for c in stating if c.get("entry") and names_term(c["entry"], qset)] or stating
    # and of those, the ones that give the default's value, when any does: temp_buffers' "(If BLCKSZ is
    # not 8kB, the default value scales proportionally to it.)" led before its "The default is eight
    # megabytes (8MB)."
    giving = [c for c in own if gives_default(c["sentence"])]
    return giving or own or eligible


def about_the_subject(question: str, eligible: list[dict], records: list[dict]) -> list[dict]:
    """For "What is X?" where X is several words ("What is a here document?"), the candidates read
    in a passage that holds X as a phrase (its last word singular or plural, as the literal
    channel finds it: query/literal.subject_pattern), when any is; else all of them. The words of
    such a subject are common apart ("document" on every page of the GNU Free Documentation
    License appended to a manual): a sentence about a "Secondary Section" of "the Document" reads
    as answering by word overlap, in a passage that never says "here document"."""
    from provrag.query.literal import definition_subject, subject_pattern

    subject = definition_subject(question)
    if not subject or len(subject.split()) < 2 or not eligible:
        return eligible
    pattern = re.compile(subject_pattern(subject))
    held: dict[int, bool] = {}

    def holds(ri: int) -> bool:
        if ri not in held:
            text = (records[ri].get("text") or "") if 0 <= ri < len(records) else ""
            held[ri] = bool(pattern.search(" ".join(text.lower().split())))
        return held[ri]

    return [c for c in eligible if holds(c["record"])] or eligible


def preferring_definition(question: str, eligible: list[dict], threshold: float) -> list[dict]:
    """For "What is X?" (query/literal.definition_subject), the answering candidates (probability
    ≥ threshold) that define X (query/literal.defines_pattern) first, when any does; for "What
    does X do?", those that say what X does, X their subject (query/literal.acts_pattern); else
    the order stays. Over Graphviz's manual pages "What is gvpr?" led with "$tvtype : tvtype_t
    indicates how gvpr traverses a graph." (read as answering: it says what gvpr does), before
    "gvpr (previously known as gpr) is a graph stream editor inspired by awk."; over SQLite's
    documentation "What does VACUUM do?" led with "A VACUUM will fail if there is an open
    transaction …", before "The VACUUM command rebuilds the database file …". A definition
    question is answered by the sentence that defines the subject, as in question answering since
    TREC's definition track.

    Only an order, as preferring_asked_fact's: whether a sentence answers stays the reader's and
    the combination's call, and a question none of whose answering sentences defines X keeps them
    all in their order."""
    from provrag.query.literal import action_subject, acts_pattern, defines_pattern, definition_subject

    if not eligible:
        return eligible
    subject, acting = definition_subject(question), action_subject(question)
    if not subject and not acting:
        return eligible
    pattern = re.compile(defines_pattern(subject) if subject else acts_pattern(acting))
    defining = [c for c in eligible if c["prob"] >= threshold
                and pattern.search(" ".join(c["sentence"].lower().split()))]
    if not defining or defining[0] is eligible[0]:
        return eligible
    first = {id(c) for c in defining}
    return defining + [c for c in eligible if id(c) not in first]


def unseen_names(question: str, unseen: list[str] | None) -> list[str]:
    """The question's names (capitalised words after its first) whose term the index holds nowhere."""
    if not unseen:
        return []
    gone = set(unseen)
    words = re.findall(r"[^\W_][\w'’-]*", question or "")[1:]
    return [w for w in words if w[:1].isupper() and gone & set(terms_of(w))]
