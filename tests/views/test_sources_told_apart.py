"""Sources a reader can tell apart in the terminal: where two documents share a title, a source
names its file ("notes (b/notes.txt)"), in `ask`, `verify` and `--json` alike (the one naming
rule, store/units.document_name); and an answer whose sentences cite the same ids shows the
citation block once, after the last of them (views/citing.py).

A real index of two notes files of the same name in two folders (so of the same title) and one
file whose title no other document has."""
from __future__ import annotations

import pytest
from rich.console import Console

PUMP = ("The Halcyon pump station was commissioned in 2019 after two years of building.\n\n"
        "The Halcyon pump station supplies drinking water to the northern district of the city. The pump station "
        "has three pumps built by Ferro Works, each able to move 400 litres a second.\n")
ARCHIVE = ("The archive reading room opens at nine in the morning and closes at five.\n\n"
           "Visitors to the reading room must register at the front desk and may not bring ink pens.\n")
SPEECH = "The lighthouse keeper rows to the mainland every Thursday to collect letters and lamp oil.\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    root = tmp_path_factory.mktemp("titles")
    docs = root / "docs"
    for sub, text in (("a", PUMP), ("b", ARCHIVE)):
        (docs / sub).mkdir(parents=True)
        (docs / sub / "notes.txt").write_text(text, encoding="utf-8")
    (docs / "lighthouse.txt").write_text(SPEECH, encoding="utf-8")
    run_index(docs, root / "idx", load_config())
    return root / "idx"


def rendered(renderable) -> str:
    console = Console(width=140, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def ask(index, question, monkeypatch, tmp_path):
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    return run_ask(question, index, load_config())


def test_sources_of_documents_sharing_a_title_name_their_file(index, monkeypatch, tmp_path):
    from provrag.views.ask import ask_view

    res = ask(index, "When does the archive reading room open?", monkeypatch, tmp_path)
    assert res.sources and res.sources[0].document == "notes (b/notes.txt)"
    assert res.to_json()["sources"][0]["document"] == "notes (b/notes.txt)"
    assert "notes (b/notes.txt)" in rendered(ask_view(res))
    alone = ask(index, "When does the lighthouse keeper row to the mainland?", monkeypatch, tmp_path)
    assert alone.sources[0].document == "lighthouse"          # a title no other document has stays bare


def test_verify_names_the_file_too(index, monkeypatch, tmp_path):
    from provrag.config import load_config
    from provrag.pipelines.verify import run_verify
    from provrag.views.verify import verify_view

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    res = run_verify(index, load_config(), answer="The pump station supplies drinking water to the northern district.")
    assert res.claims[0].evidence[0].document == "notes (a/notes.txt)"
    assert "notes (a/notes.txt)" in rendered(verify_view(res))


def test_a_block_cited_by_consecutive_sentences_is_shown_once(index, monkeypatch, tmp_path):
    from provrag.query.citations import parse_citations
    from provrag.views.ask import ask_view
    from provrag.views.citing import collapse_repeats

    res = ask(index, "What does the Halcyon pump station supply and when was it commissioned?", monkeypatch, tmp_path)
    blocks = parse_citations(res.answer).blocks
    assert len(blocks) >= 2 and len({b.text for b in blocks}) == 1      # every sentence cites the same ids
    shown = collapse_repeats(res.answer)
    assert len(parse_citations(shown).blocks) == 1 and shown.endswith(blocks[-1].text)
    for b in blocks:                                                    # the sentences all stay
        assert b.sentence in " ".join(shown.split())
    text = " ".join(rendered(ask_view(res)).split())
    assert text.count("Sources (0)") == 1
