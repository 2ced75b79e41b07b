"""The [Data: …] parser: real GraphRAG answers (counted by hand), model-output variations,
sentence attribution, and a hypothesis fuzz run of 1,000 mangled strings."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provrag.query.citations import KINDS, parse_citations

pytestmark = pytest.mark.usefixtures("shared")  # skips when ../shared is absent

# Counted by hand once from the answer texts in ../shared/fixtures/graphrag-dulce/*/answers/:
# (blocks, ids written in all blocks, distinct (kind, id) pairs, blocks with +more)
HAND_COUNTS = {
    "index-2025-v1/local_search_0.json": (4, 6, 4, 0),
    "index-2025-v1/local_search_1.json": (4, 27, 16, 0),
    "index-2025-v2/drift_search_0.json": (5, 7, 3, 0),
    "index-2025-v2/global_search_with_dynamic_community_selection_0.json": (5, 5, 1, 0),
    "index-2026-v3/global_search_0.json": (7, 29, 8, 2),
}
# the distinct pairs themselves, also by hand
HAND_PAIRS = {
    "index-2025-v1/local_search_0.json": {("Entities", 0), ("Entities", 5), ("Relationships", 167),
                                          ("Relationships", 245)},
    "index-2025-v1/local_search_1.json": {("Entities", i) for i in (2, 17, 47)}
    | {("Relationships", i) for i in (201, 322, 283, 26, 82, 175)}
    | {("Claims", i) for i in (60, 83, 91, 134, 2, 13, 153)},
    "index-2025-v2/drift_search_0.json": {("Reports", 1), ("Sources", 1), ("Sources", 2)},
    "index-2025-v2/global_search_with_dynamic_community_selection_0.json": {("Reports", 6)},
    "index-2026-v3/global_search_0.json": {("Reports", i) for i in (0, 1, 3, 4, 5, 7, 8, 9)},
}


def _answer(dulce, name: str) -> str:
    folder, file = name.split("/")
    return json.loads((dulce / folder / "answers" / file).read_text())["answer"]


@pytest.mark.parametrize("name", sorted(HAND_COUNTS))
def test_real_graphrag_answers_match_hand_counts(dulce, name):
    text = _answer(dulce, name)
    res = parse_citations(text)
    blocks, ids, distinct, more = HAND_COUNTS[name]
    assert len(res.blocks) == blocks
    assert sum(len(r.ids) for r in res.refs()) == ids
    assert res.pairs() == HAND_PAIRS[name] and len(res.pairs()) == distinct
    assert sum(any(r.more for r in b.refs) for b in res.blocks) == more
    assert res.problems == []
    for b in res.blocks:
        assert text[b.span[0]:b.span[1]].startswith("[Data:") and text[b.span[1] - 1] == "]"
        assert "[Data" not in b.sentence and len(b.sentence.split()) >= 5
        # the sentence is the text just before the block (same paragraph)
        assert b.sentence_span[0] < b.span[0] <= b.sentence_span[1] + 3


def test_v3_more_flag_is_a_flag_not_an_id(dulce):
    res = parse_citations(_answer(dulce, "index-2026-v3/global_search_0.json"))
    first = res.blocks[0].refs[0]
    assert (first.kind, first.ids, first.more) == ("Reports", [4, 0, 3, 8, 9], True)


VARIATIONS = [
    ("[Data: Reports (4, 0, 3, +more)]", [("Reports", [4, 0, 3], True)]),
    ("[Data: Entities (2, 17, 47); Relationships (201, 322); Claims (60, 83); Sources (1, 2)]",
     [("Entities", [2, 17, 47], False), ("Relationships", [201, 322], False), ("Claims", [60, 83], False),
      ("Sources", [1, 2], False)]),
    ("[data: reports(1,2)]", [("Reports", [1, 2], False)]),
    ("[DATA : REPORTS ( 1 , 2 ) ]", [("Reports", [1, 2], False)]),
    ("[Data: Reports (1, 2).]", [("Reports", [1, 2], False)]),
    ("[Data: Reports (1, 2.)]", [("Reports", [1, 2], False)]),
    ("[Data: Reports (5, 6,\n   7, 8)]", [("Reports", [5, 6, 7, 8], False)]),
    ("[Data:\n  Entities (1);\n  Sources (3)\n]", [("Entities", [1], False), ("Sources", [3], False)]),
    ("**[Data: Sources (12)]**", [("Sources", [12], False)]),
    ("\\[Data: Reports (3)\\]", [("Reports", [3], False)]),
    ("[Data: Report (3); Entity (4); Source (5)]",
     [("Reports", [3], False), ("Entities", [4], False), ("Sources", [5], False)]),
    ("[Data: Reports (1), Sources (2)]", [("Reports", [1], False), ("Sources", [2], False)]),
    ("[Data: Reports [1, 2]]", [("Reports", [1, 2], False)]),
    ("[Data: Reports (1, 2, + more)]", [("Reports", [1, 2], True)]),
    ("[Data: Reports (1, 2, more)]", [("Reports", [1, 2], True)]),
    ("[Data: Reports (1, 2 +more)]", [("Reports", [1, 2], True)]),
    ("[Data: Reports (+more)]", [("Reports", [], True)]),
    ("[Data: Reports (3-5)]", [("Reports", [3, 4, 5], False)]),
    ("[Data: Reports (1, 2]", [("Reports", [1, 2], False)]),
    ("[Data Reports (9)]", [("Reports", [9], False)]),
    ("[Data: *Reports* (1)]", [("Reports", [1], False)]),
    ("[Data: Reports (1); Reports (2)]", [("Reports", [1, 2], False)]),
    ("[Data: Reports (1, 1, 2)]", [("Reports", [1, 2], False)]),
]


@pytest.mark.parametrize("text,want", VARIATIONS)
def test_model_output_variations(text, want):
    res = parse_citations(f"The squad met at the base {text}. Next sentence.")
    assert len(res.blocks) == 1, res
    got = [(r.kind, r.ids, r.more) for r in res.blocks[0].refs]
    assert got == want


def test_unreadable_fragments_are_reported_not_dropped():
    res = parse_citations("A claim [Data: Reports (1, abc, 3)]. Another [Data: nothing here]. "
                          "Third [Data: Reports (4)")
    assert [r.ids for r in res.refs()] == [[1, 3], [4]]
    reasons = [p.reason for p in res.problems]
    assert any("unreadable id" in r for r in reasons)
    assert any("no readable citation" in r for r in reasons)
    assert any("unclosed" in r for r in reasons)
    for p in res.problems:
        assert 0 <= p.span[0] <= p.span[1]


@pytest.mark.parametrize("bad", [None, "", "   ", 42, "[Data:", "[Data: ]", "[[[[", "]]]", "[Data: (((",
                                 "[Data: Reports ()]", "\x00[Data: Sources (1)]\x00", "[" * 5000,
                                 "[Data: Reports (" + "9" * 400 + ")]"])
def test_never_raises(bad):
    res = parse_citations(bad)
    assert isinstance(res.blocks, list) and isinstance(res.problems, list)


def test_sentence_attribution():
    text = ("## Heading\n\nDr. Hayes decoded the signal at Dulce Base [Data: Entities (2)]. "
            "The team trusted her. [Data: Sources (4)]\n\n"
            "- **Point:** Mercer leads the squad [Data: Reports (1)] and Cruz guards protocol [Data: Reports (2)].\n"
            "[Data: Reports (3)]")
    b = parse_citations(text).blocks
    assert [x.refs[0].ids[0] for x in b] == [2, 4, 1, 2, 3]
    assert b[0].sentence == "Dr. Hayes decoded the signal at Dulce Base."
    assert b[1].sentence == "The team trusted her."            # block after the period
    assert b[2].sentence == "Point: Mercer leads the squad"     # two blocks, two clauses
    assert b[3].sentence == "and Cruz guards protocol."
    # a block alone on the next line backs the whole previous sentence
    assert b[4].sentence == "Point: Mercer leads the squad and Cruz guards protocol."
    assert [x.sentence_index for x in b] == [1, 2, 3, 4, 5]


# ---- fuzz -----------------------------------------------------------------------------------

_spellings = {
    "Reports": ["Reports", "reports", "REPORTS", "Report"],
    "Entities": ["Entities", "entities", "Entity"],
    "Relationships": ["Relationships", "relationships", "Relationship"],
    "Claims": ["Claims", "claims", "Claim"],
    "Sources": ["Sources", "sources", "Source"],
}


@st.composite
def well_formed_block(draw):
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5, unique=True))
    parts, want = [], []
    for k in kinds:
        ids = list(dict.fromkeys(draw(st.lists(st.integers(0, 99999), min_size=1, max_size=6))))
        more = draw(st.booleans())
        sep = draw(st.sampled_from([", ", ",", " , ", ",\n  "]))
        body = sep.join(map(str, ids)) + (sep + draw(st.sampled_from(["+more", "+ more", "more"])) if more else "")
        if draw(st.booleans()):
            body += draw(st.sampled_from([".", ""]))
        parts.append(f"{draw(st.sampled_from(_spellings[k]))}{draw(st.sampled_from(['', ' ', '  ']))}({body})")
        want.append((k, ids, more))
    joiner = draw(st.sampled_from(["; ", ";", " ; ", ";\n"]))
    opener = draw(st.sampled_from(["[Data: ", "[Data:", "[data: ", "[DATA : ", "[ Data: "]))
    return opener + joiner.join(parts) + draw(st.sampled_from(["]", " ]", "\n]"])), want


# noise: single characters, and fragments of citations (openers without a close, stray
# brackets, kinds, "+more") — a stray opener must not swallow the real block after it
noise = st.lists(st.sampled_from(list("abc XYZ.,;:()[]{}+-*_#\n\\0123456789")
                                 + ["[Data:", "Reports", "(", "]", "[Data: Sources (", "+more", ". ", "[Data: Reports (3"]),
                 max_size=30).map("".join)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(noise, well_formed_block()), min_size=1, max_size=3), noise)
def test_fuzz_well_formed_blocks_survive_noise(pieces, tail):
    text = "".join(n + b for n, (b, _) in pieces) + tail
    res = parse_citations(text)  # must not raise
    got = [[(r.kind, r.ids, r.more) for r in blk.refs] for blk in res.blocks]
    want = [w for _, (_, w) in pieces]
    # every well-formed block is found, in order (noise may add blocks of its own)
    it = iter(got)
    for w in want:
        assert any(g == w for g in it), (text, got, want)
