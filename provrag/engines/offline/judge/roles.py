"""Who did it: the claim's named subject must be the one the evidence says the deed of.

Word overlap cannot tell "R was created at Bell Laboratories by Rick Becker…" from "R can be
regarded as an implementation of the S language which was developed at Bell Laboratories by
Rick Becker…": every word of the claim is there, but the deed belongs to S. Without a parser
(none ships offline), one surface rule of English finds the evidence's doer: a relative pronoun
("which", "who") between the claim's subject and the deed hands the deed to the noun right
before the pronoun ("the S language which was developed…"), unless the clause ends before the
deed. Two readings keep that noun the subject's own: a predicate noun ("Numenius was a Greek
philosopher, who lived…"), and a pronoun in the clause that may point back to it ("…Records
which supported the release of his album").
A deed stated in another sentence than its doer is left to the name features (a missing name).

The claim's subject is its named words before its first auxiliary verb (else a past form in
-ed): "R was created…" → {R}. A claim with no named subject, or no such verb, is not checked:
this is a veto for the clear case, never a reading of every sentence.
"""
from __future__ import annotations

import re

from provrag.engines.offline.judge.analysis import COMMON_START, PATH
from provrag.engines.offline.judge.lexicon import stem
from provrag.text.words import JUDGE_STOP_WORDS as STOP

# single letters count here: "R" and "S" are the names of two languages
_TOKEN = re.compile(PATH + r"|[A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F'’\-]*|\d[\d,.]*")
_VERBS = frozenset("""is are was were be been being am has have had will would can could shall should
may might must do does did became become becomes""".split())
_RELATIVE = frozenset({"which", "who", "whom", "whose"})
_COPULA = frozenset("is are was were be been became becomes remains remained".split())
_PRONOUNS = frozenset("he she his her him hers it its their they them".split())


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(surface word, stem, offset) of each word of `text`, in order."""
    return [(m.group(0), m.group(0).rstrip("/") if m.group(0)[0] == "/" else stem(m.group(0)), m.start())
            for m in _TOKEN.finditer(text)]


def _letter(word: str) -> bool:
    """A capital letter on its own other than "A" and "I": a name ("R", "S", "C")."""
    return len(word) == 1 and word.isupper() and word not in "AI"


def _is_name(word: str, first: bool) -> bool:
    low = word.lower()
    return _letter(word) or ((word[0].isupper() or word[0] == "/") and low not in STOP
                             and not (first and low in COMMON_START))


def claim_roles(claim: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """(the claim's subject names, the stems of its deed) — None when it has no named subject
    before a verb."""
    toks = _tokens(claim)
    # an auxiliary first: "Data stored in /var/tmp is preserved…" is about the data in /var/tmp
    verb = next((i for i, (w, _, _) in enumerate(toks) if i > 0 and w.lower() in _VERBS), None)
    if verb is None:
        verb = next((i for i, (w, _, _) in enumerate(toks) if i > 0 and w.islower() and len(w) > 4
                     and w.endswith("ed")), None)
    if verb is None:
        return None
    subject = frozenset(s for i, (w, s, _) in enumerate(toks[:verb]) if _is_name(w, i == 0))
    deed = frozenset(s for w, s, _ in toks[verb:] if w.lower() not in STOP and w.lower() not in _VERBS
                     and not w[0].isdigit()) - {s for _, s, _ in toks[:verb]}
    if not subject or not deed:
        return None
    return subject, deed


def subject_conflict(claim: str, sentences: list[str]) -> bool:
    """Does the evidence (the sentences of the span that matches the claim) give the claim's deed
    to another named thing through a relative clause? Read in the sentence that states most of
    the deed, and only when it states at least half of it (two words at least)."""
    roles = claim_roles(claim)
    if roles is None or not sentences:
        return False
    subject, deed = roles
    toks_of = [_tokens(s) for s in sentences]
    hits = [len({t[1] for t in toks} & deed) for toks in toks_of]
    best = max(range(len(hits)), key=lambda i: hits[i])
    if hits[best] < max(2, (len(deed) + 1) // 2):
        return False
    toks = toks_of[best]
    at = next(i for i, t in enumerate(toks) if t[1] in deed)
    last = max(i for i, t in enumerate(toks) if t[1] in deed)
    text = sentences[best]
    for j in range(at - 1, -1, -1):
        word, s, start = toks[j]
        if s in subject:
            return False            # the claim's subject is the nearest one before the deed
        if word.lower() in _RELATIVE:
            if re.search(r"[,;:()]|\band\b", text[start:toks[at][2]]) \
                    or any(w.lower() in _PRONOUNS for w, _, _ in toks[j + 1:last + 1]):
                # the clause ended before the deed ("…commercials which aired on CBS, and on …
                # the MTV show"), or a pronoun in it may be the subject's ("…Records which
                # supported the release of his album")
                return False
            return _antecedent_is_other(toks[:j], subject, text)
    return False


def _antecedent_is_other(before: list[tuple[str, str, int]], subject: frozenset[str], text: str) -> bool:
    """Is the noun phrase that ends `before` (a relative pronoun's antecedent) someone other than
    the claim's subject? Not when it names the subject; nor when it is a predicate noun of the
    sentence's subject ("Numenius was a Greek philosopher, who…", "…is a film and comic book
    artist who…"); nor when it is in apposition to the subject ("Suchitra, a princess who…")."""
    antecedent, k = _noun_phrase(before, len(before))
    while k > 0 and before[k - 1][0].lower() in ("a", "an", "the", "and", "or"):
        k -= 1
    if k > 0 and before[k - 1][0].lower() in _COPULA:
        return False
    if k > 0 and "," in text[before[k - 1][2]:before[k][2] if k < len(before) else len(text)]:
        antecedent = antecedent + _noun_phrase(before, k)[0]   # an apposition: the name before the comma
    names = {s for _, s, _ in antecedent}
    return bool(names) and not subject & names


def _noun_phrase(toks: list[tuple[str, str, int]], end: int) -> tuple[list[tuple[str, str, int]], int]:
    """The content words that end at toks[end - 1], read backwards (up to six; "and"/"or" within),
    and where the phrase starts."""
    out: list[tuple[str, str, int]] = []
    k = end
    while k > 0 and len(out) < 6:
        w = toks[k - 1][0]
        if w.lower() in ("and", "or") and out:
            k -= 1
            continue
        if (w.lower() in STOP and not _letter(w)) or w[0].isdigit():
            break
        out.append(toks[k - 1])
        k -= 1
    return out, k
