"""What a verify run reads and recomputes: each unit row once per run (retrieval and the check
share it), a server's kept rows used as they are, and the judge's word-order measure only where
it can decide the best span. Verdicts are the same either way (bench/verify_speed.py --same
compares every claim of eval/manuals, small and texlive); these tests pin the work, not the time."""
from __future__ import annotations

from collections import Counter

import pytest

import provrag.store.units as units
from provrag.config import load_config
from provrag.engines.offline.judge import features as feats
from provrag.engines.offline.judge.analysis import spans
from provrag.store.reader import open_index
from provrag.verify.check import verify_answer

CFG = load_config()
# two claims of the README's examples over data/: their evidence units overlap
ANSWER = ("Dr. Imogen Vale leads the Halcyon commissioning team. "
          "The Halcyon commissioning team is led by Dr. Imogen Vale, who signs off each stage.")


@pytest.fixture
def fetched(monkeypatch) -> Counter:
    """How often each unit id's row is read from the index (store/units._fetch), and how many
    rows were read from text_units.parquet by position (store/units.read_rows, under "@rows")."""
    seen: Counter = Counter()
    real, real_rows = units._fetch, units.read_rows

    def counting(reader, ids, positions, rows):
        seen.update(ids)
        return real(reader, ids, positions, rows)

    def counting_rows(path, positions):
        seen["@rows"] += len(positions)
        return real_rows(path, positions)

    monkeypatch.setattr(units, "_fetch", counting)
    monkeypatch.setattr(units, "read_rows", counting_rows)
    return seen


def test_each_unit_row_is_read_once_per_run(sample_index, fetched):
    with open_index(sample_index) as reader:
        result = verify_answer(reader, ANSWER, CFG)
        assert getattr(reader, "kept_units", None) is None   # kept for the run only, not on the caller's reader
    shown = {e.text_unit_id for c in result.claims for e in c.evidence}
    assert len(result.claims) == 2 and shown
    assert shown <= set(fetched)
    assert [u for u, n in fetched.items() if n > 1 and u != "@rows"] == []


def test_a_servers_kept_rows_are_used_and_kept(sample_index, fetched):
    with open_index(sample_index) as reader:
        kept = units.KeptUnits()
        reader.kept_units = kept
        first = verify_answer(reader, ANSWER, CFG)
        assert reader.kept_units is kept and kept.rows
        fetched.clear()
        again = verify_answer(reader, ANSWER, CFG)
    assert fetched["@rows"] == 0 and sum(fetched.values()) == 0   # the second request reads nothing the first one read
    assert [c.to_json() for c in again.claims] == [c.to_json() for c in first.claims]


def reference_covered(s: str, pool: frozenset) -> bool:
    """_covered as it was written before the pairwise cache: one rapidfuzz search over the pool."""
    from rapidfuzz import fuzz, process

    from provrag.engines.offline.judge.lexicon import stem

    if s in pool:
        return True
    if s.startswith("/"):
        return False
    if "-" in s and all(stem(p) in pool for p in s.split("-") if p):
        return True
    if len(s) >= 4:
        for w in pool:
            n = feats._common_prefix(s, w)
            if n >= 4 and n >= 0.6 * min(len(s), len(w)) and (n == len(s) or n == len(w) or n >= 5):
                return True
        if len(s) >= 5 and process.extractOne(s, pool, scorer=fuzz.ratio, score_cutoff=85) is not None:
            return True
    return False


def _unit_texts(index) -> list[str]:
    with open_index(index) as reader:
        return [r[0] for r in reader.con.execute("SELECT text FROM text_units ORDER BY human_readable_id").fetchall()]


def test_covered_word_by_word_agrees_with_the_search_over_the_pool(sample_index):
    texts = _unit_texts(sample_index)
    pools = [feats._pool(feats.analyse(t[a:b])) for t in texts[:8] for a, b in spans(t, 1)]
    words = sorted({s for t in texts for s in feats.analyse(t).stems} | {"commissioning", "comissioning", "halcyons"})
    checked = Counter()
    for pool in pools:
        for s in words[:400]:
            got, want = feats._covered(s, pool), reference_covered(s, pool)
            assert got == want, (s, sorted(pool))
            checked[got] += 1
    assert checked[True] and checked[False]   # both answers occur


def test_word_order_is_measured_only_where_it_can_decide_the_best_span(sample_index, monkeypatch):
    text = max(_unit_texts(sample_index), key=lambda t: len(spans(t, 2)))
    claim = "Dr. Imogen Vale leads the Halcyon commissioning team."
    calls = []
    real = feats._lcs
    monkeypatch.setattr(feats, "_lcs", lambda a, b: calls.append(b) or real(a, b))
    got = feats.features(claim, text, 2)
    n_spans = len(spans(text, 2))
    assert n_spans > 3
    # every span is read for coverage, but its word order only while it could still be the best
    assert 0 < len(calls) < n_spans
    a, b = got["span"]
    assert got["order"] == real(feats.analyse(claim).stems, feats.analyse(text[a:b]).stems) / len(feats.analyse(claim).stems)
