"""`provrag verify` on real documents: the R FAQ (a PDF of ../shared/corpora/small, so evidence
has pages) and the real GraphRAG answers of the Dulce fixture; the command line's exits."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from provrag.config import load_config
from provrag.store.reader import open_index
from provrag.verify.check import verify_answer
from tests.shared_material import DULCE_ANSWERS

pytestmark = pytest.mark.usefixtures("shared")
CFG = load_config()
CLAIM_KEYS = {"text", "verdict", "score", "method", "cited", "evidence", "cited_supports"}
SOURCE_KEYS = {"document", "path", "page_start", "page_end", "page_label", "text_unit_id", "quote", "via", "score"}


@pytest.fixture(scope="module")
def rfaq(tmp_path_factory, small_corpus):
    """An offline index of the R FAQ alone (a real 100-page PDF with printed page labels)."""
    from provrag.pipelines.index import run_index

    root = tmp_path_factory.mktemp("verify")
    (root / "docs").mkdir()
    shutil.copy(small_corpus / "R-FAQ.pdf", root / "docs" / "R-FAQ.pdf")
    run_index(root / "docs", root / "idx", CFG)
    return root / "idx"


def _unit_hrid(idx: Path, needle: str) -> tuple[int, int]:
    with open_index(idx) as r:
        hrid, page = r.con.execute("SELECT human_readable_id, page_start FROM text_units WHERE text LIKE ? "
                                   "ORDER BY human_readable_id LIMIT 1", [f"%{needle}%"]).fetchall()[0]
    return int(hrid), int(page)


def _one(idx: Path, answer: str) -> dict:
    with open_index(idx) as r:
        res = verify_answer(r, answer, CFG)
    assert len(res.claims) == 1
    return res


CASES = [
    # (name, answer, verdict, words the deciding quote must hold)
    ("supported", "R was initially written by Ross Ihaka and Robert Gentleman at the University of Auckland.",
     "supported", ["Ihaka", "Gentleman", "Auckland"]),
    ("swapped number", "Since mid-1999 there has been a core group, the R Core Team, who can modify the R source code archive.",
     "contradicted", ["1997", "core group"]),
    ("negated", "R was not initially written by Ross Ihaka and Robert Gentleman.",
     "contradicted", ["Ihaka", "Gentleman"]),
    ("uncited", "Support for Mac OS Classic ended with R 1.7.1.", "supported", ["Mac OS Classic", "1.7.1"]),
]


@pytest.mark.parametrize("name,answer,verdict,words", CASES, ids=[c[0] for c in CASES])
def test_claim_verdict_and_evidence_page(rfaq, name, answer, verdict, words):
    res = _one(rfaq, answer)
    c = res.claims[0]
    assert c.verdict == verdict, c.evidence[:2]
    best = c.evidence[0]
    assert best.label == verdict and best.document == "R-FAQ"
    assert all(w in best.quote for w in words), best.quote
    _, page = _unit_hrid(rfaq, words[0])
    assert best.page_start <= page <= best.page_end                  # the page that holds the words
    assert best.page_label is not None                               # printed label beside the page
    assert c.cited == [] and c.cited_supports is False              # no citation: nothing cited supports it
    assert res.summary[verdict] == 1 and res.summary["citation_recall"] == 0.0


def test_wrong_citation_true_elsewhere(rfaq):
    wrong, wrong_page = _unit_hrid(rfaq, "Venables and Brian D. Ripley")
    _, page = _unit_hrid(rfaq, "Guido Masarotto")
    res = _one(rfaq, f"The Windows version of R was created by Robert Gentleman and Guido Masarotto "
                     f"[Data: Sources ({wrong})].")
    c = res.claims[0]
    assert c.verdict == "supported"                        # true: the index says so elsewhere
    assert c.cited_supports is False                       # but not where it cites
    assert [s.text_unit for s in c.cited] == [wrong] and c.cited[0].page_start == wrong_page
    assert c.cited[0].label != "supported" and c.cited[0].via.startswith(f"Source {wrong}")
    best = c.evidence[0]
    assert best.label == "supported" and best.route == "retrieved" and best.page_start == page
    assert res.summary["citation_recall"] == 0.0 and res.summary["citation_precision"] == 0.0


def test_right_citation_counts_for_recall_and_precision(rfaq):
    right, _ = _unit_hrid(rfaq, "Guido Masarotto")
    wrong, _ = _unit_hrid(rfaq, "Venables and Brian D. Ripley")
    res = _one(rfaq, f"The Windows version of R was created by Robert Gentleman and Guido Masarotto "
                     f"[Data: Sources ({right}, {wrong})].")
    c = res.claims[0]
    assert c.cited_supports is True and c.verdict == "supported"
    assert {(x["id"], x["supports"]) for x in c.citations} == {(right, True), (wrong, False)}
    assert res.summary["citation_recall"] == 1.0 and res.summary["citation_precision"] == 0.5
    doc = c.to_json()
    assert CLAIM_KEYS <= set(doc) and all(SOURCE_KEYS <= set(s) for s in doc["cited"] + doc["evidence"])


def test_cli_json_fail_under_and_trace(rfaq, provrag_cli):
    r = subprocess.run([*provrag_cli, "verify", "--index", str(rfaq), "--json", "--fail-under", "1",
                        "--answer", "R was initially written by Ross Ihaka and Robert Gentleman. "
                                    "R was initially written by Linus Torvalds in Helsinki."],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr                     # one claim of two is not supported
    doc = json.loads(r.stdout)
    assert [c["verdict"] for c in doc["claims"]][0] == "supported"
    assert doc["claims"][1]["verdict"] != "supported"
    assert set(doc["summary"]) >= {"claims", "supported", "contradicted", "unsupported",
                                   "citation_recall", "citation_precision"}
    assert doc["method"] == "offline" and all(c["method"] == "offline" for c in doc["claims"])
    # the run is stored as a trace of kind verify
    t = subprocess.run([*provrag_cli, "trace", doc["trace_id"], "--index", str(rfaq), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert t.returncode == 0 and json.loads(t.stdout)["kind"] == "verify"


def test_cli_stdin_and_rich_output(rfaq, provrag_cli):
    r = subprocess.run([*provrag_cli, "verify", "-", "--index", str(rfaq), "--fail-under", "0.5"],
                       input="Support for Mac OS Classic ended with R 1.7.1.", capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "✓" in r.stdout and "R-FAQ" in r.stdout and "p." in r.stdout and "1 supported" in r.stdout


@pytest.mark.parametrize("args,msg", [
    ([], "exactly one answer"),
    (["--answer", "x", "--answer-file", "y"], "exactly one answer"),
    (["--answer", "R is fine.", "--fail-under", "2"], "--fail-under"),
    (["--answer-file", "/nonexistent/answer.txt"], "no such file"),
    (["--trace", "zz-not-hex"], "trace"),
    (["stray words"], "unexpected argument"),
])
def test_cli_bad_usage_exits_2(rfaq, provrag_cli, args, msg):
    r = subprocess.run([*provrag_cli, "verify", "--index", str(rfaq), *args], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr


def test_cli_bad_index_exits_2(tmp_path, provrag_cli):
    r = subprocess.run([*provrag_cli, "verify", "--index", str(tmp_path / "none"), "--answer", "R is fine."],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", DULCE_ANSWERS)
def test_real_graphrag_answers_verify_with_novella_evidence(dulce, name):
    """Every claim of the five real GPT-4 answers gets a verdict and evidence from the novella;
    v1's citations point at the wrong entities (fixture README): none of its cited claims is
    supported by its own citations."""
    import re

    import pyarrow.parquet as pq

    f = dulce / name
    # the text of each document the index holds (v1 holds a podcast transcript beside dulce.txt)
    folder = f.parent.parent
    docs = next(p for p in (folder / "documents.parquet", folder / "create_final_documents.parquet") if p.exists())
    text_of = {row["title"]: " ".join(row["text"].split())
               for row in pq.read_table(docs, columns=["title", "text"]).to_pylist()}
    cfg = load_config(overrides={"verify": {"top_k_cited": 2, "top_k_retrieved": 3}})
    answer = json.loads(f.read_text())["answer"]
    with open_index(f.parent.parent) as r:
        res = verify_answer(r, answer, cfg)
    claims = res.claims
    assert len(claims) >= 5
    # no "(no citation)" where a block closes the claim's paragraph (the rest of the paragraph,
    # up to a blank line or the next list item, holds none)
    for c in claims:
        rest = re.split(r"\n\s*\n|\n(?=[-*]\s)", answer[c.span[1]:], maxsplit=1)[0]
        assert bool(c.citations) == ("[Data:" in answer[c.span[0]:c.span[1]] or "[Data:" in rest), c.text
    assert any(x["from_paragraph"] for c in claims for x in c.citations)
    for c in claims:
        assert c.verdict in ("supported", "contradicted", "unsupported")
        assert c.evidence, c.text
        assert any(e.document == "dulce.txt" or "dulce" in (e.document or "").lower() for e in c.evidence)
        # each quote is words of the document it names (whitespace aside: a quote is shown on one line)
        assert all(e.quote and " ".join(e.quote.split()) in text_of[e.document] for e in c.evidence), c.text
    if "index-2025-v1" in name:
        cited = [c for c in claims if c.cited]
        assert cited and all(c.cited_supports is False for c in cited)
    assert res.summary["claims"] == len(claims)


def test_ask_json_file_and_trace_last_are_verified(rfaq, tmp_path, provrag_cli):
    """`ask --json > a.json; verify --answer-file a.json` checks the answer (not the JSON), with
    its question; `verify --trace last` checks the most recent ask of the index."""
    q = "Who initially wrote R?"
    a = subprocess.run([*provrag_cli, "ask", q, "--index", str(rfaq), "--json"], capture_output=True, text=True,
                       timeout=300)
    assert a.returncode == 0, a.stderr
    asked = json.loads(a.stdout)
    (tmp_path / "a.json").write_text(a.stdout)
    r = subprocess.run([*provrag_cli, "verify", "--index", str(rfaq), "--json",
                        "--answer-file", str(tmp_path / "a.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    by_file = json.loads(r.stdout)
    texts = " ".join(c["text"] for c in by_file["claims"])
    assert '"answer"' not in texts and "trace_id" not in texts and by_file["claims"]
    last = subprocess.run([*provrag_cli, "verify", "--index", str(rfaq), "--json", "--trace", "last"],
                          capture_output=True, text=True, timeout=300)
    assert last.returncode == 0, last.stderr
    by_trace = json.loads(last.stdout)
    assert [c["text"] for c in by_trace["claims"]] == [c["text"] for c in by_file["claims"]]
    assert by_trace["question"] == q and by_file["question"] == asked["question"] == q


def test_a_claim_cut_by_a_page_break_is_supported_across_both_pages(squad_subset_index):
    """A sentence that runs from the foot of one page onto the next lies whole in neither text
    unit: verify judges the seam of the two and cites both pages."""
    import re

    from provrag.config import load_config
    from provrag.store.reader import open_index
    from provrag.text.sentences import FURNITURE
    from provrag.verify.check import verify_answer

    index = squad_subset_index
    cfg = load_config()
    with open_index(index) as r:
        rows = r.con.execute("""SELECT human_readable_id, document_id, page_start, page_end, text FROM text_units
                                WHERE page_start IS NOT NULL ORDER BY document_id, char_start""").fetchall()
        checked = 0
        for a, b in zip(rows, rows[1:]):
            head, tail = a[4].rstrip(), FURNITURE.sub("", b[4]).lstrip()
            if not (a[1] == b[1] and b[2] == a[3] + 1 and not re.search(r"[.!?:\"”)]$", head) and tail[:1].islower()):
                continue
            before = re.split(r"(?<=[.!?])\s+", " ".join(head.split()))[-1]
            after = re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(tail.split()), maxsplit=1)[0]
            if len(before.split()) < 4 or len(after.split()) < 4:
                continue  # both halves must carry part of the claim
            claim = verify_answer(r, f"{before} {after} [Data: Sources ({a[0]}, {b[0]})]", cfg).claims[0]
            assert claim.verdict == "supported", (before, after, claim.cited[:2])
            top = claim.cited[0].to_json()      # as `verify --json` writes it
            assert (top["page_start"], top["page_end"]) == (a[3], b[2]) and top["label"] == "supported"
            assert top["text_unit"] == a[0] and len(set(top["text_unit_ids"])) == 2 and top["text_unit_id"] == top["text_unit_ids"][0]
            assert all(c["supports"] for c in claim.citations)
            checked += 1
    assert checked >= 3
