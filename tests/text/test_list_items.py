"""A finished sentence ends where the next line opens a Markdown list item (text/sentences._BOUNDARY),
as docling writes the lists of an HTML or DOCX file: PostgreSQL's "This parameter can only be set at
server start." ran on into the next setting's term and definition ("- port (integer) - The TCP
port the server listens on; 5432 by default."), so a question about the one got the other's
sentence. So does a line that ends with ":" and introduces the list: "Explanation of the default
value: - HIGH - Cipher suites …" answered "What is the default value of ssl_ciphers?". An item's
own lines stay together: a definition list's term and its first sentence are one sentence, as
before. A PDF's "•" bullets are not split (see the comment in sentences.py)."""
from __future__ import annotations

import pytest

from provrag.text.sentences import split_sentences


@pytest.fixture(scope="module")
def connection_page(postgres_pages, parsed_text) -> str:
    return parsed_text(postgres_pages / "runtime-config-connection.html", "html")


def sentences(text: str) -> list[str]:
    return [" ".join(text[a:b].split()) for a, b in split_sentences(text)]


def test_a_sentence_ends_before_the_next_setting_s_item(connection_page):
    said = sentences(connection_page)
    port = next(s for s in said if s.startswith("- port (integer)"))
    assert port.startswith("- port (integer) - The TCP port the server listens on; 5432 by default."), port
    # no sentence runs from one setting's definition into the next one's term line
    assert not [s for s in said if ". - " in s and "(integer) - " in s.split(". - ", 1)[1]], said
    assert any(s.startswith("- max_connections (integer) - Determines the maximum number") for s in said)


def test_a_line_that_ends_with_a_colon_ends_its_sentence_before_the_list_under_it(connection_page):
    said = sentences(connection_page)
    assert "Explanation of the default value:" in said, [s for s in said if "Explanation" in s]
    after = said[said.index("Explanation of the default value:") + 1]
    assert after.startswith("- HIGH - Cipher suites that use ciphers from HIGH group"), after
    # a colon inside a line, before no list, ends nothing
    assert sentences("The default is HIGH:MEDIUM. It is usually right.") == ["The default is HIGH:MEDIUM.",
                                                                           "It is usually right."]
    assert sentences("These are set:\nat start only.") == ["These are set: at start only."]


def test_an_item_opens_a_sentence_after_an_initial_but_an_unfinished_line_runs_on():
    assert sentences("It is set by the owner, J.\n- port (integer)\n    - The TCP port.") == [
        "It is set by the owner, J.", "- port (integer) - The TCP port."]
    assert sentences("It was written by J. Smith in 1990.") == ["It was written by J. Smith in 1990."]
    assert sentences("It is set\n- by default - to four.") == ["It is set - by default - to four."]
    # a PDF's bullets as before
    assert sentences("The distribution comes with these manuals.\n• An Introduction to R.") == [
        "The distribution comes with these manuals. • An Introduction to R."]
