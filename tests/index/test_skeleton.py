"""KET-RAG skeleton: β of the units by PageRank, and a keyword graph over every unit."""
import copy

import pytest

from provrag.index.chunk import chunk_text
from provrag.config import load_config
from provrag.embeddings.tfidf import TfidfEmbedder
from provrag.index.skeleton import skeleton_stage
from tests.conftest import SMALL


def _units():
    text = (SMALL / "sotu-1863-lincoln.txt").read_text()
    units = chunk_text(text, None, 120, 0)
    for i, u in enumerate(units):
        u["id"] = f"u{i:03d}"
    vecs = TfidfEmbedder(64).fit([u["text"] for u in units]).embed([u["text"] for u in units])
    return units, vecs


@pytest.mark.parametrize("beta", [0.1, 0.25, 0.5])
def test_skeleton_fraction_is_beta(beta):
    units, vecs = _units()
    cfg = load_config(overrides={"skeleton": {"beta": beta}})
    units, _ = skeleton_stage(units, vecs, cfg)
    n_sk = sum(u["is_skeleton"] for u in units)
    assert abs(n_sk - beta * len(units)) <= 1
    # the skeleton is exactly the top-scored units
    lowest_in = min(u["skeleton_score"] for u in units if u["is_skeleton"])
    highest_out = max(u["skeleton_score"] for u in units if not u["is_skeleton"])
    assert lowest_in >= highest_out
    assert abs(sum(u["skeleton_score"] for u in units) - 1.0) < 1e-6  # PageRank is a distribution


def test_keywords_cover_every_unit_and_are_real_words():
    units, vecs = _units()
    units, keywords = skeleton_stage(units, vecs, load_config())
    ids = {u["id"] for u in units}
    covered = {t for k in keywords for t in k["text_unit_ids"]}
    assert covered == ids, "every unit, skeleton or not, is in the keyword graph"
    by_word = {k["keyword"]: k for k in keywords}
    assert "the" not in by_word and "and" not in by_word
    treaty = by_word["treaty"]
    assert set(treaty["text_unit_ids"]) == {u["id"] for u in units if "treaty" in u["text"].lower()}


def test_deterministic():
    units, vecs = _units()
    a, ka = skeleton_stage(copy.deepcopy(units), vecs, load_config())
    b, kb = skeleton_stage(copy.deepcopy(units), vecs, load_config())
    assert a == b and ka == kb
