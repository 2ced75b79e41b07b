"""rank_sentences keeps each record's question-independent parse per process (scoring.parsed_record).

Ask's wider attempts read the units of the first again and a server's questions meet the same
units, so the sentence and paragraph splits are kept, bounded. What a question reads must not
depend on what was read before it: the ranking from a cold cache equals the ranking from a warm
one, on real text cut into units with their neighbours as retrieval gives them, and nothing a
caller does to its ranking reaches the next question's.
"""
from __future__ import annotations

import copy

from provrag.engines.offline.answer.scoring import PARSED_RECORDS, parsed_record, rank_sentences

QUESTIONS = ("What was the supplemental treaty with Great Britain for?",
             "What did the President say about the foreign relations of the country?")


def records_of(text: str, size: int = 1200) -> list[dict]:
    """The text in units of ~size characters cut at spaces (as a chunker cuts mid-sentence), each
    with the previous unit's text and the next one's, as query/retrieve builds a record."""
    cuts, at = [0], 0
    while at + size < len(text):
        at = text.index(" ", at + size)
        cuts.append(at)
    units = [text[a:b] for a, b in zip(cuts, cuts[1:] + [len(text)])]
    return [{"text": u, "previous": units[i - 1] if i else None, "continuation": units[i + 1] if i + 1 < len(units) else None,
             "score": 1.0 / (1 + i)} for i, u in enumerate(units)]


def test_a_warm_parse_ranks_as_a_cold_one_and_is_read_once(small_corpus):
    records = records_of((small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")[:30_000])
    assert 10 < len(records) < PARSED_RECORDS
    parsed_record.cache_clear()
    cold = [rank_sentences(q, records) for q in QUESTIONS]
    info = parsed_record.cache_info()
    assert info.misses == len(records) and info.hits == len(records) * (len(QUESTIONS) - 1)
    assert any(r["sentence"].startswith("The supplemental treaty") for r in cold[0][:3])
    assert [rank_sentences(q, records) for q in QUESTIONS] == cold
    assert parsed_record.cache_info().misses == len(records)   # nothing parsed again


def test_what_a_caller_does_to_its_ranking_does_not_reach_the_next(small_corpus):
    records = records_of((small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")[:12_000])
    first = rank_sentences(QUESTIONS[0], records)
    kept = copy.deepcopy(first)
    for r in first:
        r["sentence"], r["score"] = "changed", -1.0
    assert rank_sentences(QUESTIONS[0], records) == kept
    rows, _, _, paragraphs, _, _ = parsed_record(records[1]["text"], records[1]["previous"] or "", records[1]["continuation"] or "")
    assert isinstance(rows, tuple) and all(isinstance(t, tuple) for _, _, t in rows)
    assert isinstance(paragraphs, tuple) and all(isinstance(p[2], tuple) for p in paragraphs)
