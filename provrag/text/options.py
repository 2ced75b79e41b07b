"""Command-line options: the one a question asks about, and the lines of a manual that name it.

A manual page answers "What does the -K option of dot do?" with the option's line, "−Klayout
override the default layout engine implied by the command name.", and no other sentence can:
one that does not name -K says nothing about it, however many of the question's words it holds
(dot(1)'s SYNOPSIS, "dot [options] [files] …", was the answer at 0.91), and a page that never
names "-j" cannot say what "-j" does. groff prints an option's dashes as U+2212 in a PDF and runs
a one-letter option into its argument's name ("−Klayout", "−ooutfile"), so both are read here.

Hand-written: no library reads option syntax out of flowing PDF text; three patterns do.
"""
from __future__ import annotations

import re

# the dashes a PDF prints for "-": U+2212 (groff's \-), U+2010 and U+2011 (hyphens)
_DASHES = str.maketrans({"\u2212": "-", "\u2010": "-", "\u2011": "-"})
# an option as a word: one or two dashes, then a letter (not a number, "-1", nor a list's "- ")
_OPTION = r"--?[A-Za-z][\w-]*"
_ASKED = re.compile(rf"(?<![\w-])({_OPTION})")
# what opens an option list's entry, and a line that does (text/sentences.py opens a sentence there)
OPTION_ENTRY = r"[-\u2212\u2010\u2011]{1,2}[A-Za-z?]"
OPTION_LINE = re.compile(rf"[ \t]*{OPTION_ENTRY}")
# a one-letter option's argument name run on ("−Klayout", "−Gname=value"; not "−color_scheme=c")
_RUN_ON = re.compile(r"[A-Za-z]+(?:=\S*)?,?")
LEADING_TOKENS = 3   # "-a, --all do not ignore …": the option's tag is the line's first words
# "Which option of gc counts …?", "What flag makes ls …?": the answer is an option's entry
_WHICH_OPTION = re.compile(r"^\s*(?:which|what)\s+(?:command[- ]line\s+)?(?:option|flag|switch)s?\b", re.I)
# "What does the -K option of dot do?", "What does gvgen -k generate?", "What is the -v flag of bc for?"
_WHAT_DOES = re.compile(r"^\s*what\s+does\s+(?P<subject>.+?)\s+[a-z]+(?:\s+(?:off|on|out|up))?\s*\?\s*$", re.I)
_WHAT_FOR = re.compile(r"^\s*what\s+is\s+(?P<subject>.+?)\s+(?:used\s+)?for\s*\?\s*$", re.I)


def plain_dashes(text: str) -> str:
    return text.translate(_DASHES)


# a Markdown list item's marker before an option: docling writes an HTML definition list's term so
# ("- -a\n--data-only\n    - Dump only the data, …", pg_dump's page)
_ITEM_MARKER = re.compile(r"^\s*[-*][ \t]+(?=--?[A-Za-z?])")


def _entry_text(sentence: str) -> str:
    """The sentence as an option list's line: dashes plain, an item's marker off; "" for a term's
    line alone ("- -c command"), whose definition ("    - Execute …") is not in the sentence."""
    text = plain_dashes(sentence).lstrip()
    bare = _ITEM_MARKER.sub("", text, count=1)
    return bare if bare == text or re.search(r"\s-\s", bare) else ""


def asked_option(question: str) -> str | None:
    """The option a question names ("-K", "--all"), or None: a question about an option names it
    with its dashes."""
    m = _ASKED.search(plain_dashes(question))
    return m.group(1) if m else None


def names_option(sentence: str, option: str) -> bool:
    """Whether the sentence names the option as a word ("-K" in "with -K, …", not in "-Kernel"),
    or opens with it (opens_with_option: "−Klayout override …")."""
    text = plain_dashes(sentence)
    return bool(re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text)) or opens_with_option(sentence, option)


def opens_with_option(sentence: str, option: str) -> bool:
    """Whether the sentence is the option's entry in an option list: it opens with an option, and
    the asked one is among its first words ("−a, −−all do not ignore …" for --all); a one-letter
    option may run into its argument's name at the start ("−Klayout" for -K, as groff prints it)."""
    text = _entry_text(sentence)
    if not OPTION_LINE.match(text):
        return False
    first = text.split()[:LEADING_TOKENS]
    if first and len(option) == 2 and not first[0].startswith("--") and first[0].startswith(option) \
            and _RUN_ON.fullmatch(first[0][2:]):
        return True
    return any(re.fullmatch(rf"{re.escape(option)}(?:[=\[,#%][^\s]*)?,?", w) for w in first)


def asks_which_option(question: str) -> bool:
    """Whether the question asks which option does something ("Which option of gc counts …?")."""
    return bool(_WHICH_OPTION.match(question))


def asks_what_option_does(question: str) -> bool:
    """Whether the question asks only what an option does or is for, of one program or none:
    "What does the -K option of dot do?", "What does gvgen -k generate?", "What is the -v flag of bc
    for?", "What does valgrind's --leak-check=full do?". Its entry in that program's option list
    answers it by the manual's own layout. A question that asks a fact about the option does not
    qualify ("What is the default scale factor of dot's -s option?", "Which version of cscope added
    -q?", "What is the highest resolution --dpi accepts?"): the entry seldom states it, so only
    the reader may find the sentence that does. Nor does one whose subject holds more than the
    option and one program's name ("What does the --license option of a GNU program print?")."""
    m = _WHAT_DOES.match(question) or _WHAT_FOR.match(question)
    if not m or asked_option(m["subject"]) is None:
        return False
    rest = re.sub(rf"(?<![\w-]){_OPTION}(?:=\S*)?", " ", plain_dashes(m["subject"]), count=1)
    return len(program_words(rest)) <= 1 and asked_option(rest) is None


def is_option_entry(sentence: str) -> bool:
    """Whether the sentence is an entry of an option list: it opens with an option."""
    return bool(OPTION_LINE.match(_entry_text(sentence)))


def entry_pattern(option: str) -> str:
    """A pattern (RE2 and Python's re alike, multi-line) for a line that is the option's entry: it
    opens with the option (after a Markdown item's marker too: docling's HTML definition lists), or
    with up to two others before it ("−a, −−all"), any dash a PDF prints;
    a one-letter option may run into its argument's name ("−Klayout"). For retrieval, which finds
    the units that hold it (query/literal.option_channel), as opens_with_option reads a sentence."""
    dash = "[-\u2212\u2010\u2011]"
    name = option.lstrip("-")
    head = f"{dash}{{{len(option) - len(name)}}}{re.escape(name)}"
    run_on = "(?:[A-Za-z]+(?:=\\S*)?)?" if len(option) == 2 else ""
    return (f"(?m)^[ \\t]*(?:[-*][ \\t]+)?(?:{dash}{{1,2}}[A-Za-z0-9?][^\\s,]*,?[ \\t]+){{0,2}}{head}{run_on}"
            f"(?:[\\s,=\\[#%]|$)")


# the words of an option question that name no program ("What does the -K option of dot do?")
_NOT_PROGRAM = frozenset("a an and argument command do does doing flag flags for how i in is it mean means me my of "
                         "on option options parameter switch the to use used what when which with".split())


def program_words(question: str) -> set[str]:
    """The question's words that may name the program its option belongs to, lower case: those of
    two letters or more that are no option and no word of how an option question is asked."""
    text = _ASKED.sub(" ", plain_dashes(question)).lower()
    return {w for w in re.findall(r"[a-z0-9][a-z0-9+]*", text) if len(w) > 1 and w not in _NOT_PROGRAM}
