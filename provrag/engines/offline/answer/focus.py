"""The offline answer ends when the question is answered: what to keep after the best sentence.

An extractive answerer that always quotes n sentences pads a one-fact answer with the facts
next to it ("Who closed ticket T-07000?" → the right sentence, then two other tickets'
closers). What a person asking wants depends on the question:

- a single-fact question gets the sentence that holds the fact, and a second one only when it
  is as strong a candidate (the ranking cannot tell them apart, so hiding one would be a
  guess) *and* it is about the same subject: it holds the question's most specific term that
  the best sentence holds (the ticket number, the package name) or answers another part of the
  question (terms of it no kept sentence holds: "where … and what …"), and, when the question asks
  for a number, a measure or a date, it holds one too. A sentence about another subject,
  however well it matches the rest of the question, answers another question;
- a "how do I …" question gets the steps of one section: the section whose heading names the
  task when the context has one, else the best sentence and the ones that follow it in its
  section, in document order, up to the next heading;
- a broad question (themes, overview) keeps one sentence per record, up to n.
"""
from __future__ import annotations

import re

from provrag.engines.offline.answer.wording import clean
from provrag.text.questions import is_broad, is_procedural
from provrag.text.sentences import is_heading, is_section_title, split_sentences
from provrag.text.tables import rows_of
from provrag.text.words import query_terms, terms_of

# a sentence that only sends the reader elsewhere ("See Uploaders for the syntax of that field.",
# "The R for macOS FAQ (…) has more details.", "… are described in the R for Windows FAQ") states
# nothing itself; a parenthesis "(see … for details)" inside a statement does not count
POINTS_ELSEWHERE = re.compile(
    r"^\s*(?:see|refer to|consult)\b"
    # "For more information on parallel query, see Chapter 15." (PostgreSQL), "For more details, refer to …"
    r"|^\s*for (?:(?:more|further|additional|full|complete) )?(?:information|details|discussion)\b[^.]*?"
    r"\b(?:see|refer to|consult|read|visit)\b"
    r"|\b(?:has|have|gives?|contains?|provides?) (?:more|further|additional) (?:details|information)\b"
    r"|\b(?:is|are) (?:described|explained|documented|discussed|covered) (?:in|on)\b"
    r"|\bcan be found (?:in|on|at)\b", re.I)
SAME_STRENGTH = 0.9   # a further sentence is kept only when it scores ≥ this share of the best one
OTHER_PART_STRENGTH = 0.75  # … or ≥ this share when it answers a part of the question the kept ones do not
MAX_STEPS = 6         # sentences of a procedure quoted after its first


def anchor_term(question_idf: dict[str, float], best_sentence: str) -> str | None:
    """The question's most specific term (highest idf) that the best sentence holds."""
    held = set(terms_of(best_sentence))
    cands = [(w, t) for t, w in question_idf.items() if t in held]
    return max(cands)[1] if cands else None


def points_elsewhere(sentence: str) -> bool:
    """Whether the sentence only refers the reader to another document or section (POINTS_ELSEWHERE)."""
    return bool(POINTS_ELSEWHERE.search(sentence or ""))


def same_subject(anchor: str | None, sentence: str, antecedent: str | None = None) -> bool:
    return anchor is None or anchor in set(terms_of(sentence + " " + (antecedent or "")))


def steps_after(best: dict, record: dict) -> list[dict]:
    """The sentences that follow the best one in its record, up to a heading (its section's
    steps), as picked sentences citing the same record. A question ends them too: in a FAQ the
    next question ("8.5 How can I debug S4 methods?") is the next entry's title, and steps are
    never asked."""
    text = record.get("text") or ""
    rows = rows_of(text, record.get("previous") or "")   # a table's row is shown under its header
    out = []
    for a, b in split_sentences(text):
        if a <= best["start"]:
            continue
        row = rows[a].reading() if a in rows and rows[a].end == b else None
        if (not row and is_heading(text[a:b])) or text[a:b].rstrip().endswith("?") or len(out) >= MAX_STEPS:
            break
        sentence = row or clean(text[a:b])
        if len(sentence.split()) >= 3:
            out.append({"record": best["record"], "start": a, "end": b, "sentence": sentence, "score": 0.0,
                        "step": True})
    return out


def section_steps(question: str, records: list[dict]) -> list[dict]:
    """The steps under the first heading, in retrieval order, that names everything the question
    asks how to do ("How do I orphan a package?" → "5.9.4 Orphaning a package"): a section
    titled with the task is its procedure, even when another section mentions the task more."""
    wanted = set(query_terms(question))
    if not wanted:
        return []
    for ri, record in enumerate(records):
        text = record.get("text") or ""
        for a, b in split_sentences(text):
            if is_section_title(text[a:b]) and wanted <= set(terms_of(text[a:b])):
                steps = steps_after({"record": ri, "start": a}, record)
                if steps:  # a contents line names the task too, but nothing follows it
                    return steps
    return []


def focus(question: str, picked: list[dict], records: list[dict], question_idf: dict[str, float], n: int) -> list[dict]:
    """The picked sentences (best first) cut to what answers the question (module docstring)."""
    procedural = is_procedural(question)
    if procedural:
        steps = section_steps(question, records)
        if steps:
            return steps
    if len(picked) <= 1:
        return picked
    best = picked[0]
    if is_broad(question):
        seen, out = set(), []
        for p in picked:
            if p["record"] not in seen:
                seen.add(p["record"])
                out.append(p)
        return out[:n]
    if procedural:
        return [best] + (steps_after(best, records[best["record"]]) if not best.get("citation") else [])
    anchor = anchor_term(question_idf, best["sentence"] + " " + (best.get("antecedent") or ""))
    out = [best]
    covered = _question_terms_in(question_idf, out)
    for p in picked[1:n]:
        holds_kind = p.get("type_factor", 1.0) >= best.get("type_factor", 1.0)  # a number when one is asked for
        # another part of the question ("where … and what …"): terms no kept sentence holds
        held = _question_terms_in(question_idf, [p])
        strong = p["score"] >= SAME_STRENGTH * best["score"]
        if holds_kind and ((strong and same_subject(anchor, p["sentence"], p.get("antecedent")))
                           or (held - covered and p["score"] >= OTHER_PART_STRENGTH * best["score"])):
            out.append(p)
            covered |= held
    return out


def _question_terms_in(question_idf: dict[str, float], picked: list[dict]) -> set[str]:
    held = set()
    for p in picked:
        held |= set(terms_of(p["sentence"] + " " + (p.get("antecedent") or "")))
    return held & set(question_idf)
