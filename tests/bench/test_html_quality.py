"""bench/html_quality.py measures what the index keeps of an HTML page against what the page itself
marks as its content: on ../shared/corpora/small's Sphinx page, the tree before the change
(docling on the page as it came) kept the sidebar and lost nothing of the main content, the
reading now keeps no chrome either; and its questions file names only documents of its page list."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import html_quality

pytestmark = pytest.mark.usefixtures("shared")
BENCH = Path(html_quality.__file__).resolve().parent


def test_page_figures_count_chrome_and_missing_words(small_corpus):
    got = html_quality.page_figures([small_corpus / "debian-developers-reference-scope.html"])
    assert got["pages"] == 1 and got["main_words"] > 200
    assert got["before"]["chrome_words"] > 40 and got["after"]["chrome_words"] == 0
    assert got["before"]["missing_words"] == got["after"]["missing_words"] == 0
    assert got["after"]["kept_words"] == got["main_words"]


def test_questions_name_listed_pages():
    listed = {name for source in json.loads((BENCH / "html_pages.json").read_text())["sources"]
              for name in source["files"]}
    items = [json.loads(x) for x in (BENCH / "html_questions.jsonl").read_text().splitlines() if x.strip()]
    assert len({it["id"] for it in items}) == len(items) == 79
    assert all(it["document"] in listed and it["answers"] for it in items if it["document"] is not None)
