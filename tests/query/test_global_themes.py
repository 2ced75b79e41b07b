"""Global questions answered in themes (query/themes.py, index/sections.py, global_search.theme_search),
over real documents: ../shared/corpora/small (R FAQ and two Asymptote manuals as PDF, Lincoln's
1863 message as text, a DOCX and an HTML page) and the unreadable files of ../shared/corpora/bad."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from provrag.config import load_config

pytestmark = pytest.mark.usefixtures("shared")

THEMES = "What are the main themes of these documents?"


@pytest.fixture(scope="module")
def with_failures(tmp_path_factory, small_corpus, bad_corpus) -> Path:
    """Two good documents beside an encrypted and a truncated PDF, indexed."""
    from provrag.pipelines.index import run_index

    docs = tmp_path_factory.mktemp("with-failures") / "docs"
    docs.mkdir()
    for src in (small_corpus / "R-FAQ.pdf", small_corpus / "sotu-1863-lincoln.txt",
                bad_corpus / "encrypted.pdf", bad_corpus / "truncated.pdf"):
        shutil.copyfile(src, docs / src.name)
    out = docs.parent / "idx"
    run_index(docs, out, load_config())
    return out


def _ask(index, question, method=None):
    from provrag.pipelines.ask import run_ask

    return run_ask(question, index, load_config(), method=method, save=False)


def _ok_paths(index) -> set[str]:
    from provrag.store.reader import open_index

    with open_index(index) as r:
        return {p for (p,) in r.con.execute("SELECT path FROM documents WHERE status = 'ok'").fetchall()}


def test_main_themes_of_the_folder_name_every_document_in_cited_themes(small_index):
    out = _ask(small_index, THEMES)
    assert out.method == "global" and not out.abstained
    assert len(out.answer.split()) <= 350
    # every document the folder holds is cited (a page or passage of its own), none left out
    assert {s.path for s in out.sources} >= _ok_paths(small_index) and len(_ok_paths(small_index)) == 6
    # in themes: each line names its theme in bold, and cites each document by the report of
    # that theme and one of the report's units (which resolves to that unit's page alone)
    lines = [x[2:] for x in out.answer.splitlines() if x.startswith("- **")]
    assert len(lines) >= 3
    themed = [x for x in lines if not x.startswith("**other documents**")]
    for x in themed:
        assert re.match(r"\*\*[^*]+\*\*: ", x), x
        reports = set(re.findall(r"\[Data: Reports \((\d+)\); Sources \(\d+\)\]", x))
        assert len(reports) == 1 and x.count("[Data:") == len(re.findall(r"Reports \(", x)), x
    assert len(out.sources) == sum(1 for c in out.citations if c.kind == "Sources")  # a page per document cited
    assert out.unresolved == []


def test_a_question_about_one_document_stays_in_it_and_names_its_chapters(small_index):
    out = _ask(small_index, "What are the main topics covered in the R FAQ?")
    assert out.method == "global"
    assert out.sources and {s.path for s in out.sources} == {"R-FAQ.pdf"}
    # the FAQ's own chapters (its PDF outline), each named and cited on a page inside it
    chapters = {"R Basics": (7, 15), "R and Emacs": (30, 31), "R Bugs": (49, 51), "R Add-On Packages": (25, 29)}
    for name, (first, last) in chapters.items():
        line = next((x for x in out.answer.splitlines() if f"**{name}**" in x or f"{name} [Data:" in x), None)
        assert line is not None, name
        cited = [s for s in out.sources if s.sentence_index is not None and s.quote
                 and any(c.sentence_index == s.sentence_index and name in c.sentence for c in out.citations)]
        assert cited and all(first <= s.page_start <= last + 1 for s in cited), (name, [s.page_start for s in cited])
    assert len(out.answer.split()) <= 350


def test_a_text_without_headings_is_told_by_the_parts_its_topic_shifts_into(small_index):
    out = _ask(small_index, "What are the main themes of Lincoln's message?")
    assert out.method == "global" and {s.path for s in out.sources} == {"sotu-1863-lincoln.txt"}
    lines = [x[2:] for x in out.answer.splitlines() if x.startswith("- **")]
    assert len(lines) >= 2 and any("emancipation" in x.split("**")[1] for x in lines)  # named by key phrases


def test_a_folder_question_says_which_files_could_not_be_read(with_failures):
    out = _ask(with_failures, "What is this collection of documents about?")
    assert out.method == "global"
    assert {s.path for s in out.sources} >= {"R-FAQ.pdf", "sotu-1863-lincoln.txt"}
    said = out.answer.split("Could not be read:", 1)
    assert len(said) == 2, out.answer
    assert "encrypted.pdf (encrypted PDF)" in said[1] and "truncated.pdf" in said[1]
    # a question about the unreadable file itself says so, and cites nothing
    one = _ask(with_failures, "What are the main topics covered in encrypted?")
    assert one.abstained and "encrypted.pdf could not be read" in one.answer and one.citations == []
    assert one.attempts == 1 and one.stopped.startswith("the document asked about could not be read")


@pytest.mark.parametrize("question,method", [
    (THEMES, "global"),
    ("What is this collection of documents about?", "global"),
    ("What are the main topics covered in the R FAQ?", "global"),
    ("What are the main themes of Lincoln's message?", "global"),
    # worded broadly, but about a subject a paragraph answers
    ("Summarize what the President said about the foreign relations of the country", None),
    ("What did the President say about the foreign relations of the country?", None),
    ("Give an overview of how R handles environments of functions", None),
])
def test_auto_sends_broad_questions_to_global_and_subjects_elsewhere(small_index, question, method):
    from provrag.query.search import choose_method
    from provrag.store.reader import open_index

    with open_index(small_index) as r:
        chosen, why = choose_method(r, question, load_config())
    assert (chosen == "global") == (method == "global"), why
    if method is None and "overview" in question.lower() or "ummarize" in question:
        assert "subject" in why


def test_sections_follow_the_outline_or_the_shifts_of_topic(small_index):
    import polars as pl

    sections = pl.read_parquet(small_index / "sections.parquet")
    docs = dict(pl.read_parquet(small_index / "documents.parquet").select("id", "path").rows())
    faq = sections.filter((pl.col("document_id").replace_strict(docs, default="") == "R-FAQ.pdf") & (pl.col("level") == 0))
    assert faq["origin"].to_list().count("outline") == 9 and faq["title"][0] == "1 Introduction"
    emacs = faq.filter(pl.col("title") == "6 R and Emacs").row(0, named=True)
    assert (emacs["page_start"], emacs["page_end"]) == (30, 31) and "emacs" in emacs["key_phrases"]
    assert faq.filter(pl.col("title") == "10 Acknowledgments")["origin"].to_list() == ["apparatus"]
    lincoln = sections.filter(pl.col("document_id").replace_strict(docs, default="") == "sotu-1863-lincoln.txt")
    assert lincoln.height >= 2 and set(lincoln["origin"]) == {"segments"}
    assert any("emancipation" in t for t in lincoln["title"])  # named by its key phrases


def test_reports_say_what_a_community_is_about(small_index):
    import polars as pl

    reports = pl.read_parquet(small_index / "community_reports.parquet")
    top = reports.filter(pl.col("level") == 0).sort("rank", descending=True).row(0, named=True)
    assert "This community is about" in top["summary"] and "text units" in top["summary"]
    assert "√" in top["rating_explanation"]
    # findings name the document parts (sub-themes) they quote
    parts = [f["summary"] for f in top["findings"] if " › " in f["summary"]]
    assert parts and all(re.search(r"\[Data: Sources \(\d+", f["explanation"]) for f in top["findings"])
    # the rating grows with the share of the corpus a community covers
    sizes = pl.read_parquet(small_index / "communities.parquet").select("community", pl.col("text_unit_ids").list.len())
    ranked = reports.join(sizes, on="community").sort("text_unit_ids")
    assert ranked["rank"].to_list() == sorted(ranked["rank"].to_list())


def test_a_report_cited_with_its_own_unit_resolves_to_that_unit(small_index):
    from provrag.query.resolve import resolve_answer
    from provrag.store.reader import open_index

    with open_index(small_index) as r:
        community, unit = r.con.execute("""
            SELECT c.community, t.human_readable_id FROM communities c, unnest(c.text_unit_ids) AS u(uid)
            JOIN text_units t ON t.id = u.uid WHERE len(c.text_unit_ids) >= 5 ORDER BY c.community LIMIT 1""").fetchone()
        text = r.con.execute("SELECT text FROM text_units WHERE human_readable_id = ?", [unit]).fetchone()[0]
        sentence = " ".join(text.split()[:20])
        both = resolve_answer(r, f"{sentence} [Data: Reports ({community}); Sources ({unit})]")
        alone = resolve_answer(r, f"{sentence} [Data: Reports ({community})]")
    assert [s.text_unit_id for s in both.sources] and {s.via.split(" → ")[0] for s in both.sources} == {f"Report {community}"}
    assert len(both.sources) == 1 and len(alone.sources) > 1


def test_with_a_model_the_theme_records_go_through_map_and_reduce(tmp_path, small_corpus, scripted_llm_server,
                                                                  monkeypatch):
    """The `openai` engine writes the reports and the theme answer (tests/llm_server.py: a
    scripted model); when its answer cites no theme, the offline engine's themes are the floor."""
    from provrag.pipelines.ask import run_ask
    from provrag.pipelines.index import run_index

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("R-FAQ.pdf", "sotu-1863-lincoln.txt"):
        shutil.copyfile(small_corpus / name, docs / name)
    monkeypatch.setenv("PROVRAG_TEST_KEY", "x")
    cfg = load_config(None, {"llm": {"engine": "openai", "base_url": scripted_llm_server.url, "model": "scripted",
                                     "api_key_env": "PROVRAG_TEST_KEY", "backoff_seconds": 0.01}})
    run_index(docs, tmp_path / "idx", cfg)
    before = scripted_llm_server.stats()
    out = run_ask(THEMES, tmp_path / "idx", cfg, save=False)
    after = scripted_llm_server.stats()
    assert out.method == "global" and after != before  # the model was asked (map)
    # the scripted model finds no word of "main themes" in the records: the offline themes answer
    assert {s.path for s in out.sources} == {"R-FAQ.pdf", "sotu-1863-lincoln.txt"}
    assert out.answer.startswith("The 2 documents indexed fall under these themes")
    one = run_ask("What does the R FAQ cover?", tmp_path / "idx", cfg, save=False)
    assert one.method == "global" and one.citations and {s.path for s in one.sources} == {"R-FAQ.pdf"}
