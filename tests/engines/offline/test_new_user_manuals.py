"""What a new user met over two manuals no check set holds (the Bash Reference Manual and
gnuplot's, from their pinned Debian packages), each failing before its change:

- "How do I plot columns 1 and 3 of a data file?" was answered "Comparison is case-sensitive.":
  a run of example lines holding a data file's ellipsis row ("... ... ...") passed for a section
  title (text/sentences.is_section_title), and the sentence after it for the section's steps;
- "What is a here document?" was answered from the GNU Free Documentation License ("A
  'Secondary Section' is a named appendix …"): its one term, "document", is the license's word;
  the subject as a phrase finds "3.6.6 Here Documents" (query/literal.subject_pattern);
- "What is the difference between single quotes and double quotes in Bash?" opened with a
  pointer to the history chapter, shown as the context of "There are three quoting mechanisms …":
  an existential "there are" refers to nothing before it (answer/scoring._ANAPHOR).
"""
from __future__ import annotations

import dataclasses
import re

import duckdb
import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask


def ask(index, question: str) -> dict:
    return run_ask(question, index, load_config(), save=False).to_json()


def test_an_ellipsis_row_in_an_example_is_no_section_title(bash_gnuplot_index):
    from provrag.engines.offline.answer.focus import section_steps
    from provrag.text.sentences import is_heading, is_section_title

    question = "How do I plot columns 1 and 3 of a data file?"
    res = ask(bash_gnuplot_index, question)
    assert "Comparison is case-sensitive" not in res["answer"], res["answer"]
    # the gnuplot page itself: its example lines are a heading to is_heading (dot leaders), not a title
    con = duckdb.connect()
    (text,) = con.execute(f"SELECT text FROM '{bash_gnuplot_index}/text_units.parquet' "
                          "WHERE contains(text, 'Comparison is case-sensitive')").fetchone()
    run = text[text.index("For example, if the data file contains"):text.index("The full string must match.")]
    assert is_heading(run) and not is_section_title(run)
    assert section_steps(question, [{"text": text}]) == []


@pytest.mark.parametrize("line, title", [
    ("5.9.4 Orphaning a package", True), ("# Installing", True), ("3.6.6 Here Documents", True),
    ("6.4 What does the stable directory contain? . . . . . . . 22", False),   # a contents line
    ("Height Weight Age\nval1 val1 val1\n... ... ...", False),
    ("This builtin is so complicated that it deserves its own section.", False),
    ("Shall the new role be allowed to create databases? (y/n) n", False)])   # a prompt
def test_a_section_title_is_one_heading_line(line, title):
    from provrag.text.sentences import is_section_title

    assert is_section_title(line) is title


def test_a_subject_of_several_words_is_read_as_a_phrase(bash_gnuplot_index):
    from provrag.query.literal import subject_pattern

    assert re.search(subject_pattern("here document"), "3.6.6 here documents this type of redirection")
    assert re.search(subject_pattern("here document"), "a here document is")
    assert not re.search(subject_pattern("here document"), "where documents are")
    res = ask(bash_gnuplot_index, "What is a here document?")
    assert not res["abstained"]
    assert "Secondary Section" not in res["answer"], res["answer"]
    assert res["sources"][0]["path"] == "bashref.pdf" and res["sources"][0]["page_start"] == 46


def test_there_are_opens_no_reference_to_the_sentence_before(bash_gnuplot_index):
    from provrag.engines.offline.answer.scoring import _ANAPHOR

    assert not _ANAPHOR.match("There are three quoting mechanisms: the escape character, single quotes, and double quotes.")
    assert not _ANAPHOR.match("There is no maximum limit on the size of an array.")
    assert _ANAPHOR.match("There the shell reads the file.") and _ANAPHOR.match("This is the default.")
    # Debian's FAQ: "this" is the sentence before's goal
    assert _ANAPHOR.match("There are several ways to achieve this, which include: • Improve programs' security …")
    res = ask(bash_gnuplot_index, "What is the difference between single quotes and double quotes in Bash?")
    assert not res["answer"].startswith("See Section"), res["answer"]


def test_a_pointer_elsewhere_never_answers(monkeypatch):
    """Read as answering at 0.99, "See Section 9.1 … for more details" still states nothing."""
    from provrag.engines.offline.answer import reading

    pointer = "See Section 9.1 [Bash History Facilities], page 152, for more details concerning history expansion."
    statement = "Enclosing characters in single quotes preserves the literal value of each character within the quotes."
    records = [{"text": f"{pointer}\n{statement}", "citation": "[Data: Sources (1)]"}]

    class Reader:   # reads the pointer as answering more surely than the statement
        def passage_scores(self, question, passages):
            return [0.9 for _ in passages]

        def answer_probs(self, question, sentences, contexts=None):
            return [0.99 if s.startswith("See") else 0.9 for s in sentences]

    monkeypatch.setattr(reading, "meaning_scores", lambda question, cands, cfg, weights, info: [0.0] * len(cands))
    cfg = load_config()   # the reader's own probability decides
    cfg = dataclasses.replace(cfg, search=dataclasses.replace(cfg.search, reader_weights={"answer": 1.0, "scale": 1.0}))
    picked, _ = reading.read("What do single quotes do?", records, cfg, Reader())
    assert [p["sentence"] for p in picked] == [statement]


def test_a_further_sentence_of_settings_is_not_added(monkeypatch):
    """"What is gnuplot?" was answered with its definition, then an X resources listing the reader
    read as answering too ("Note that the default background is black. gnuplot*background: black
    gnuplot*textGray: white …"). A further sentence must read as prose (report.reads_as_prose)."""
    from provrag.engines.offline.answer import reading
    from provrag.engines.offline.report import reads_as_prose

    lead = "Gnuplot is a portable command-line driven graphing utility for Linux and many other platforms."
    settings = ("Note that the default background is black. gnuplot*background: black gnuplot*textGray: white "
                "gnuplot*borderGray: gray50 gnuplot*axisGray: gray50 gnuplot*line1Gray: gray100")
    prose = "Gnuplot supports many types of plots in either 2D and 3D."
    assert reads_as_prose(lead) and reads_as_prose(prose) and not reads_as_prose(settings)
    records = [{"text": lead, "citation": "[Data: Sources (1)]"}, {"text": settings, "citation": "[Data: Sources (2)]"},
               {"text": prose, "citation": "[Data: Sources (3)]"}]

    class Reader:   # reads all three as answering, the settings more surely than the third
        def passage_scores(self, question, passages):
            return [0.9 for _ in passages]

        def answer_probs(self, question, sentences, contexts=None):
            return [{lead: 0.99, settings: 0.95}.get(s, 0.9) for s in sentences]

    monkeypatch.setattr(reading, "meaning_scores", lambda question, cands, cfg, weights, info: [0.0] * len(cands))
    cfg = load_config()
    cfg = dataclasses.replace(cfg, search=dataclasses.replace(cfg.search, reader_weights={"answer": 1.0, "scale": 1.0}))
    picked, _ = reading.read("What is gnuplot?", records, cfg, Reader())
    assert [p["sentence"] for p in picked] == [lead, prose]


def test_a_prompt_in_a_terminal_session_is_no_section_title():
    """PostgreSQL 15's createuser page (postgresql-doc-15, app-createuser.html): its example session's
    prompt named every word of "How do I create a new database?", and the prompts after it were
    given as the steps, over the reader's own lead ("CREATE DATABASE creates a new PostgreSQL
    database.", read at 0.71)."""
    from provrag.engines.offline.answer.focus import section_steps

    session = ("To create a user joe on the default database server with prompting for some additional "
               "attributes:\n\n$ createuser --interactive joe\nShall the new role be a superuser? (y/n) n\n"
               "Shall the new role be allowed to create databases? (y/n) n\n"
               "Shall the new role be allowed to create more new roles? (y/n) n\n")
    assert section_steps("How do I create a new database?", [{"text": session}]) == []
    titled = "Creating a Database\nTo create a new database, in this example named mydb, you use the command createdb mydb.\n"
    assert section_steps("How do I create a database?", [{"text": titled}])[0]["sentence"].startswith("To create a new database")
