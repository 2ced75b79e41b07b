"""A table in a document is read row by row under its header (text/tables.py), by ask and by
verify, over the sample corpus's contacts table (the operations manual, a DOCX). Before:
- "What is Helga Marsh's role?" was answered with the whole table, every row of it;
- "What is Dana Whitlock's phone number?" with a maintenance ticket she opened, at 0.60;
- the source quoted for each was the whole table;
- verify found "Dana Whitlock's phone number is 0555 0101." supported: 0555 0101 stands in the
  table, on Helga Marsh's row.
"""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.pipelines.verify import run_verify


def ask(index, question: str) -> dict:
    return run_ask(question, index, load_config(), save=False).to_json()


@pytest.mark.parametrize("question, row, others", [
    ("What is Helga Marsh's role?", "Role: Operations manager; Name: Helga Marsh; Phone: 0555 0101.",
     ["Tomasz Kerrigan", "0555 0123", "0555 0140"]),
    ("What is Dana Whitlock's phone number?", "Role: Senior shift operator; Name: Dana Whitlock; Phone: 0555 0123.",
     ["0555 0101", "0555 0177", "Ticket T-07002"]),
    ("What is the phone number of the OVWA control centre?", "Role: OVWA control centre; Phone: 0555 0140.",
     ["0555 0101", "0555 0123", "0555 0177"]),
])
def test_a_question_on_one_row_is_answered_by_that_row_alone(sample_index, question, row, others):
    res = ask(sample_index, question)
    assert not res["abstained"], res
    assert re.sub(r"\s*\[Data: [^\]]*\]", "", res["answer"]).startswith(row), res["answer"]
    assert not [o for o in others if o in res["answer"]], res["answer"]
    first = res["sources"][0]
    assert first["path"] == "halcyon-operations-manual.docx"
    # its quote is the row as the document has it, not the table around it
    cells = [c.split(": ", 1)[1] for c in row.rstrip(".").split("; ")]
    assert first["quote"].startswith("|") and "\n" not in first["quote"], first["quote"]
    assert [c for c in cells if c not in first["quote"]] == [] and not [o for o in others if o in first["quote"]]


def test_a_value_swapped_between_two_rows_is_contradicted_and_the_right_one_supported(sample_index):
    cfg = load_config()
    wrong = run_verify(sample_index, cfg, answer="Dana Whitlock's phone number is 0555 0101.", save=False).to_json()
    right = run_verify(sample_index, cfg, answer="Dana Whitlock's phone number is 0555 0123.", save=False).to_json()
    assert wrong["claims"][0]["verdict"] == "contradicted", wrong["claims"][0]
    assert right["claims"][0]["verdict"] == "supported", right["claims"][0]
    # the evidence quotes the row as the document has it, cells and pipes
    quote = right["claims"][0]["evidence"][0]["quote"]
    assert quote.startswith("| Senior shift operator") and "0555 0123" in quote and "Helga" not in quote
