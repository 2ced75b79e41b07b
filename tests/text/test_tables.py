"""Pipe tables read row by row under their header (text/tables.py), over the sample corpus's
contacts table as docling exports it from the operations manual (DOCX), and the cases a
sentence splitter meets in other documents."""
from __future__ import annotations

import pytest

from provrag.text.sentences import split_sentences
from provrag.text.tables import reading_copy, rows_of, table_lines, table_rows


@pytest.fixture(scope="module")
def manual_text(sample_data, parsed_text) -> str:
    return parsed_text(sample_data / "halcyon-operations-manual.docx", "docx")


def test_each_row_of_the_contacts_table_reads_under_its_header(manual_text):
    rows = table_rows(manual_text)
    readings = [r.reading() for r in rows]
    assert "Role: Senior shift operator; Name: Dana Whitlock; Phone: 0555 0123." in readings
    # an empty cell ("-": the control centre has no named contact) is left out, not read as a name
    assert "Role: OVWA control centre; Phone: 0555 0140." in readings
    assert all(r.header == ("Role", "Name", "Phone") for r in rows)
    assert [manual_text[r.start:r.end].strip().startswith("|") for r in rows] == [True] * len(rows)


def test_the_splitter_gives_each_row_a_sentence_and_the_header_none(manual_text):
    sentences = [manual_text[a:b] for a, b in split_sentences(manual_text)]
    rows = [s for s in sentences if s.startswith("|")]
    assert len(rows) == 4 and all("\n" not in s for s in rows)
    assert not any("Role" in s and "Phone" in s for s in rows)          # no header line
    assert not any(set(s) <= set("|- ") for s in sentences)             # no delimiter line
    # the prose before and after the table is split as before
    assert any(s.endswith(".") and "|" not in s for s in sentences)


def test_a_row_cut_from_its_header_by_a_unit_boundary_borrows_it_from_the_unit_before(manual_text):
    lines = manual_text.split("\n")
    at = next(i for i, ln in enumerate(lines) if "Process engineer" in ln)
    previous, text = "\n".join(lines[:at]) + "\n", "\n".join(lines[at:])   # as ask reads a unit's antecedent
    rows = rows_of(text, previous)
    assert rows and min(rows) == 0
    assert rows[0].reading().startswith("Role: Process engineer (until 30 June 2026); Name: Tomasz Kerrigan")


def test_lines_that_merely_open_and_close_with_a_pipe_are_no_table():
    text = "The preamble sets the columns with\n|l|c|r|\nand the body follows. A | B is a pipe."
    assert table_lines(text) == []
    assert split_sentences(text) == split_sentences(text.replace("|l|c|r|", "xlxcxrx"))
    # two rows of the same width without a delimiter: a table that began in the unit before
    assert [k for _, _, k in table_lines("| a | 1 |\n| b | 2 |")] == ["row", "row"]


def test_the_judges_copy_maps_each_row_back_to_the_line_it_quotes(manual_text):
    copy = reading_copy(manual_text)
    i = copy.text.index("Role: Senior shift operator")
    j = copy.text.index("0555 0123.", i) + len("0555 0123.")
    a, b = copy.original_span(i, j)
    assert manual_text[a:b].startswith("| Senior shift operator") and manual_text[a:b].rstrip().endswith("|")
    # prose after the table maps back to itself
    tail = manual_text.rstrip()[-40:]
    k = copy.text.rindex(tail)
    assert manual_text[slice(*copy.original_span(k, k + len(tail)))] == tail
    assert reading_copy("No table here.").text == "No table here."


def test_a_row_is_no_section_title_however_many_words_it_shares(manual_text):
    from provrag.text.sentences import is_heading, is_section_title

    row = next(manual_text[r.start:r.end] for r in table_rows(manual_text) if "Dana Whitlock" in r.cells)
    assert is_heading(row) and not is_section_title(row)   # one short unpunctuated line, but a row
