"""Command-line options in questions and in a manual's lines (text/options.py), and an option list's
entries as sentences of their own (text/sentences.py), on lines as groff prints a manual page in a
PDF: U+2212 for "-", a one-letter option run into its argument's name."""
from __future__ import annotations

import math

import pytest

from provrag.text.options import asked_option, asks_what_option_does, names_option, opens_with_option
from provrag.text.sentences import split_sentences


@pytest.mark.parametrize("question, option", [
    ("What does the -K option of dot do?", "-K"),
    ("What does ls --all do?", "--all"),
    ("What does the \u2212O flag do?", "-O"),          # pasted from the PDF
    ("What is R?", None),
    ("What is a 3-way merge?", None),                   # a hyphen inside a word
    ("Is -1 a valid value?", None),                     # a number, not an option
])
def test_the_option_a_question_asks_about(question, option):
    assert asked_option(question) == option


@pytest.mark.parametrize("sentence, option, opens, names", [
    ("\u2212Klayout override the default layout engine implied by the command name.", "-K", True, True),
    ("\u2212a, \u2212\u2212all do not ignore entries starting with .", "--all", True, True),
    ("\u2212X node_name\nPrints only the component containing the node node_name, if any.", "-X", True, True),
    ("\u2212o outfile If specified, each graph will be written to a different file", "-o", True, True),
    ("\u2212\u2212block-size=SIZE with -l, scale sizes by SIZE when printing them", "--block-size", True, True),
    ("with \u2212l, print the author of each file", "-l", False, True),
    ("Thus, the flag -x is equivalent to -X#0-.", "-x", False, True),
    ("SYNOPSIS dot [options][files] neato [options][files]", "-K", False, False),
    ("gvpack [ \u2212nguv? ][ \u2212mmargin ][ \u2212ooutfile ]", "-n", False, False),   # a synopsis's cluster
    ("\u2212Kernel modules are loaded first.", "-K", True, True),   # the run-on reading's cost: rare, kept
    ("\u2212Gname=value sets a default graph attribute.", "-G", True, True),
    ("\u2212color_scheme=c specifies the color scheme.", "-c", False, False),   # another option
    ("The -Kfoo form is obsolete.", "-K", False, False),
    # docling's HTML definition list (pg_dump's page): the term's item, then its definition's
    ("- -a --data-only - Dump only the data, not the schema (data definitions).", "-a", True, True),
    ("- -a --data-only - Dump only the data, not the schema (data definitions).", "--data-only", True, True),
    ("- -c command", "-c", False, True),       # the term alone: no definition in the sentence
])
def test_an_option_s_entry_and_a_sentence_that_names_it(sentence, option, opens, names):
    assert opens_with_option(sentence, option) is opens
    assert names_option(sentence, option) is names


def sentences_of(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_an_option_list_s_entry_opens_a_sentence():
    # ccomps(1) as groff prints it: each entry ran on from the last sentence of the one before
    text = ("The following options are supported:\n\u2212e Do not induce edges in the connected components.\n"
            "\u2212s No output graph is printed. The return value can be used to check if the graph is connected "
            "or not.\n\u2212x Only the connected components are printed, as separate graphs.\n")
    assert sentences_of(text) == [
        "The following options are supported:",
        "\u2212e Do not induce edges in the connected components.",
        "\u2212s No output graph is printed.",
        "The return value can be used to check if the graph is connected or not.",
        "\u2212x Only the connected components are printed, as separate graphs."]


def test_an_option_s_tag_on_a_line_of_its_own_is_read_with_its_description():
    # a short unpunctuated line before a capital is a heading, but not an option's tag
    text = ("If this flag is set, the component contains only the relevant nodes and edges of the graph read.\n"
            "\u2212X node_name\nPrints only the component containing the node node_name, if any.\n")
    assert sentences_of(text)[-1] == "\u2212X node_name\nPrints only the component containing the node node_name, if any."


def test_a_line_that_opens_with_a_hyphenated_word_or_a_list_item_is_no_option():
    text = "The value is set once.\n- an item of a list\nwell-known values follow.\n"
    assert sentences_of(text) == ["The value is set once.", "- an item of a list\nwell-known values follow."]


def test_in_an_option_list_an_entry_opens_a_sentence_after_one_that_ends_without_a_full_stop():
    # ls(1) and gvmap(1): a description often ends without one; running text that wraps before an
    # option is read on, and outside an option list a line opening with a minus is no entry
    text = ("-s, --size\nprint the allocated size of each file, in blocks\n-S sort by file size, largest first\n"
            "−p k Indicates what level of points should be shown, 3:random/artificial points\n"
            "−Q Use modularity quality for clustering rather than the default modularity clustering.\n"
            "To lay it out again, use the\n−K option to name another layout engine.\n")
    assert sentences_of(text) == [
        "-s, --size\nprint the allocated size of each file, in blocks", "-S sort by file size, largest first",
        "−p k Indicates what level of points should be shown, 3:random/artificial points",
        "−Q Use modularity quality for clustering rather than the default modularity clustering.",
        "To lay it out again, use the\n−K option to name another layout engine."]
    formula = "Thus the product is a times\n−c d when both are\n−b and so on.\n"
    assert len(sentences_of(formula)) == 1


def test_a_shell_command_s_continued_line_is_no_option_entry():
    # eval/small's Okular tip: the command's second line opens with an option and a capital
    text = ("From a console command line, use the following command to turn antialiasing off:\n"
            "$ kwriteconfig --file okularpartrc --group 'Dlg Performance' \\\n--key GraphicsAntialias Disabled\n"
            "Then restart Okular.\n")
    assert sentences_of(text)[-1] == "Then restart Okular."
    assert not any(s.startswith("--key") for s in sentences_of(text))


def test_the_option_channel_finds_the_units_that_hold_the_option_s_entry():
    """query/literal.option_channel, over a table of units as DuckDB holds them: the entry's units,
    scored alike, within a restriction too; a mention or another option's entry is not one."""
    import duckdb

    from provrag.query.literal import option_channel

    con = duckdb.connect()
    con.execute("CREATE TABLE text_units (id VARCHAR, text VARCHAR)")
    con.executemany("INSERT INTO text_units VALUES (?, ?)", [
        ["tar-11", "Compression options\n-j, --bzip2\nFilter the archive through bzip2(1).\n-z, --gzip, --gunzip\n"],
        ["dot-7", "The following options\n\u2212Klayout override the default layout engine.\n"],
        ["prose", "Use tar -z to compress, or -j for bzip2."],
        ["gvmap", "\u2212color_scheme=c specifies the color scheme.\n"],
        ["pg_dump", "- dbname\n    - Specifies the name of the database.\n- -a\n--data-only\n    - Dump only the data.\n"]])
    scores, seen = option_channel(con, "What does the -z option of tar do?")
    assert set(scores) == {"tar-11"} and seen == {"option": "-z", "units": 1}
    # scored as a term one of the table's five units holds; within a restriction, one of its two
    assert scores["tar-11"] == pytest.approx(math.log(1 + (5 - 1 + 0.5) / 1.5))
    restricted = option_channel(con, "What does the -z option of tar do?", unit_ids=["tar-11", "prose"])[0]
    assert restricted["tar-11"] == pytest.approx(math.log(1 + (2 - 1 + 0.5) / 1.5))
    assert set(option_channel(con, "What does the -K option of dot do?")[0]) == {"dot-7"}
    assert option_channel(con, "What does the -c option of gvmap do?")[0] == {}
    assert set(option_channel(con, "What does --gunzip do?", unit_ids=["tar-11", "prose"])[0]) == {"tar-11"}
    assert option_channel(con, "What does --gunzip do?", unit_ids=["prose"])[0] == {}
    assert set(option_channel(con, "What does the -a option of pg_dump do?")[0]) == {"pg_dump"}
    assert option_channel(con, "What is tar?") == ({}, {})


@pytest.mark.parametrize("question, only_what", [
    ("What does the -K option of dot do?", True),
    ("What is the -v flag of bc for?", True),
    ("What does gvgen -k generate?", True),
    ("What does the -n flag of gvpr turn off?", True),
    ("What does valgrind's --leak-check=full do?", True),
    ("What is -v for?", True),
    # a fact about the option, which its entry seldom states
    ("What is the default scale factor of dot's -s option?", False),
    ("Which version of cscope added the -q option?", False),
    ("What is the highest resolution tesseract's --dpi option accepts?", False),
    ("Which option of gc counts connected components?", False),
    # more than the option and one program's name
    ("What does the --license option of a GNU program print?", False),
    ("What does the -a and -b option of ls do?", False),
    ("What does the dog do?", False),
])
def test_a_question_that_asks_only_what_an_option_does(question, only_what):
    assert asks_what_option_does(question) is only_what
