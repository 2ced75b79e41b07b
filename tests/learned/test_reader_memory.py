"""A one-question process gives the reader's arena back after each run (learned/reader.py,
serve/memory.settle_one_question, issue 30): where memory comes from changes, not one logit."""
from __future__ import annotations

import numpy as np
import pytest

from provrag.learned import reader

if not reader.available():  # pragma: no cover - the weights ship in the package
    pytest.skip("no learned reader weights", allow_module_level=True)


def test_logits_are_bit_for_bit_the_same_with_the_arena_given_back(monkeypatch):
    r = reader.get()
    question = "Who leads the Halcyon commissioning team?"
    passages = [f"Team {i} is led by Dr. Imogen Vale, the commissioning manager, who signs every permit. " * (1 + i % 5)
                for i in range(24)]
    monkeypatch.setitem(reader._free_arena, "after_runs", False)
    assert reader._run_options() is None
    kept = r._run("relevance", [question] * len(passages), passages)
    monkeypatch.setitem(reader._free_arena, "after_runs", True)
    opts = reader._run_options()
    assert opts.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    given_back = r._run("relevance", [question] * len(passages), passages)
    assert np.array_equal(kept, given_back)
