"""Stage 5: offline extraction of skeleton units and the merge into GraphRAG's tables.

Real data: the Operation Dulce novella (chunked, embedded and skeletonised by the real
stages) and Lincoln's 1863 message. Recall is measured against the entities GraphRAG's LLM
extracted from the same novella (index-2026-v3), with check_dulce.py's matching rule.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict

import polars as pl

from provrag.config import load_config
from provrag.engines.offline import OfflineEngine
from provrag.engines.offline.extract.lexicon import stop_words
from provrag.engines.offline.extract.summarize import summarize
from provrag.engines.offline.extract.text import sentences
from provrag.engines.offline.extract.units import extract_units
from provrag.index.chunk import chunk_text
from provrag.index.extract import extract_stage
from provrag.index.tables import frame
from provrag.store import schema
from provrag.text.words import title_key


def _graphrag_recall(dulce_v3, titles) -> float:
    """check_dulce.py's rule: equal, or one contains the other as whole words."""
    import duckdb

    norm = lambda t: " ".join(re.sub(r"[^a-z0-9]+", " ", t.lower()).split())  # noqa: E731
    ours = {norm(t) for t in titles}
    theirs = {norm(t) for (t,) in duckdb.connect().execute(
        f"select title from read_parquet('{dulce_v3 / 'entities.parquet'}')").fetchall()}
    hit = sum(any(t == o or f" {t} " in f" {o} " or f" {o} " in f" {t} " for o in ours) for t in theirs)
    return hit / len(theirs)


def test_entities_only_from_skeleton_units(dulce_graph):
    ents, rels, units = dulce_graph
    skeleton = set(units.filter(pl.col("is_skeleton"))["id"].to_list())
    assert 0 < len(skeleton) < units.height
    assert ents.height > 20 and rels.height > 20
    for ids in ents["text_unit_ids"].to_list() + rels["text_unit_ids"].to_list():
        assert ids and set(ids) <= skeleton
        assert ids == sorted(set(ids))
    for row in units.iter_rows(named=True):
        if not row["is_skeleton"]:
            assert row["entity_ids"] == [] and row["relationship_ids"] == []
    # text_units.entity_ids is the inverse of entities.text_unit_ids
    inverse = defaultdict(set)
    for eid, us in zip(ents["id"], ents["text_unit_ids"]):
        for u in us:
            inverse[u].add(eid)
    for uid, eids in zip(units["id"], units["entity_ids"]):
        assert set(eids) == inverse.get(uid, set())


def test_columns_and_types_are_graphrags(dulce_graph):
    ents, rels, units = dulce_graph
    assert ents.schema == frame(schema.ENTITIES, []).schema and rels.schema == frame(schema.RELATIONSHIPS, []).schema
    assert units.schema == frame(schema.TEXT_UNITS, []).schema
    assert ents["human_readable_id"].to_list() == list(range(ents.height))
    assert rels["human_readable_id"].to_list() == list(range(rels.height))
    assert ents["id"].n_unique() == ents.height and rels["id"].n_unique() == rels.height


def test_merged_by_normalised_title_with_frequency(dulce_graph):
    ents, _, _ = dulce_graph
    keys = [title_key(t) for t in ents["title"]]
    assert len(set(keys)) == len(keys)                      # one row per normalised title
    assert all(t == t.upper() for t in ents["title"])       # GraphRAG-style titles
    by_title = {r["title"]: r for r in ents.iter_rows(named=True)}
    # the protagonist is mentioned all over the skeleton: one entity, many units
    alex = by_title["ALEX MERCER"]
    assert alex["type"] == "PERSON" and alex["frequency"] == len(alex["text_unit_ids"]) >= 5
    assert by_title["PARANORMAL MILITARY SQUAD"]["type"] == "ORGANIZATION"
    assert all(f == len(u) for f, u in zip(ents["frequency"], ents["text_unit_ids"]))


def test_degrees_match_relationships(dulce_graph):
    ents, rels, _ = dulce_graph
    nb = defaultdict(set)
    for s, t in zip(rels["source"], rels["target"]):
        assert s != t
        nb[s].add(t)
        nb[t].add(s)
    deg = dict(zip(ents["title"], ents["degree"]))
    assert set(nb) <= set(deg)
    assert all(deg[t] == len(nb.get(t, ())) for t in deg)
    for s, t, cd, w in zip(rels["source"], rels["target"], rels["combined_degree"], rels["weight"]):
        assert cd == deg[s] + deg[t] and w >= 1
    pairs = [frozenset(p) for p in zip(rels["source"], rels["target"])]
    assert len(pairs) == len(set(pairs))                   # one row per unordered pair


def test_descriptions_are_sentences_of_the_entitys_units(dulce_graph):
    ents, rels, units = dulce_graph
    text = dict(zip(units["id"], units["text"]))
    flat = lambda s: " ".join(s.split())  # noqa: E731
    for table in (ents, rels):
        for desc, us in zip(table["description"], table["text_unit_ids"]):
            a, b = sentences(desc)[0]
            first = desc[a:b].rstrip("…")
            assert first and any(first in flat(text[u]) for u in us), desc


def test_no_stop_words_or_sentence_initial_words_as_entities(small_corpus):
    cfg = load_config()
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    units = [(f"u{i}", u["text"]) for i, u in enumerate(chunk_text(text, None, 300, 0))]
    res = extract_units(units, cfg)
    titles = [e["title"] for r in res for e in r["entities"]]
    stop = stop_words()
    assert titles and not any(title_key(t) in stop for t in titles)
    assert not any(t.split()[0].lower() in {"the", "this", "it", "but", "in", "we"} for t in titles)
    keys = {title_key(t) for t in titles}
    assert {"united states", "congress"} <= keys
    types = {title_key(e["title"]): e["type"] for r in res for e in r["entities"]}
    assert types["congress"] == "ORGANIZATION"


def test_relationships_are_sentence_cooccurrences():
    cfg = load_config()
    unit = ("u0", "Dr. Jordan Hayes met Taylor Cruz in the briefing room. The briefing room was cold. "
                  "Later, Taylor Cruz and Jordan Hayes left the briefing room together.")
    (res,) = extract_units([unit], cfg)
    titles = {title_key(e["title"]) for e in res["entities"]}
    assert {"jordan hayes", "taylor cruz", "briefing room"} <= titles
    rel = {frozenset((title_key(r["source"]), title_key(r["target"]))): r for r in res["relationships"]}
    both = rel[frozenset(("jordan hayes", "taylor cruz"))]
    assert both["weight"] == 2.0                           # two sentences hold both names
    assert both["description"].startswith("Dr. Jordan Hayes met Taylor Cruz")


def test_sentences_keep_abbreviations_together():
    text = 'Dr. Jordan Hayes nodded. "Details are imperative. We need you," said Mr. Cruz. Next.'
    got = [text[a:b] for a, b in sentences(text)]
    assert got[0] == "Dr. Jordan Hayes nodded."
    assert "Mr. Cruz" in got[-2] and got[-1] == "Next."


def test_summarize_is_extractive_deduplicated_and_capped():
    cfg = load_config(overrides={"extract": {"description_max_chars": 200}})
    descs = ["Alex Mercer leads the team. Alex Mercer checks the gear.",
             "Alex Mercer checks the gear. Alex Mercer trusts Jordan Hayes.",
             "A drone flew by."]
    out = summarize("ALEX MERCER", descs, cfg)
    assert len(out) <= 200 and out.count("Alex Mercer checks the gear.") == 1
    assert all(s in " ".join(descs) for s in re.split(r"(?<=\.) ", out.rstrip("…")))


def test_extract_stage_is_deterministic(dulce_units, dulce_graph):
    cfg = load_config()
    a = extract_stage(dulce_units, OfflineEngine(cfg), cfg)
    b = dulce_graph
    assert all(x.equals(y) for x, y in zip(a, b))


def test_empty_skeleton_gives_empty_tables(dulce_units):
    cfg = load_config()
    units = dulce_units.head(3).with_columns(pl.lit(False).alias("is_skeleton"))
    ents, rels, units = extract_stage(units, OfflineEngine(cfg), cfg)
    assert ents.height == 0 and rels.height == 0 and units.height == 3
    assert ents.schema == frame(schema.ENTITIES, []).schema and rels.schema == frame(schema.RELATIONSHIPS, []).schema


def test_recall_against_graphrags_llm_entities(dulce_units, dulce_graph, dulce_v3):
    """Measured, not tuned: all units of the novella, and the β = 0.25 skeleton."""
    cfg = load_config()
    units = dulce_units
    everything = extract_units(list(zip(units["id"], units["text"])), cfg)
    recall_all = _graphrag_recall(dulce_v3, (e["title"] for r in everything for e in r["entities"]))
    ents, _, _ = dulce_graph
    recall_skeleton = _graphrag_recall(dulce_v3, ents["title"].to_list())
    print(f"recall vs GraphRAG: all units {recall_all:.2f}, skeleton {recall_skeleton:.2f}")
    assert recall_all >= 0.70 and recall_skeleton >= 0.70


def test_merge_of_engine_answers_in_graphrag_format(dulce_units):
    """The stage merges whatever an engine answers (here: hand-written GraphRAG records)."""
    calls = []

    class Recorded(OfflineEngine):
        def extract_graph(self, units):
            return [{"entities": [{"title": t, "type": "PERSON", "description": f"{t} in {uid}"}
                                  for t in ("Alex Mercer", "alex  mercer!", "Sam")],
                     "relationships": [{"source": "Alex Mercer", "target": "Dulce", "description": "went", "weight": 2}]}
                    for uid, _ in units]

        def summarize_descriptions(self, title, descriptions):
            calls.append((title, descriptions))
            return " / ".join(descriptions)

    cfg = load_config()
    units = dulce_units.head(4).with_columns(pl.lit(True).alias("is_skeleton"))
    ents, rels, _ = extract_stage(units, Recorded(cfg), cfg)
    titles = Counter(ents["title"])
    assert titles == {"ALEX MERCER": 1, "SAM": 1, "DULCE": 1}   # DULCE: an endpoint never listed
    alex = ents.filter(pl.col("title") == "ALEX MERCER").row(0, named=True)
    assert alex["frequency"] == 4 and alex["degree"] == 1
    assert rels.height == 1 and rels["weight"][0] == 8.0
    assert any(t == "ALEX MERCER" and len(d) == 8 for t, d in calls)  # 2 spellings × 4 units


def test_trim_cuts_at_a_word_and_marks_the_cut():
    from provrag.engines.offline.extract.text import trim

    assert trim("  Alex   Mercer\nleads.  ", 40) == "Alex Mercer leads."
    cut = trim("Alex Mercer leads the team into the Dulce base, carefully.", 30)
    assert cut == "Alex Mercer leads the team…" and len(cut) <= 30


def test_batches_change_only_around_an_edit(small_corpus):
    """Content-defined batch boundaries: units inserted in the middle (a new document between
    two others) leave the batches before and after them as they were, so an index update finds
    those in the cache."""
    from provrag.index.chunk import unit_id
    from provrag.index.extract import batches_of

    def units_of(name: str, text: str) -> list[tuple[str, str]]:
        seen: dict[str, int] = {}
        return [(unit_id(name, u["text"], seen), u["text"]) for u in chunk_text(text, None, 60, 0)]

    lincoln = (small_corpus / "sotu-1863-lincoln.txt").read_text()
    first, last = units_of("a.txt", lincoln[: len(lincoln) // 2]), units_of("c.txt", lincoln[len(lincoln) // 2:])
    inserted = units_of("b.txt", lincoln[:3000])
    before = batches_of(first + last, 32)
    after = batches_of(first + inserted + last, 32)
    assert all(1 <= len(b) <= 32 for b in before + after)
    assert [u for b in after for u in b] == first + inserted + last  # every unit once, in order
    kept = [b for b in before if b in after]
    assert len(kept) >= len(before) - 3  # at most the batch the insertion falls into (and its neighbour) change
    assert any(b[0] in last for b in kept)  # batches after the insertion are found again too
