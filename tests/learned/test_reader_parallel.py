"""The reader runs a call's pairs side by side on the cores it may use (learned/reader._run): the
logits are those of the same pairs run one after another, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from provrag import cores
from provrag.learned import reader

if not reader.available():  # pragma: no cover - the weights ship in the package
    pytest.skip("no learned reader weights", allow_module_level=True)


def test_pairs_side_by_side_give_the_logits_of_pairs_one_by_one(monkeypatch):
    r = reader.get()
    question = "Who leads the Halcyon commissioning team?"
    sentences = [f"Dr. Imogen Vale leads team {i}, which commissions unit {i % 7} before the {i}th of June."
                 * (1 + i % 4) for i in range(17)]
    claims = [f"Imogen Vale leads team {i}." for i in range(5)]
    runs = {}
    for workers in (1, 2, 4):
        monkeypatch.setattr(cores, "cores_now", lambda every, w=workers: (min(every, w), True))
        runs[workers] = (r._run("answer", [question] * 17, sentences, sentences),
                         r._run("relevance", [question] * 17, sentences),
                         r._run("claim", claims, sentences[:5]))
    for workers in (2, 4):
        for one_by_one, side_by_side in zip(runs[1], runs[workers]):
            assert np.array_equal(one_by_one, side_by_side)
    assert runs[1][2].shape == (5, 3)
    assert r._run("answer", [], []).shape == (0,)
