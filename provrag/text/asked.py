"""Does a sentence state the kind of fact a question asks for? The near misses' rule.

Issue 26 names the unanswerable questions real users ask: near misses, where the manual
discusses the topic but not the asked fact — "the largest value a setting may take, where no
maximum is stated; the version that added a feature, in a manual with no history; how long a
procedure takes, where the manual only says that it happens". Every word of such a question
is in the index, and the sentences around the topic share them, so word overlap (the answer
combination's largest weight) reads them as answering; the learned reader reads technical
sentences too low to overrule it (bench/results/named-scope-passage-2026-11-27.md). What does
tell is the asked fact's form, which an answering sentence seldom lacks (on SQuADShifts, where
nobody tuned it, 88 % of the sentences holding an annotated answer have it, 26 % of the others
in their paragraphs do: bench/asked_rule.py):

  limit    "What is the largest …", "… at most?", "the maximum …": a sentence that states a
           bound says one (maximum, at most, up to, limit, exceed, no more than, a superlative
           …); one that only describes the setting does not;
  version  "Which version added …", "Since which release …": a version or release has a
           number, one the question does not already say;
  cost     "How much faster / longer / more memory …", "How long does … take", "By how much …":
           a quantity, one the question does not already say.

One kind is preferred rather than required:

  default  "What is the default value of work_mem?", "… X's default …": a sentence that states a
           default says so (default, defaults, initially). Over reference pages every entry
           says its default, in a sentence that shares little with the question but that word,
           so word overlap leads with the entry's opening sentence, which names the setting
           most often ("jit_expressions (boolean): Determines whether expressions are JIT
           compiled …") over its "The default is on." Of the answering sentences, one that says
           a default and names all the question names leads
           (answer/near_miss.preferring_asked_fact); when none does, the order stays: a
           default is often given in code ("\\heavyrulewidth=.08em") with no such word, and a
           preference must not turn an answer into an abstention.

A rule over wording, by hand: the classes are few and closed, a sentence either has the form or
not, and the learned heads were measured not to see it (the answer head reads "The maximum
modulo value is now 255." and "The lines … are wider since the default basewidth …" alike, ~0.2).
It only ever removes a candidate from the answer; whether a sentence that has the form answers
is still the reader's and the combination's call.
"""
from __future__ import annotations

import re

# the words of a limit, asked for or stated
SUPERLATIVES = "largest|biggest|highest|greatest|maximum|maximal|max|longest|smallest|lowest|minimum|minimal|shortest|fewest"

# what the question asks for (lower-cased question)
_SUPERLATIVE_Q = re.compile(rf"\b({SUPERLATIVES})\b")
# a superlative asks for a limit when it bounds a quantity ("the largest value …", "the maximum
# line length") or what something accepts ("the largest skip the package accepts"); "the largest
# city the Rhine runs through" or "the biggest game animals" ask for a thing, not a limit
_QUANTITY_Q = re.compile(
    rf"\b({SUPERLATIVES})"
    r" (\S+ ){0,2}(number|numbers|value|values|size|length|amount|count|width|height|depth|weight|level|levels"
    r"|capacity|precision|speed|rate|duration|distance|limit)\b"
    r"|\b(allow|allows|allowed|accept|accepts|accepted|permit|permits|permitted|support|supports|supported|handle"
    r"|handles|can|could|may)\b")
_BOUND_Q = re.compile(r"\bat (most|least)\b|\b(upper|lower) (limit|bound)\b")
_VERSION_Q = re.compile(
    r"\b(which|what) ((?!(?:do|does|did|can|could|will|would|should|has|have|had)\b)\S+ ){0,3}"
    r"(version|release)\b|\b(since|from|in|with) (which|what) (\S+ ){0,2}(version|release)\b")
_COST_Q = re.compile(
    r"\bhow (much|many times) (longer|faster|slower|shorter|quicker|more|less|bigger|larger|smaller)\b"
    r"|\bhow long (does|do|did|will|would|can|could) .{1,100}\btake\b|\bby how (much|many)\b")

# what a sentence needs to state it
_BOUND = re.compile(
    rf"\b({SUPERLATIVES}|maximally|limit|limits|limited|limitation|unlimited|exceed|exceeds|exceeded|exceeding|arbitrary|arbitrarily|cap|capped"
    r"|bound|bounded|unbounded|infinite|infinitely)\b"
    r"|\bat (most|least)\b|\bup to\b|\b(or|and) (later|newer|higher|above|greater)\b|\b(no|not) (more|less|fewer|larger|greater|longer) than\b"
    r"|\b(more|less|fewer|larger|greater|longer|shorter|smaller) than\b|\bany number of\b|\bas many\b|\brange\b"
    r"|\bbetween [-+]?\d[\d.,]* and [-+]?\d|\b(above|below|over|under|beyond|within)\s+[-+]?\d|\bfrom [-+]?\d[\d.,]* (\S+ )?to [-+]?\d|\batleast\b"
    # a number "or more" / "or less" ("5 millimetres or more"); "one or more of the options" bounds nothing
    r"|\d[\d.,]*\s*(\S+\s+){0,2}or (more|less|fewer|over|under|above|below)\b", re.I)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*[a-z]?", re.I)
# a duration in words: "about a week", "a few days", "for months"
_DURATION = re.compile(
    r"\b(a|an|one|few|several|many|some|couple of)\s+(\w+\s+)?(second|minute|min|hour|day|week|month|year|decade)s?\b"
    r"|\b(seconds|minutes|hours|days|weeks|months|years|decades)\b", re.I)
_NUMBER_WORDS = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred"
    r"|thousand|million|billion|once|twice|double|doubles|doubled|triple|half|quarter|dozen|percent|several)\b", re.I)

# a question asks for a default: "the default (value) of X", "X's default Y", "defaults to what"
# ("by default" qualifies another fact: "how much is it trimmed by default" asks for the trim)
_DEFAULT_Q = re.compile(r"(?<!\bby )\bdefaults?\b")
_DEFAULT = re.compile(r"\bdefault(s|ed)?\b|\binitial(ly)?\b", re.I)
# … and gives its value: "The default is on.", "The default value is five.", "defaults to 0", "(the
# default)", "… is the default"; not one that only mentions a default ("the default behavior of
# ordinary strings is now …", "(If BLCKSZ is not 8kB, the default value scales proportionally to it.)")
_GIVES_DEFAULT = re.compile(r"\bdefaults?(?:\s+(?:value|setting)s?)?\s+(?:is|are|was|were|will be)\b"
                            r"|\bdefaults?\s+to\b|\(the default\)|\bis the default\b|\bdefault\s*[:=]", re.I)

KINDS = ("limit", "version", "cost")
PREFERRED_KINDS = ("default",)


def asked_facts(question: str) -> tuple[str, ...]:
    """The kinds of fact (KINDS) the question's wording asks for; () for any other question."""
    q = " ".join((question or "").lower().split())
    limit = bool(_BOUND_Q.search(q) or (_SUPERLATIVE_Q.search(q) and _QUANTITY_Q.search(q)))
    return tuple(k for k, asked in (("limit", limit), ("version", bool(_VERSION_Q.search(q))),
                                    ("cost", bool(_COST_Q.search(q)))) if asked)


def preferred_facts(question: str) -> tuple[str, ...]:
    """The kinds of fact (PREFERRED_KINDS) the question asks for that only order the candidates."""
    q = " ".join((question or "").lower().split())
    return ("default",) if _DEFAULT_Q.search(q) else ()


def _says_new(pattern: re.Pattern, sentence: str, question: str) -> bool:
    """Whether the sentence holds a match of pattern that the question does not already say."""
    said = {m.group(0).lower() for m in pattern.finditer(question)}
    return any(m.group(0).lower() not in said for m in pattern.finditer(sentence))


def states(kind: str, sentence: str, question: str) -> bool:
    """Whether the sentence has the form of the fact of this kind (see the module docstring)."""
    if kind == "limit":   # a superlative the question asks with is among _BOUND's words
        return bool(_BOUND.search(sentence))
    if kind == "default":
        return bool(_DEFAULT.search(sentence))
    if kind == "version":
        return _says_new(_NUMBER, sentence, question)
    if kind == "cost":
        return _says_new(_NUMBER, sentence, question) or _says_new(_NUMBER_WORDS, sentence, question) \
            or (bool(_DURATION.search(sentence)) and not _DURATION.search(question))
    return True


def gives_default(sentence: str) -> bool:
    """Whether the sentence gives a default's value, not only mentions a default (_GIVES_DEFAULT)."""
    return bool(_GIVES_DEFAULT.search(sentence))


def states_all(kinds: tuple[str, ...], sentence: str, question: str) -> bool:
    """True when the sentence has the form of every kind of fact the question asks for."""
    return all(states(k, sentence, question) for k in kinds)
