"""Questions about a command-line option ("What does the -K option of dot do?", "Which option of gc
counts connected components?"): which sentences may answer them, and the option's entry as the
answer when the reader reads it low (answer/reading.read calls these in its steps 2 and 4).

A manual page answers such a question with the option's entry in its option list, "−Klayout
override the default layout engine implied by the command name.", and no sentence that does not
name the option can (text/options.py reads options in questions and lines).
"""
from __future__ import annotations

import re

from provrag.text.options import (asked_option, asks_what_option_does, asks_which_option, is_option_entry,
                                  names_option, opens_with_option, program_words)

OPTION_ENTRIES = 4       # a named option's entries read besides the other candidates (a page's copies, an option in two lists)


def _names(text) -> set[str]:
    """The words a title or a passage names a program with, lower case ("gzip", "g++")."""
    return set(re.split(r"[^a-z0-9+]+", str(text or "").lower()))


def of_the_named_program(question: str, records: list[dict]) -> set[int] | None:
    """The records whose document's title holds a word the question names besides its option
    ("gzip" in "What does gzip -j do?": gzip.1's), or None when no record's does (a manual whose
    title names no program). Another program's entry for the same option answers for that program:
    over seven GNU and OpenSSH manual pages, "What does gzip -j do?" (gzip has no -j) was answered
    with tar(1)'s "-j, --bzip2 Filter the archive through bzip2(1).", found when the question was
    read against the whole index after gzip(1) did not answer (query/escalate.py)."""
    words = program_words(question)
    held = {ri for ri, r in enumerate(records)
            if words & _names(r.get("document") or r.get("path"))}
    return held or None


def about_the_option(question: str, eligible: list[dict], records: list[dict] | None = None) -> list[dict]:
    """For a question that names a command-line option ("What does the -K option of dot do?":
    text/options.asked_option), only the candidates that are its entry in an option list
    (text/options.opens_with_option), when any is; else only those that name it; none when no
    candidate names it. Of the program the question names, when a document is titled by it
    (of_the_named_program). A sentence that does not name the option says nothing about it: over
    Graphviz's manual pages dot(1)'s SYNOPSIS answered "-K" at 0.91, and "What does the -j option of
    dot do?", an option dot does not have, was answered with the same SYNOPSIS at 0.88. And where
    the manual defines the option, a sentence that mentions it in passing does not answer: grep(1)'s
    "When the -c or --count option is also used, grep does not output a count greater than NUM."
    led "What does the -c option of grep do?" at 0.96 over the entry "-c, --count Suppress normal
    output; instead print a count of matching lines …"."""
    option = asked_option(question)
    if option is None or not eligible:
        return eligible
    named = of_the_named_program(question, records or [])
    if named is not None:
        eligible = [c for c in eligible if c["record"] in named]
    entries = [c for c in eligible if opens_with_option(c["sentence"], option)]
    return entries or [c for c in eligible if names_option(c["sentence"], option)]


def preferring_option_entry(question: str, eligible: list[dict], threshold: float) -> list[dict]:
    """For "Which option of gc counts connected components?" (text/options.asks_which_option), the
    answering candidates (probability ≥ threshold) that are an option list's entry first, when any
    is; else the order stays. Over gc(1) the question led with "DESCRIPTION gc is a graph analogue
    to wc in that it prints … the number of nodes, edges, connected components …", which shares its
    words and names no option, before "−c Count connected components.". Only an order, as
    preferring_definition's."""
    if not eligible or not asks_which_option(question):
        return eligible
    entries = [c for c in eligible if c["prob"] >= threshold and is_option_entry(c["sentence"])]
    if not entries or entries[0] is eligible[0]:
        return eligible
    first = {id(c) for c in entries}
    return entries + [c for c in eligible if id(c) not in first]


def option_entries(question: str, ranked: list[dict], records: list[dict]) -> list[dict]:
    """For a question that names a command-line option, the retrieved sentences that are its entry
    in an option list (text/options.opens_with_option) in the named program's pages
    (of_the_named_program), OPTION_ENTRIES at most, read besides the others: "−x Only the connected
    components are printed, as separate graphs." shares no word with "What does the -x option of
    ccomps do?" (a one-letter option is no term), so neither the lexical scorer nor the first
    passages' sentences brought it to the reader."""
    option = asked_option(question)
    if option is None:
        return []
    named = of_the_named_program(question, records)
    return [c for c in ranked if opens_with_option(c["sentence"], option)
            and (named is None or c["record"] in named)][:OPTION_ENTRIES]


def naming_the_program(question: str, entries: list[dict], records: list[dict]) -> list[dict]:
    """The entries whose passage names the program the question names, when it names one and no
    document is titled by it: another program's entry for the same option does not answer for it.
    Over five manual pages (pv, tree, zstd, lz4, ncdu), "What does the -q option of git do?" was
    answered with pv(1)'s "-q, --quiet No output.", its passage read as relevant at 0.57; pv's page
    never names git. A manual titled otherwise that documents the program names it."""
    words = program_words(question)
    if not words:
        return entries
    return [c for c in entries if words & _names(records[c["record"]].get("text"))]


def stating_entries(entries: list[dict], eligible: list[dict], asked: tuple[str, ...]) -> list[dict]:
    """The option's entries that may answer when no sentence does (entry_of_option): all of them,
    unless the question asks for a limit, a version or a cost (`asked`, near_miss.stating_asked_fact's
    kinds). Then only an entry that states one, i.e. one of the candidates that function kept
    (`eligible`). An entry says what an option does, not its largest value nor the version that added
    it: "What is the largest rate pv's -L option accepts?" was answered with "-L RATE, --rate-limit
    RATE Limit the transfer to a maximum of RATE bytes per second." (0.83), and "Which version of zstd
    added the --patch-from option?" with the option's entry, which names no version, though the
    reader had found that no candidate states the fact asked."""
    if not asked:
        return entries
    stating = {id(c) for c in eligible}
    return [e for e in entries if id(e) in stating]


def entry_of_option(question: str, entries: list[dict], records: list[dict], relevance, threshold: float,
                    best: float) -> tuple[list[dict], float]:
    """For a question that names an option, when no sentence answers by the reader's reading: the
    option's entry (option_entries) in the passage the passage head reads as most relevant
    (`relevance`: record → probability), with that probability as the confidence, as
    question_forms.said_about answers "what is said about" questions. The entry states what the
    option does by the manual's own layout; the reader was never taught that an option's line
    answers: it reads "−Klayout override the default layout engine implied by the command name."
    at 0.06 for "What does the -K option of dot do?" and a man page's option lines at 0.13 on
    average (bench/results/option-entries-2026-12-01.md).

    The passage head decides whether the entry's page is about what the question asks (dot(1)'s,
    not gvpr(1)'s, for "-c of dot"): it must read it as relevant (at or above the threshold),
    unless the question asks only what the option does (text/options.asks_what_option_does) of a
    program whose own manual holds the entry (of_the_named_program). Then the page is the asked
    one by its title, and the entry is the answer whatever the head makes of the page: it read
    bc(1)'s page at 0.13 for "What is the -v flag of bc for?", whose entry is "-v, --version Print
    the version number and copyright and quit." (bench/results/own-entry-2026-12-02.md). The
    confidence stays the head's reading: the entry answers by layout, not because the model is
    sure. When no document is titled by the program the question names, an entry answers only
    from a passage that names it (naming_the_program)."""
    only_what = asks_what_option_does(question)
    own = only_what and of_the_named_program(question, records) is not None
    if only_what and not own:
        entries = naming_the_program(question, entries, records)
        if not entries:
            return [], best
    prob, entry = max(((relevance(c["record"]), c) for c in entries), key=lambda x: x[0])
    return ([entry], round(float(prob), 4)) if prob >= threshold or own else ([], best)
