"""bench/qa_sets.py and the data of eval/: the folders check_qa.py measures must be what they
claim to be, or its abstention figures mean nothing.

- squad-half: the two folds index disjoint halves; every answerable question's document is in
  the fold's corpus/, every unanswerable question's document is not.
- eval/manuals and eval/small-holdout: every line parses with check_qa.py's fields, every page
  exists in its document, every gold answer and evidence sentence is on the pages given, and
  no term an unanswerable question or unsupported claim was checked against occurs anywhere in
  the corpus (read here independently of provrag: pypdfium2 page texts, DOCX/HTML/TXT text).
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from bench import qa_sets

EVAL = Path(qa_sets.__file__).resolve().parents[1] / "eval"
LABELS = {"supported", "contradicted", "unsupported"}


def norm(text: str) -> str:
    """check_qa.py's normalisation (lower-case alphanumerics, single spaces)."""
    return " ".join("".join(ch.lower() if ch.isalnum() else " " for ch in text).split())


def document_pages(path: Path) -> list[str]:
    """A PDF's text per physical page; one 'page' holding the whole text for a page-less format."""
    if path.suffix == ".pdf":
        import pypdfium2

        pdf = pypdfium2.PdfDocument(str(path))
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    if path.suffix == ".docx":
        xml = zipfile.ZipFile(path).read("word/document.xml").decode()
        return [html.unescape(re.sub(r"<[^>]+>", "", xml.replace("</w:p>", "\n")))]
    text = path.read_text(errors="replace")
    if path.suffix in (".html", ".htm"):
        text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(script|style).*?</\1>", " ", text)))
    return [text]


def pdf_page_count(path: Path) -> int:
    import pypdfium2

    return len(pypdfium2.PdfDocument(str(path)))


# ---- squad-half ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def squad_half(tmp_path_factory, squad) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("qa-sets")
    return {d.name: d for d in qa_sets.build_squad_half(squad, out)}


def test_squad_half_folds_are_disjoint_halves(squad_half, squad):
    corpus = {fold: {p.name for p in (squad_half[f"squad-half-{fold}"] / "corpus").iterdir()} for fold in "AB"}
    everything = {p.name for p in (squad / "corpus").glob("*.pdf")}
    assert corpus["A"] and corpus["B"] and not corpus["A"] & corpus["B"]
    assert corpus["A"] | corpus["B"] == everything
    assert abs(len(corpus["A"]) - len(corpus["B"])) <= 1
    # the fixed rule: sorted names, alternately — the same split on every run, whatever the figures
    assert sorted(everything)[0] in corpus["A"] and sorted(everything)[1] in corpus["B"]


def test_squad_half_questions_follow_their_corpus(squad_half, squad):
    all_ids = {json.loads(line)["id"] for line in (squad / "questions.jsonl").read_text().splitlines() if line.strip()}
    for fold, other in (("A", "B"), ("B", "A")):
        d = squad_half[f"squad-half-{fold}"]
        indexed = {p.name for p in (d / "corpus").iterdir()}
        questions = qa_sets.read_jsonl(d / "questions.jsonl")
        unanswerable = qa_sets.read_jsonl(d / "unanswerable.jsonl")
        assert questions and unanswerable
        for q in questions:
            assert {"id", "question", "document", "pages", "answers"} <= q.keys()
            assert q["document"] in indexed and q["answers"] and q["pages"]
            assert all(1 <= p <= pdf_page_count(d / "corpus" / q["document"]) for p in q["pages"])
        for u in unanswerable:
            assert u["question"] and u["document_not_indexed"] not in indexed
        # every question is in exactly one file of a fold, and a fold's answerable are the other's unanswerable
        ids = [q["id"] for q in questions] + [u["id"] for u in unanswerable]
        assert len(ids) == len(set(ids)) and set(ids) == all_ids
        other_unanswerable = qa_sets.read_jsonl(squad_half[f"squad-half-{other}"] / "unanswerable.jsonl")
        assert {q["id"] for q in questions} == {u["id"] for u in other_unanswerable}


def test_build_never_writes_into_shared(shared):
    with pytest.raises(qa_sets.SetError, match="read-only"):
        qa_sets.build(["small-holdout"], shared / "qa-sets-must-not-exist", shared / "eval" / "dev" / "squad",
                      None, shared / "corpora" / "small")
    assert not (shared / "qa-sets-must-not-exist").exists()


# ---- the written sets of eval/ ---------------------------------------------------------------------

@pytest.fixture(scope="module", params=["manuals", "small-holdout"])
def written_set(request) -> tuple[str, dict[str, list[str]], Path]:
    """(set name, page texts of every document in its corpus by file name, the set's folder)."""
    name = request.param
    corpus = request.getfixturevalue("debian_manuals" if name == "manuals" else "small_corpus")
    texts = {p.name: document_pages(p) for p in corpus.rglob("*") if p.is_file()}
    return name, texts, EVAL / name


def test_written_set_has_check_qa_fields_and_real_pages(written_set):
    name, texts, d = written_set
    questions = qa_sets.read_jsonl(d / "questions.jsonl")
    unanswerable = qa_sets.read_jsonl(d / "unanswerable.jsonl")
    claims = qa_sets.read_jsonl(d / "claims.jsonl")
    assert len(questions) >= 15 and len(unanswerable) >= 15 and len(claims) >= 20
    ids = [x["id"] for x in questions + unanswerable + claims]
    assert len(ids) == len(set(ids))
    for q in questions:
        assert {"id", "question", "document", "pages", "answers"} <= q.keys(), q["id"]
        pages = texts[q["document"]]
        # answerable questions carry physical pages, so only paginated documents (one text per page)
        assert q["pages"] and all(1 <= p <= len(pages) for p in q["pages"]), q["id"]
        for answer in q["answers"]:
            assert norm(answer) and any(norm(answer) in norm(pages[p - 1]) for p in q["pages"]), (q["id"], answer)
    for u in unanswerable:
        assert u["question"].strip(), u["id"]
    assert {c["label"] for c in claims} == LABELS
    for c in claims:
        assert {"id", "claim", "label", "document", "pages"} <= c.keys() and c["label"] in LABELS, c["id"]
        pages = texts[c["document"]]
        assert all(1 <= p <= len(pages) for p in c["pages"]), c["id"]
        if c["label"] != "unsupported":
            where = [pages[p - 1] for p in c["pages"]] or pages
            assert any(norm(c["evidence"]) in norm(t) for t in where), c["id"]


def test_written_set_absent_terms_are_absent(written_set):
    name, texts, d = written_set
    everything = " ".join(" ".join(t.lower().split()) for doc in texts.values() for t in doc)
    checked = [(x["id"], t) for f in ("unanswerable.jsonl", "claims.jsonl") for x in qa_sets.read_jsonl(d / f)
               for t in x.get("checked_absent", [])]
    unanswerable = qa_sets.read_jsonl(d / "unanswerable.jsonl")
    unsupported = [c for c in qa_sets.read_jsonl(d / "claims.jsonl") if c["label"] == "unsupported"]
    assert all(x.get("checked_absent") for x in unanswerable + unsupported)
    present = [(i, t) for i, t in checked
               if re.search(r"(?<![a-z0-9])" + re.escape(t.lower()) + r"(?![a-z0-9])", everything)]
    assert not present


# ---- measuring: check_qa.py through the real CLI on a tiny folder ----------------------------------

def test_measure_parses_check_qa_on_a_real_run(tmp_path, squad):
    """One article indexed, two of its questions, two questions about an article that is not:
    check_qa.py runs the CLI and measure() turns its last line into numbers."""
    first, second = qa_sets.squad_halves(squad)[0][:1], qa_sets.squad_halves(squad)[1][:1]
    rows = qa_sets.read_jsonl(squad / "questions.jsonl")
    d = tmp_path / "tiny"
    qa_sets.copy_corpus(squad / "corpus", d / "corpus", first)
    qa_sets.write_jsonl(d / "questions.jsonl", [
        {k: q[k] for k in ("id", "question", "document", "pages", "answers")} for q in rows if q["document"] in first][:2])
    qa_sets.write_jsonl(d / "unanswerable.jsonl", [
        {"id": q["id"], "question": q["question"]} for q in rows if q["document"] in second][:2])
    provrag = str(Path(sys.executable).parent / "provrag")
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg-data"))  # the asks' traces stay in tmp_path
    res = qa_sets.measure(provrag, d, env=env, timeout=600)
    assert "unavailable" not in res, res
    assert res["questions"]["n"] == 2 and res["unanswerable"]["n"] == 2 and "claims" not in res
    assert 0 <= res["questions"]["gold_page_first"] <= 1 and 0 <= res["unanswerable"]["abstained"] <= 1
    assert res["unreadable_outputs"] == 0 and res["index_seconds"] >= 0
    shutil.rmtree(d)


def test_dev_items_avoid_the_held_out_documents(debian_manuals, small_corpus):
    """Three manuals are byte-identical to held-out documents (R-FAQ, the two Asymptote PDFs): no
    dev item may be written over them, or reading the dev set would be reading the holdout."""
    import hashlib

    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    held_out = {digest(p) for p in small_corpus.glob("*") if p.is_file()}
    used = {x["document"] for f in ("questions.jsonl", "claims.jsonl") for x in qa_sets.read_jsonl(EVAL / "manuals" / f)}
    assert used and not [name for name in used if digest(debian_manuals / name) in held_out]
