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


def test_a_pair_asked_twice_is_read_once_with_the_same_logits(monkeypatch):
    """A verify's judge asks the claim head about the same (claim, span) for cited and retrieved
    evidence alike: each distinct pair is run once, and every copy gets its logits."""
    r = reader.get()
    claim = "Imogen Vale leads the commissioning team."
    spans = ["Dr. Imogen Vale leads the Halcyon commissioning team.", "The handbook was revised in 2024.",
             "Dr. Imogen Vale leads the Halcyon commissioning team.", "The team meets on Mondays."] * 3
    distinct = r._run("claim", [claim] * 3, [spans[0], spans[1], spans[3]])
    runs = []
    real_run = r.session.run
    monkeypatch.setattr(r.session, "run", lambda *a, **k: runs.append(1) or real_run(*a, **k), raising=False)
    logits = r._run("claim", [claim] * len(spans), spans)
    assert len(runs) == 3    # three distinct pairs among twelve
    assert np.array_equal(logits, distinct[[0, 1, 0, 2] * 3])
    answers = r._run("answer", ["Who leads it?"] * 4, spans[:4], ["ctx a", "ctx b", "ctx a", "ctx c"])
    assert np.array_equal(answers[0], answers[2]) and len(runs) == 3 + 3
