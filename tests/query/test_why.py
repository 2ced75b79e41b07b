"""Why-provenance (provrag/query/why.py): each retrieved candidate's rank, score by component and
the question's words that drove it, checked against the index itself on real PDFs."""
from __future__ import annotations

import numpy as np
import pytest

from provrag.config import load_config

pytestmark = pytest.mark.usefixtures("shared")

QUESTION = "When did the oil embargo end?"


@pytest.fixture
def reader(squad_subset_index):
    from provrag.store.reader import open_index

    r = open_index(squad_subset_index)
    yield r
    r.close()


@pytest.fixture
def retrieved(reader):
    from provrag.query.retrieve import retrieve_units

    return retrieve_units(reader, QUESTION, load_config(), k=8)


def test_every_candidate_has_its_rank_and_a_score_that_is_the_sum_of_its_components(retrieved):
    cands = retrieved.candidates
    assert len(cands) == 8 and retrieved.channels["dense"]["used"]
    for n, c in enumerate(cands):
        why = c["why"]
        assert why["rank"] == n + 1 and why["score"] == c["score"]
        comp = why["components"]
        assert comp["bm25"] == c["bm25"] and comp["cosine"] == c["cosine"]
        assert comp["lexical"] + comp["embedding"] == pytest.approx(c["score"], abs=2e-6)
        assert "entity_boost" not in comp   # basic retrieval: no entity boost to report
    # the best unit holds the most of the fused score's lexical part: w · bm25 / max bm25
    w = retrieved.channels["lexical_weight"]
    best_bm25 = max(c["bm25"] for c in cands)
    for c in cands:
        assert c["why"]["components"]["lexical"] == pytest.approx(w * c["bm25"] / best_bm25, abs=1e-5)


def test_bm25_influence_is_each_question_word_share_of_the_units_bm25(retrieved):
    """The terms' weights sum to the unit's BM25 score, and each is a word of the question."""
    words = {"oil", "embargo", "end"}
    for c in retrieved.candidates:
        lex = [x for x in c["why"]["influence"] if x["channel"] == "bm25"]
        assert lex and {x["term"] for x in lex} <= words
        assert sum(x["weight"] for x in lex) == pytest.approx(c["bm25"], abs=1e-3)
        assert [x["weight"] for x in lex] == sorted((x["weight"] for x in lex), reverse=True)
        for x in lex:   # a word with a BM25 share is in the unit's text
            assert x["term"][:5] in c["text"].lower()


def test_embedding_influence_is_the_cosine_of_each_word_with_the_unit(reader, retrieved):
    """Recomputed here from the index's own embedder and stored vectors, word by word."""
    emb = reader.embedder()
    c = retrieved.candidates[0]
    unit = np.asarray(reader.con.execute("SELECT vector FROM embeddings WHERE id = ?", [c["text_unit_id"]]).fetchone()[0],
                      dtype=np.float32)
    dense = [x for x in c["why"]["influence"] if x["channel"] == "embedding"]
    assert dense
    for x in dense:
        v = emb.embed([x["term"]])[0]
        cos = float(v @ unit / (np.linalg.norm(v) * np.linalg.norm(unit)))
        assert x["weight"] == pytest.approx(cos, abs=1e-3) and 0 < x["weight"] <= 1


def test_a_graphrag_folder_explains_by_bm25_alone(dulce_v3):
    from provrag.query.retrieve import retrieve_units
    from provrag.store.reader import open_index

    with open_index(dulce_v3) as r:
        ret = retrieve_units(r, "Who leads the Paranormal Military Squad?", load_config(), k=3)
    for c in ret.candidates:
        assert set(c["why"]["components"]) == {"bm25", "lexical"}
        assert {x["channel"] for x in c["why"]["influence"]} == {"bm25"}


def test_ask_keeps_the_why_in_its_trace_for_every_method(squad_subset_index):
    """basic and local: text units with both channels; global: reports by BM25 and rating."""
    from provrag.pipelines.ask import run_ask

    cfg = load_config()
    for method in ("basic", "local", "global"):
        res = run_ask("What did the 1973 oil embargo do to prices?", squad_subset_index, cfg, method=method, save=False)
        stage = next(s for s in res.trace["stages"] if s["name"] == "exploration")["data"]
        cands = stage["candidates"]
        assert cands and all(c["why"]["rank"] == n + 1 for n, c in enumerate(cands)), method
        comp = cands[0]["why"]["components"]
        if method == "global":
            assert comp["lexical"] + comp["rating"] == pytest.approx(cands[0]["score"], abs=2e-6)
            assert {x["term"] for x in cands[0]["why"]["influence"]} <= {"1973", "oil", "embargo", "prices"}
        else:
            total = comp["lexical"] + comp["embedding"] + comp.get("entity_boost", 0.0)
            assert total == pytest.approx(cands[0]["score"], abs=3e-6)


def test_verify_keeps_why_for_each_claims_retrieved_evidence(reader):
    from provrag.verify.check import verify_answer

    answer = "The oil embargo ended in March 1974. Prices of oil rose sharply."
    found: list = []
    res = verify_answer(reader, answer, load_config(), retrievals=found)
    assert len(found) == len(res.claims) >= 2
    for claim, r in zip(res.claims, found):
        assert r["claim"] == claim.text and r["candidates"]
        retrieved = {e.text_unit_id for e in claim.evidence if e.route in ("retrieved", "both")}
        assert retrieved <= {c["text_unit_id"] for c in r["candidates"]}
        assert all(c["why"]["rank"] == n + 1 for n, c in enumerate(r["candidates"]))


def test_why_line_reads_the_sum_and_the_top_words():
    from provrag.query.why import why_line

    why = {"rank": 3, "score": 0.81, "components": {"bm25": 9.1, "lexical": 0.61, "embedding": 0.2, "entity_boost": 0.0},
           "influence": [{"term": "synopsis", "channel": "bm25", "weight": 8.53},
                         {"term": "synopsis", "channel": "embedding", "weight": 0.71}]}
    assert why_line(why) == ("#3 · score 0.810 = lexical 0.610 + embedding 0.200 · bm25: synopsis 8.53 · "
                             "embedding: synopsis 0.71")
    assert why_line(why, head=False).startswith("score = lexical 0.610")
    assert why_line(None) == why_line("not a why") == ""
