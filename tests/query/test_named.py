"""A question that names a document is read in it first (query/named.py, issue 26: "a package's
own manual loses to others that mention it"), over four real TeX Live manuals (the pinned
texlive-latex-recommended-doc PDFs of tests/conftest.py; PROVRAG_TEXLIVE: a folder that already
holds them)."""
from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.query.named import named_scope
from provrag.store.reader import reading
from provrag.views.ask import trace_tree


@pytest.mark.parametrize("question,named", [
    ("How do I set the font of a listing with listings?", ["listings.pdf"]),
    # two names said: both documents, neither preferred
    ("What does microtype do with polyglossia?", ["microtype.pdf", "polyglossia.pdf"]),
    # "package" stands in every manual's text (and in "The Listings Package"): it names nothing
    ("Which package draws rules in a table?", None),
    ("How do I draw a rule under only some of the columns of a table?", None),
])
def test_a_name_is_said_by_its_words_rare_in_the_text(four_manuals_index, question, named):
    with reading(four_manuals_index, None) as reader:
        scope = named_scope(reader.con, reader.path, question)
        assert (sorted(scope.documents) if scope else None) == named
        if scope:
            units = reader.con.execute("""SELECT count(*) FROM text_units u JOIN documents d ON u.document_id = d.id
                                          WHERE d.path IN (SELECT unnest(?::VARCHAR[]))""",
                                       [named]).fetchall()[0][0]
            assert len(scope.unit_ids) == units > 0


def test_a_package_s_own_manual_answers_before_another_that_mentions_it(four_manuals_index):
    """Over the whole index, "How do I set the font of a listing with listings?" was answered from
    microtype.pdf (its font configuration files, p. 20), which never speaks of listings. The
    question names listings.pdf: that manual is read first, and answers."""
    res = run_ask("How do I set the font of a listing with listings?", four_manuals_index, load_config(), save=False)
    assert not res.abstained and res.route == "named"
    assert {Path(s.path).name for s in res.sources} == {"listings.pdf"}
    first = res.trace["attempts"][0]
    assert first["route"] == "named" and first["scope"]["documents"] == ["listings.pdf"] and first["kept"]


def test_the_words_that_name_the_manual_tell_none_of_its_sentences_apart(four_manuals_index):
    """Inside microtype.pdf every sentence is about microtype. Scored with "microtype"'s idf over
    the whole index (high: few units of the other manuals hold it), p. 9's "… you could for instance
    temporarily disable font expansion by saying: \\microtypesetup{expansion=false}" led the answer
    to how to enable it, for holding "microtype" and "expansion". The named attempt scores the answer's
    sentences without the terms that named the manual, and leads with p. 5, section 3.1, "Enabling
    the micro-typographic features", whose options turn expansion on."""
    res = run_ask("How do I enable font expansion with microtype?", four_manuals_index, load_config(), save=False)
    first = res.trace["attempts"][0]
    assert first["route"] == "named" and first["scope"]["terms"] == ["microtyp"] and first["kept"]
    assert not res.abstained
    assert (Path(res.sources[0].path).name, res.sources[0].page_start) == ("microtype.pdf", 5)
    assert res.answer.startswith("3.1 Enabling the micro-typographic features")
    assert "disable font expansion by saying" not in res.answer


def test_when_the_named_manual_does_not_answer_the_passages_naming_it_are_read(four_manuals_index):
    """The named attempt comes before the routes an unnamed question takes and spends none of
    their retries: when it abstains, basic search, its wider retry and the section around the
    best page still run, over every passage of the index that names polyglossia (its manual's,
    and the others that say its name: named.naming_units)."""
    from provrag.query.named import naming_units

    question = "Who wrote the Thai hyphenation patterns polyglossia uses?"
    res = run_ask(question, four_manuals_index, load_config(), method="basic", save=False)
    attempts = res.trace["attempts"]
    assert res.abstained and [a["route"] for a in attempts] == ["named", "basic", "wide", "section"]
    with reading(four_manuals_index, None) as reader:
        scope = named_scope(reader.con, reader.path, question)
        naming = naming_units(reader.con, reader.path, scope)
    assert len(naming) > len(scope.unit_ids)
    assert attempts[0]["scope"]["documents"] == ["polyglossia.pdf"]
    assert attempts[1]["scope"] == {"naming": ["polyglossia"], "units": len(naming)}
    assert all(a["abstained"] for a in attempts) and sum(a["kept"] for a in attempts) == 1
    console = Console(width=120, record=True, color_system=None)
    console.print(trace_tree(res.trace))   # `provrag trace ID` names the documents the first attempt read
    assert "1. named (polyglossia.pdf): abstained" in console.export_text()


def test_the_names_are_weighed_once_per_index_content(four_manuals_index, monkeypatch):
    """A server asks many questions of one index: a name's words are stemmed and weighed once,
    and only the names a question's words occur in are weighed at all (a cold ask over 5,544
    documents weighed every name)."""
    from provrag.query import named
    from provrag.query.themes import all_documents

    monkeypatch.setattr(named, "_BOOKS", {})
    calls = []
    real = named.name_terms
    monkeypatch.setattr(named, "name_terms", lambda words: calls.append(1) or real(words))
    with reading(four_manuals_index, None) as reader:
        documents = [d for d in all_documents(reader.con) if d["status"] == "ok"]
        first = named_scope(reader.con, reader.path, "How do I number the lines of a listing with listings?")
        weighed = len(calls)
        again = named_scope(reader.con, reader.path, "How do I number LINES with Listings?")
    assert 2 <= weighed < 2 * len(documents) and len(calls) == weighed     # listings.pdf's two names, then none
    assert first.documents == again.documents == ["listings.pdf"] and first.unit_ids == again.unit_ids


def test_only_names_sharing_a_word_are_weighed_and_the_scope_is_the_same(four_manuals_index):
    """named_scope weighs only the names holding a word of the question (a cold ask over 5,544
    documents weighed every name). Every other name's share is 0, so the named documents are
    those the share of every name picks: checked against all names weighed."""
    from provrag.query import named
    from provrag.query.themes import all_documents, document_names, name_words
    from provrag.store import terms as lexical

    questions = ["HOW DO I BREAK LINES WITH LISTINGS?", "Wie setze ich Listings mit Zeilennummern?", "How do I number the lines of a listing with listings?",
                 "Which languages does polyglossia support?", "How do I letterspace text with microtype?",
                 "How thick is the rule under a table with booktabs?", "What is a package?",
                 "How do I typeset a listing in the microtype manual?"]
    with reading(four_manuals_index, None) as reader:
        documents = [d for d in all_documents(reader.con) if d["status"] == "ok"]
        stats = lexical.ensure_terms(reader.con, reader.path)
        for q in questions:
            got = named_scope(reader.con, reader.path, q)
            # the reference: every document's names weighed, as named_scope did before it weighed lazily
            names = [[named.name_terms(words) for words in document_names(d)] for d in documents]
            idf = lexical.idf_of(reader.con, stats, {t for pair in names for n in pair for _, t in n if t})
            asked = name_words(q)
            shares = [max((named.share(n, asked, idf) for n in pair), default=0.0) for pair in names]
            top = max(shares)
            want = [d for d, s in zip(documents, shares) if s > named.MIN_SHARE and s == top]
            want = None if not want or len(want) == len(documents) else sorted(
                d["path"].rsplit("/", 1)[-1] for d in want)
            assert (got and sorted(got.documents)) == (want or None), q


def test_outside_the_named_manual_only_a_passage_naming_it_answers(four_manuals_index):
    """booktabs.pdf names its author only on its title page, so the named attempt does not answer
    "Who wrote the booktabs package?". The wider routes then read the whole index, and answered with
    listings.pdf's "Carsten Heinz wrote the guides, coded the listings package and wrote some
    language drivers." at 0.89: who wrote another package. Outside the named manual they now read
    only passages that name booktabs (named.naming_units); none of the other three manuals does,
    so the question is declined rather than answered about listings."""
    res = run_ask("Who wrote the booktabs package?", four_manuals_index, load_config(), save=False)
    assert "Carsten Heinz" not in res.answer
    wider = [a for a in res.trace["attempts"] if a.get("route") in ("local", "basic", "wide")]
    assert wider and all(a["scope"].get("naming") == ["booktab"] for a in wider)
    with reading(four_manuals_index, None) as reader:
        for s in res.sources:
            text = reader.con.execute("SELECT text FROM text_units WHERE id = ?", [s.text_unit_id]).fetchall()[0][0]
            assert Path(s.path).name == "booktabs.pdf" or "booktabs" in text.lower()


def test_the_units_that_name_a_manual_are_its_own_and_those_saying_its_name(four_manuals_index):
    from provrag.query.named import naming_units

    with reading(four_manuals_index, None) as reader:
        scope = named_scope(reader.con, reader.path, "What does polyglossia do?")
        units = naming_units(reader.con, reader.path, scope)
        assert units[:len(scope.unit_ids)] == scope.unit_ids
        others = units[len(scope.unit_ids):]
        for uid in others:
            text, path = reader.con.execute("""SELECT u.text, d.path FROM text_units u JOIN documents d
                                               ON u.document_id = d.id WHERE u.id = ?""", [uid]).fetchall()[0]
            assert "polyglossia" in text.lower() and Path(path).name != "polyglossia.pdf"
        assert others, "another manual speaks of polyglossia"
        # "list" (listings.pdf's naming term) is held by more than a quarter of the units: it names
        # no narrower part of the index, and the wider routes read all of it as before
        listings = named_scope(reader.con, reader.path, "How do I set the font of a listing with listings?")
        assert listings.terms == ["list"] and naming_units(reader.con, reader.path, listings) is None
