"""Running heads and feet leave a PDF's pages; its text, and content that repeats at page edges, stay."""
from pathlib import Path

import pytest

from provrag.index.pdf import parse_pdf
from provrag.index.running_heads import head_words, strip_running_lines

SMALL = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "small"
DATA = Path(__file__).resolve().parents[2] / "data"


def book(n: int = 12) -> list[str]:
    """A book whose pages carry a chapter head with the printed page number (physical page + 2)
    and a release line as first line, with content lines between."""
    pages = []
    for p in range(1, n + 1):
        chapter = 1 + (p - 1) // 4
        pages.append(f"Widget Manual, Release 2.1\nChapter {chapter}: Widgets {p + 2}\n"
                     f"Text of page {p} about widgets.\nIt goes on for {p} lines.")
    return pages


def test_a_books_running_heads_leave_its_pages_and_its_text_stays():
    pages = book()
    out, removed, _ = strip_running_lines(pages)
    assert removed == 24
    assert out[4] == "Text of page 5 about widgets.\nIt goes on for 5 lines."
    assert all("Release" not in p and "Chapter" not in p for p in out)


def test_a_chapter_opener_is_text_although_it_repeats_at_page_edges():
    # "Chapter k" opens its chapter's first page: its number does not follow the pages
    pages = [f"Chapter {p // 3 + 1}\nIntroduction to part {p}.\nWhat part {p} holds." if p % 3 == 0
             else f"Body {p}.\nText {p}." for p in range(12)]
    out, removed, _ = strip_running_lines(pages)
    assert removed == 0 and out == pages


def test_a_number_inside_a_line_is_not_a_page_number():
    # MetaPost's examples: "beginfig(24);" on page 32, "beginfig(38);" on 46, "beginfig(40);" on 48
    pages = [f"Prose of page {p}." for p in range(1, 60)]
    for fig, p in ((24, 32), (38, 46), (40, 48)):
        pages[p - 1] = f"beginfig({fig});\ndraw p;\nendfig;"
    out, removed, _ = strip_running_lines(pages)
    assert removed == 0 and out == pages


def test_code_at_the_edge_of_a_fifth_of_the_pages_stays():
    # a TeX manual's examples end at the foot of some pages: not a running line
    pages = [f"Example {p}.\n\\begin{{tikzpicture}}\n\\end{{tikzpicture}}" if p % 4 == 0 else f"Prose {p}.\nAnd {p}."
             for p in range(20)]
    assert strip_running_lines(pages)[:2] == (pages, 0)


def test_a_line_repeated_as_the_first_of_half_the_pages_is_a_running_title():
    pages = [("Acme Guide\n" if p % 2 else "") + f"Prose {p}.\nAnd {p}." for p in range(10)]
    out, removed, _ = strip_running_lines(pages)
    assert removed == 5 and all("Acme" not in p for p in out) and out[1] == "Prose 1.\nAnd 1."


def test_a_page_number_alone_stays_for_the_splitters_to_read_as_the_page_break():
    pages = [f"Prose that runs on about {'abcdefgh'[p - 1]}\nto the end of the page and\n{p}" for p in range(1, 9)]
    assert strip_running_lines(pages)[:2] == (pages, 0)


def test_pages_that_hold_nothing_but_running_lines_are_left_as_they_are():
    # a page number alone is never taken; a numbered head alone on every page would leave no text
    for pages in ([f"Page {p} of 5" for p in range(1, 6)], [f"Acme Guide {p}" for p in range(1, 6)]):
        assert strip_running_lines(pages)[:2] == (pages, 0)


def test_roman_front_matter_numbers_are_page_numbers():
    pages = [f"Preface text {k}.\nSaid {k}.\nGuide page {r}" for k, r in enumerate(["i", "ii", "iii", "iv"], 1)]
    pages += [f"Body text {k}.\nSaid again {k}.\nGuide page {k}" for k in range(1, 5)]
    out, removed, _ = strip_running_lines(pages)
    assert removed == 8 and all("Guide page" not in p for p in out)


@pytest.mark.skipif(not (SMALL / "R-FAQ.pdf").is_file(), reason="../shared/corpora/small is not beside the project")
def test_r_faqs_chapter_heads_leave_what_is_r():
    """R-FAQ.pdf prints "Chapter 2: R Basics 3" above section 2.1 and a page number below; the
    page now opens with its number (a page break to the splitters) and the section's heading."""
    res = parse_pdf(SMALL / "R-FAQ.pdf", "pypdfium2", running_heads=True)
    page = next(p for p in res["pages"] if "R is a system for statistical computation" in p)
    assert page.startswith("3\n2 R Basics\n2.1 What is R?\nR is a system for statistical computation")
    # every chapter's running head goes, the one-page chapters' too ("Chapter 1: Introduction 2")
    assert not any(p.startswith("Chapter ") and p.split("\n")[0][-1].isdigit() for p in res["pages"])
    assert int(res["metadata"]["running_lines"]) >= 30
    raw = parse_pdf(SMALL / "R-FAQ.pdf", "pypdfium2")   # [load] running_heads' default: off
    assert "running_lines" not in raw["metadata"] and any(p.startswith("Chapter 2: R Basics") for p in raw["pages"])


def test_the_sample_handbooks_footer_leaves_its_pages():
    res = parse_pdf(DATA / "halcyon-commissioning-handbook.pdf", "pypdfium2", running_heads=True)
    assert not any("rev C - page 3" in p for p in res["pages"])
    assert any(p.endswith("Dr. Imogen Vale at the Kestrel Point site office.") for p in res["pages"])


@pytest.mark.skipif(not (SMALL / "R-FAQ.pdf").is_file(), reason="../shared/corpora/small is not beside the project")
def test_a_pages_heads_are_kept_as_the_words_they_say_without_their_numbering():
    out, removed, heads = strip_running_lines(book())
    assert removed == 24 and len(heads) == 12
    assert heads[0] == "Widget Manual, Release 2.1 · Chapter 1: Widgets"   # the release's numbers are words here
    assert heads[11] == "Widget Manual, Release 2.1 · Chapter 3: Widgets" and "14" not in heads[11]
    assert head_words(["Debian Reference 48 / 233"]) == "Debian Reference"
    assert head_words(["xiv Contents", "rev C - page 3 of 9"]) == "Contents · rev C"   # "C" is no page's numeral
    assert head_words(["12", "— 4 —"]) == ""   # numbering alone says nothing


def test_the_setting_is_off_by_default_keeps_each_pages_heads_when_on_and_is_part_of_the_parse_cache_key(tmp_path):
    from provrag.config import load_config
    from provrag.index.load import load_folder
    from provrag.store.cache import Cache

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "R-FAQ.pdf").write_bytes((SMALL / "R-FAQ.pdf").read_bytes())
    cache = Cache(tmp_path / "cache")
    off = load_folder(folder, load_config(overrides={"load": {"workers": 1}}), cache)[0]   # the default
    on = load_folder(folder, load_config(overrides={"load": {"workers": 1, "running_heads": True}}), cache)[0]
    assert "Chapter 2: R Basics 5" not in on.text and "Chapter 2: R Basics 5" in off.text
    assert int(on.metadata["running_lines"]) >= 30 and "running_lines" not in off.metadata
    # what the heads said stays, per page, without their page numbers (page 8 opens section 2.3)
    assert len(on.running_heads) == on.n_pages and on.running_heads[7] == "Chapter 2: R Basics"
    assert off.running_heads is None
