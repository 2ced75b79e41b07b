"""Resolution of real GraphRAG answers against their own indexes, the `provrag resolve`
command, and real pages on a provrag index of ../shared/corpora/small."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from provrag.query import expand as expand_mod
from provrag.query import resolve as resolve_mod
from provrag.query.citations import Ref
from provrag.store.reader import open_index
from provrag.store.units import fetch_units
from provrag.query.resolve import resolve_answer, resolve_each, resolve_refs, seam_text
from provrag.results import Unresolved
from provrag.text.similarity import content_words, fold
from tests.shared_material import DULCE_ANSWERS

pytestmark = pytest.mark.usefixtures("shared")

# (distinct (kind, id) pairs, the ones absent from the index) — counted by hand, see test_citations
EXPECTED = {
    "index-2025-v1/answers/local_search_0.json": (4, set()),
    "index-2025-v1/answers/local_search_1.json": (16, set()),
    "index-2025-v2/answers/drift_search_0.json": (3, set()),
    "index-2025-v2/answers/global_search_with_dynamic_community_selection_0.json": (1, {("Reports", 6)}),
    "index-2026-v3/answers/global_search_0.json": (8, set()),
}


def _stems(text):
    return {fold(w) for w in content_words(text)}


def _load(dulce, name):
    f = dulce / name
    return open_index(f.parent.parent), json.loads(f.read_text())["answer"]


def test_all_five_answers_present():
    assert DULCE_ANSWERS == sorted(EXPECTED)


@pytest.mark.parametrize("name", DULCE_ANSWERS)
def test_real_answers_resolve_against_their_index(dulce, name):
    reader, answer = _load(dulce, name)
    with reader:
        res = resolve_answer(reader, answer, top_k=3)
    n_pairs, absent = EXPECTED[name]
    cited = {(c.kind, i) for c in res.citations for i in c.ids}
    assert len(cited) == n_pairs
    assert {(u.kind, u.id) for u in res.unresolved} == absent
    assert res.problems == [] and res.dead_ends == []
    sentences = {c.sentence_index: c.sentence for c in res.citations}
    by_sentence: dict[int, list] = {}
    for s in res.sources:
        by_sentence.setdefault(s.sentence_index, []).append(s)
    for idx, sentence in sentences.items():
        refs = [c for c in res.citations if c.sentence_index == idx]
        if all((c.kind, i) in absent for c in refs for i in c.ids):
            assert idx not in by_sentence
            continue
        srcs = by_sentence[idx]
        assert 1 <= len(srcs) <= 3
        assert [s.score for s in srcs] == sorted((s.score for s in srcs), reverse=True)
        top = srcs[0]
        # the top-ranked quote shares content words (stemmed) with the sentence that cited it
        assert _stems(top.quote) & _stems(sentence), (sentence, top.quote)
        for s in srcs:
            assert s.document and s.page_start is None and s.page_end is None and s.page_label is None
            assert s.quote
            routes = [p for p in s.via.split("; ") if not p.startswith("+")]
            assert routes and all(p.endswith(f"→ text unit {s.text_unit}") for p in routes)


def test_quote_is_verbatim_from_the_unit_and_via_names_the_route(dulce):
    reader, answer = _load(dulce, "index-2026-v3/answers/global_search_0.json")
    with reader:
        res = resolve_answer(reader, answer)
        texts = dict(reader.con.execute("SELECT id, text FROM text_units").fetchall())
    for s in res.sources:
        assert s.quote in texts[s.text_unit_id]
        assert re.match(r"Report \d+ → community \d+ → text unit \d+", s.via)


def test_v1_audit_entity_0_is_jacob_collier(dulce):
    """The v1 answers were printed by another build: Entities (0) is JACOB COLLIER in these
    tables, so the route and the document must say so (the podcast, not the novella)."""
    reader, answer = _load(dulce, "index-2025-v1/answers/local_search_0.json")
    with reader:
        res = resolve_answer(reader, answer)
    first = [s for s in res.sources if s.sentence_index == 1]
    assert first and all("Entity 0 (JACOB COLLIER)" in s.via for s in first)
    assert all(s.document.startswith("Behind the Tech") for s in first)


def test_old_graphrag_sources_offer_both_numberings(dulce, dulce_v3):
    """GraphRAG < 2.6 numbered Sources by row position (#1871): v2 offers both readings."""
    with open_index(dulce / "index-2025-v2") as r:
        srcs, unres = resolve_refs(r, [Ref("Sources", [0, 5, 9])], "the team descended into Dulce", top_k=10)
        hrids = {s.text_unit for s in srcs}
        vias = " ".join(s.via for s in srcs)
    # v2 units are numbered 1..5 (rows 0..4): 0 exists only as a row position (→ unit 1),
    # 5 only as a human_readable_id, 9 as neither
    assert hrids == {1, 5}
    assert "Source 0 → row 0 (GraphRAG < 2.6 numbering, #1871) → text unit 1" in vias
    assert "Source 5 → text unit 5" in vias
    assert [(u.kind, u.id) for u in unres] == [("Sources", 9)]
    with open_index(dulce_v3) as r:  # v3: human_readable_id only
        srcs, unres = resolve_refs(r, [Ref("Sources", [0, 5])], "the team", top_k=10)
    assert {s.text_unit for s in srcs} == {0} and [(u.kind, u.id) for u in unres] == [("Sources", 5)]


@pytest.mark.parametrize("name", DULCE_ANSWERS)
def test_each_id_resolved_in_one_pass_equals_each_id_alone(dulce, name):
    """verify resolves a claim's citations one id at a time, all in one pass (resolve_each): the
    same sources and unresolved ids as resolving each id on its own."""
    reader, answer = _load(dulce, name)
    with reader:
        res = resolve_answer(reader, answer, top_k=3)
        sentence = res.citations[0].sentence
        refs = [Ref(c.kind, [i]) for c in res.citations for i in c.ids] + [Ref("Entities", [99999])]
        together = resolve_each(reader, refs, sentence, top_k=3)
        alone = [resolve_refs(reader, [ref], sentence, top_k=3) for ref in refs]
    assert together == alone
    assert together[-1] == ([], [Unresolved("Entities", 99999, None, "no such id in entities")])
    n_pairs, absent = EXPECTED[name]
    assert (sum(len(sources) for sources, _ in together) > 0) == (n_pairs > len(absent))


def test_top_k_and_claims_chain(dulce):
    with open_index(dulce / "index-2025-v1") as r:
        srcs, unres = resolve_refs(r, [Ref("Claims", [60, 83, 91, 134, 153, 9999])],
                                   "Hayes isolated an alien signal that resembles human cognition", top_k=2)
    assert len(srcs) == 2 and unres == [Unresolved("Claims", 9999, None, "no such id in covariates")]
    assert all(s.via.startswith("Claim ") for s in srcs)
    assert {"signal", "hayes"} & set(content_words(srcs[0].quote))


def test_large_candidate_sets_are_prefiltered_in_duckdb(monkeypatch, dulce):
    """Above MAX_CANDIDATES, DuckDB keeps the units holding most of the sentence's words."""
    sentence = "Jordan Hayes isolated the alien signal"
    with open_index(dulce / "index-2025-v1") as r:
        full, _ = resolve_refs(r, [Ref("Reports", [3])], sentence, top_k=1)
        monkeypatch.setattr(resolve_mod, "MAX_CANDIDATES", 3)
        cut, _ = resolve_refs(r, [Ref("Reports", [3])], sentence, top_k=1)
    assert full and cut and cut[0].text_unit_id == full[0].text_unit_id


@pytest.mark.parametrize("folder,name", [("index-2025-v1", "local_search_1.json"),
                                         ("index-2025-v2", "drift_search_0.json"),
                                         ("index-2026-v3", "global_search_0.json")])
def test_lookup_tables_of_a_reused_reader_give_the_same_sources(monkeypatch, dulce, folder, name):
    """A reader that resolves again builds in-memory lookup tables (large indexes only;
    forced here): the answer must not change, and the tables must really be used."""
    monkeypatch.setattr(expand_mod, "CACHE_MIN_UNITS", 0)
    answer = json.loads((dulce / folder / "answers" / name).read_text())["answer"]
    with open_index(dulce / folder) as r:
        first = resolve_answer(r, answer)
        assert r.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_prv_%'").fetchone()[0] == 0
        second = resolve_answer(r, answer)
        n = r.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_prv_%'").fetchone()[0]
    assert n == 2
    assert second.sources == first.sources and second.unresolved == first.unresolved


def test_bare_citation_without_sentence(dulce_v3):
    with open_index(dulce_v3) as r:
        res = resolve_answer(r, "[Data: Reports (5, 42)]")
    assert [(u.kind, u.id) for u in res.unresolved] == [("Reports", 42)]
    assert res.sources and all(s.quote for s in res.sources)


# ---- the command --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run_cli(provrag_cli, repo_root):
    """`provrag ARGS` in a subprocess from the repository root: the CompletedProcess."""
    def run(*args, stdin=None):
        return subprocess.run(provrag_cli + list(args), input=stdin, capture_output=True, text=True, timeout=120,
                              cwd=repo_root)
    return run


def test_cli_json_from_stdin_and_file(tmp_path, run_cli, dulce):
    name = "index-2025-v2/answers/global_search_with_dynamic_community_selection_0.json"
    idx = dulce / "index-2025-v2"
    answer = json.loads((dulce / name).read_text())["answer"]
    r = run_cli("resolve", "-", "--index", str(idx), "--json", stdin=answer)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) >= {"answer", "citations", "sources", "unresolved"}
    assert "question" not in out and "trace_id" not in out
    assert {(u["kind"], u["id"]) for u in out["unresolved"]} == {("Reports", 6)}
    # --answer-file takes the fixture's JSON (its "answer" key) or plain text
    r2 = run_cli("resolve", "--answer-file", str(dulce / name), "-i", str(idx), "--json")
    assert r2.returncode == 0 and json.loads(r2.stdout)["citations"] == out["citations"]
    (tmp_path / "a.txt").write_text("Mercer leads [Data: Reports (1); Sources (2)].")
    r3 = run_cli("resolve", "-f", str(tmp_path / "a.txt"), "-i", str(idx), "--json", "--top", "1")
    got = json.loads(r3.stdout)
    assert r3.returncode == 0 and len(got["sources"]) == 1 and got["unresolved"] == []


def test_cli_rich_output_numbers_sentences(run_cli, dulce_v3):
    idx = dulce_v3
    answer = "Dulce Base hides alien technology [Data: Reports (0, 99)]. The squad descends [Data: Sources (2)]."
    r = run_cli("resolve", answer, "--index", str(idx))
    assert r.returncode == 0, r.stderr
    assert "[1]" in r.stdout and "[2]" in r.stdout and "dulce.txt" in r.stdout
    assert "unresolved: Reports 99" in r.stdout
    assert "Report 0" in r.stdout


@pytest.mark.parametrize("args,msg", [
    (["resolve", "x", "--index", "/nonexistent/index"], "no such index folder"),
    (["resolve", "x", "--index", "{repo}/tests"], "not an index folder"),
    (["resolve", "--index", "{v3}"], "exactly one"),
    (["resolve", "x", "--answer-file", "y", "--index", "{v3}"], "exactly one"),
    (["resolve", "x", "--top", "0", "--index", "{v3}"], "--top"),
    (["resolve", "--answer-file", "/nonexistent.txt", "--index", "{v3}"], "cannot read"),
])
def test_cli_bad_input_is_one_line_exit_2(run_cli, repo_root, dulce_v3, args, msg):
    r = run_cli(*[a.replace("{repo}", str(repo_root)).replace("{v3}", str(dulce_v3)) for a in args])
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and msg in lines[0] and "Traceback" not in r.stderr


# ---- a provrag index: real pages ------------------------------------------------------------

def _pdf_words(path: Path, p0: int, p1: int) -> str:
    """Words of physical pages p0..p1, read straight with pypdfium2 (not provrag's loader)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        text = " ".join(pdf[i].get_textpage().get_text_range() for i in range(p0 - 1, p1))
    finally:
        pdf.close()
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_provrag_index_resolves_to_real_pages(small_index, small_corpus):
    with open_index(small_index) as r:
        assert r.kind == "provrag" and r.has_pages
        units = r.con.execute("""
            SELECT t.human_readable_id, t.text, d.path FROM text_units t JOIN documents d ON d.id = t.document_id
            WHERE t.page_start IS NOT NULL AND d.path LIKE '%.pdf' AND t.n_tokens > 80
            ORDER BY t.human_readable_id""").fetchall()
        assert units
        picks = units[:: max(1, len(units) // 6)][:6]
        lines = []
        for hrid, text, _ in picks:
            # a claim made of the unit's longest sentence, cited by its Sources id
            sent = max(re.split(r"(?<=[.!?])\s+", " ".join(text.split())), key=len)[:300]
            lines.append(f"{sent} [Data: Sources ({hrid})].")
        reports = r.con.execute("SELECT community, summary FROM community_reports WHERE summary <> '' LIMIT 2").fetchall()
        for comm, summary in reports:
            lines.append(f"{summary.split('. ')[0]} [Data: Reports ({comm})].")
        res = resolve_answer(r, "\n\n".join(lines), top_k=2)
        doc_text = dict(r.con.execute("SELECT path, text FROM documents").fetchall())
    assert res.unresolved == [] and res.sources
    checked = 0
    for s in res.sources:
        if s.page_start is None:
            continue
        assert 1 <= s.page_start <= s.page_end
        assert s.path and (small_corpus / s.path).exists()
        # the quote is the document's text at the recorded offsets …
        assert doc_text[s.path][s.char_start:s.char_end] == s.quote
        # … and the recorded pages of the PDF hold it
        if s.path.endswith(".pdf"):
            q = " ".join(re.findall(r"[a-z0-9]+", s.quote.lower()))
            assert q and q in _pdf_words(small_corpus / s.path, s.page_start, s.page_end), s
            checked += 1
    assert checked >= 6
    # a Sources citation of a unit's own sentence ranks that unit first, on its pages
    for i, (hrid, _, _) in enumerate(picks, 1):
        top = [s for s in res.sources if s.sentence_index == i][0]
        assert top.text_unit == hrid and top.score > 0.8


# ---- a sentence cut by a page break ----------------------------------------------------------

def test_sentence_across_a_page_break_resolves_to_both_pages(squad_subset_index):
    """A sentence that runs from the foot of one page onto the next is one source over both
    pages, quoted whole; a sentence wholly on one page stays a one-page source."""
    from provrag.text.sentences import FURNITURE

    index = squad_subset_index
    with open_index(index) as r:
        rows = r.con.execute("""
            SELECT t.human_readable_id, t.document_id, t.page_start, t.page_end, t.text FROM text_units t
            WHERE t.page_start IS NOT NULL ORDER BY t.document_id, t.char_start""").fetchall()
        doc_text = dict(r.con.execute("SELECT id, text FROM documents").fetchall())
        seams = []
        for a, b in zip(rows, rows[1:]):
            head, tail = a[4].rstrip(), FURNITURE.sub("", b[4]).lstrip()
            if a[1] == b[1] and b[2] == a[3] + 1 and not re.search(r"[.!?:\"”)]$", head) and tail[:1].islower():
                before = " ".join(re.split(r"(?<=[.!?])\s+", " ".join(head.split()))[-1:])
                after, rest = (re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(tail.split()), maxsplit=2) + ["", ""])[:2]
                seams.append((a, b, f"{before} {after}", rest))
        assert len(seams) >= 5  # the three PDFs have sentences cut by page breaks
        whole = [(a, b, s, resolve_refs(r, [Ref("Sources", [a[0], b[0]])], s, top_k=2)[0][0]) for a, b, s, _ in seams]
        parts = [resolve_refs(r, [Ref("Sources", [a[0], b[0]])], rest, top_k=2)[0][0]
                 for a, b, _, rest in seams if len(rest.split()) >= 8]
    for a, b, sentence, top in whole:
        assert (top.page_start, top.page_end) == (a[3], b[2]), (sentence, top)
        assert doc_text[a[1]][top.char_start:top.char_end] == top.quote
        words = re.findall(r"\w+", top.quote)
        assert sentence.split()[0] in words and sentence.split()[-1].strip(".,;") in words
    assert parts and all(s.page_start == s.page_end for s in parts)
    # the seam text (verify judges claims across page breaks on it too) is the document's text
    with open_index(index) as r:
        a, b = seams[0][0], seams[0][1]
        ids = [x[0] for x in r.con.execute("SELECT id FROM text_units WHERE human_readable_id IN (?, ?) "
                                           "ORDER BY char_start", [a[0], b[0]]).fetchall()]
        rows = fetch_units(r, ids)
    ua, ub = rows[ids[0]], rows[ids[1]]
    text, cut, offset, b_offset = seam_text(ua, ub)
    assert " ".join(text.split()) == " ".join(doc_text[a[1]][offset:offset + len(text)].split())
    assert doc_text[a[1]][b_offset:b_offset + 20] == text[cut:cut + 20]
    assert seam_text(ub, ua) is None  # a does not follow b
