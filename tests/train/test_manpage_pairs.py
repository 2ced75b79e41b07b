"""train/manpage_pairs.py reads Debian's manual pages (pinned .debs, rendered with groff) into option
answer pairs: "What does the -k option of gzip do?" → gzip(1)'s -k line, the page's other lines as
negatives; an option the page lacks → no positive at all.

The packages are fetched once per module with apt-get download (checked by sha256), as `make train`
does; PROVRAG_TRAIN_DEBS may name a folder already holding the .deb files.
"""
from __future__ import annotations

import random
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "train"))
import manpage_pairs  # noqa: E402
import prepare  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("groff") is None, reason="the pages are rendered with groff (groff-base)")
PACKAGES = ("gzip", "bzip2")  # two small packages: ten pages, a few dozen options
PINS = {p: manpage_pairs.MANPAGE_DEBS[p] for p in PACKAGES}


@pytest.fixture(scope="module")
def pages(debs):
    return debs(*PACKAGES, pins=PINS)


def test_a_page_reads_into_its_name_synopsis_and_option_entries(pages):
    roots, _, _ = pages
    name, synopsis, entries = manpage_pairs.parse(manpage_pairs.render(roots["gzip"] / "usr/share/man/man1/gzip.1.gz"))
    assert name == "gzip, gunzip, zcat - compress or expand files"
    assert synopsis.startswith("gzip [ -acdfhklLnNrtvV19 ]")
    by_tag = {e["tag"]: e for e in entries}
    keep = by_tag["-k --keep"]
    assert keep["options"] == ["-k", "--keep"] and keep["section"] == "OPTIONS"
    assert keep["description"] == "Keep (don't delete) input files during compression or decompression."
    assert keep["before"]["tag"] == "-h --help"  # the entry above it, read as its context
    assert by_tag["-S .suf --suffix .suf"]["options"] == ["-S", "--suffix"]  # the argument is no option
    # "-d --decompress  Decompress." says too little to be asked about (fewer than three words)
    assert not any("-d" in e["options"] for e in entries)


def test_each_option_question_has_its_line_as_the_one_positive(pages):
    _, cache, given = pages
    counts = Counter()
    rows = manpage_pairs.manpage_pairs(random.Random(1729), counts, cache, given, prepare.split_of, prepare.pick_hard,
                                       packages=PINS)
    by_q: dict[str, list[dict]] = {}
    for r in rows:
        by_q.setdefault(r["qid"], []).append(r)
    assert {r["source"] for r in rows} == {"manpages"} and {r["task"] for r in rows} == {"answer"}
    assert counts["manpages option questions " + prepare.split_of("manpages/gzip")] > 0
    for members in by_q.values():
        assert len({r["split"] for r in members}) == 1 and len({r["a"] for r in members}) == 1
        positives = [r for r in members if r["label"] == 1]
        if members[0]["kind"] == "a line of a page without the option":
            assert positives == []  # an option the page lacks: nothing on the page answers
            continue
        assert len(positives) == 1
        positive = positives[0]
        assert all(r["b"] != positive["b"] for r in members if r["label"] == 0)
        if "option" in positive["kind"]:
            asked = next(w.rstrip("?") for w in positive["a"].split() if w.startswith("-"))
            shown = positive["b"].replace(manpage_pairs.MINUS, "-")
            assert asked in manpage_pairs.OPTION.findall(" " + shown.split(":")[0] + " ")  # the asked option's own line
    kinds = Counter(r["kind"] for r in rows)
    assert kinds["the option's line"] and kinds["another option's line"] and kinds["a line of a page without the option"]


@pytest.mark.parametrize("description, phrase", [
    ("Print the author of each file.", "print the author of each file"),
    ("Prints the version number and exits.", "print the version number and exits"),
    ("Forces compression even if the file has links", "force compression even if the file has links"),
    ("When compressing, use suffix .suf instead of .gz.", None),   # no verb first: no "how do I"
    ("Print it.", None),                                           # too short to ask about
])
def test_a_description_becomes_a_how_do_i_phrase_only_when_it_opens_with_what_the_option_does(description, phrase):
    assert manpage_pairs.how_phrase(description) == phrase


def test_lines_as_a_pdf_prints_them_and_programs_as_typed():
    assert manpage_pairs.as_printed("-k, --keep keep non-zero files") == "\u2212k, \u2212\u2212keep keep non-zero files"
    assert manpage_pairs.shown("-k --keep Keep input files.", "-k --keep", pdf=False) == "-k --keep: Keep input files."
    assert manpage_pairs.program(Path("git-commit.1.gz"), "git-commit - Record changes") == "git commit"
    assert manpage_pairs.program(Path("gzip.1.gz"), "gzip, gunzip, zcat - compress") == "gzip"
