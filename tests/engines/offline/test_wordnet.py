"""The judge's WordNet antonyms are a table shipped in the package, rebuilt by train/antonyms.py
from Debian's wordnet-base: the shipped file must be exactly what the script makes, so a reader
can check where every pair came from (and nobody edits the table by hand)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from provrag.engines.offline.judge import wordnet
from tests import components

REPO = Path(__file__).resolve().parents[3]


def _script():
    spec = importlib.util.spec_from_file_location("train_antonyms", REPO / "train" / "antonyms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_table_is_what_train_antonyms_makes_from_wordnet():
    script = _script()
    if not (script.WORDNET_DIR / "data.adj").is_file():
        components.missing("wordnet-base", f"WordNet is not in {script.WORDNET_DIR}; apt-get install wordnet-base")
    assert script.TABLE == wordnet.TABLE
    assert script.table_text() == wordnet.TABLE.read_text(encoding="utf-8")


def test_the_table_carries_wordnets_licence_and_pairs_both_ways():
    text = wordnet.TABLE.read_text(encoding="utf-8")
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in text
    pairs = wordnet.antonym_pairs()
    assert len(pairs) > 4000 and ("allow", "deny") in pairs and ("enable", "disable") in pairs
    assert all((b, a) in pairs for a, b in pairs if (a, b) in {("single", "double"), ("enable", "disable")})
    stems = wordnet.opposite_stems()
    assert "disabl" in stems["enabl"] and "enabl" in stems["disabl"]
