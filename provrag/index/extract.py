"""Stage 5 — extract: skeleton text units → GraphRAG's entities and relationships tables.

Only the KET-RAG skeleton (`is_skeleton`) goes to the engine: with an LLM engine extraction
is most of the indexing bill, and the skeleton is the part of the corpus worth paying for.
The engine answers in GraphRAG's per-unit format (engines/base.py), whichever engine it is;
this module merges those answers the way GraphRAG does:

- entities merge by normalised title (case, whitespace and punctuation ignored). The title is
  the most frequent surface form, UPPER-CASED: GraphRAG's prompts make the LLM write titles in
  capitals, so an offline index, an openai index and a GraphRAG index look alike to a user,
  to GraphRAG's own query code and to anything matching titles across them.
- an entity or relationship seen with several distinct descriptions gets one, written by
  `engine.summarize_descriptions` (GraphRAG's "summarize descriptions" step).
- relationships merge per unordered pair; weights add up; the direction kept is the one
  seen most often.
- ids are content-derived (`content_id` of the normalised title / pair), so re-runs give the
  same ids; rows come in order of first appearance (unit order), and the pipeline gives them
  their stable human_readable_id from the index's id registry (provrag/index/ids.py).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from provrag.config import Config
from provrag.index.progress import stage
from provrag.index.tables import frame
from provrag.store import schema
from provrag.store.cache import key_of
from provrag.text.words import title_key

if TYPE_CHECKING:
    import polars as pl


class _Merged:
    """One entity or relationship as it accumulates across units."""

    __slots__ = ("first", "surfaces", "types", "descs", "units", "weight", "dirs")

    def __init__(self, first: int):
        self.first = first
        self.surfaces: Counter = Counter()
        self.types: Counter = Counter()
        self.descs: list[str] = []
        self.units: set[str] = set()
        self.weight = 0.0
        self.dirs: Counter = Counter()

    def describe(self, text) -> None:
        d = " ".join(str(text or "").split())
        if d and d not in self.descs:
            self.descs.append(d)


def _most_common(c: Counter):
    """Most frequent value; ties go to the one seen first (Counter keeps insertion order)."""
    return max(c, key=c.get) if c else ""


def _weight(v) -> float:
    try:
        w = float(v)
    except (TypeError, ValueError):
        return 1.0
    return w if w == w and w > 0 else 1.0  # NaN/negative weights from a model count as one


def batches_of(units: list[tuple[str, str]], size: int) -> list[list[tuple[str, str]]]:
    """Consecutive runs of at most `size` skeleton units, cut where a unit's id says so
    (content-defined boundaries, as rsync cuts files): when an update changes some units, only
    the batches holding them change and the others come from the cache. About size/2 + size/8
    units a batch on average (a batch is also the offline engine's TF-IDF scope, so not tiny)."""
    import zlib

    out, cur = [], []
    for u in units:
        cur.append(u)
        if len(cur) >= size or (len(cur) >= max(1, size // 8) and zlib.crc32(u[0].encode()) % max(1, size // 2) == 0):
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def extract_batch(engine, units: list[tuple[str, str]]) -> list[dict]:
    """One batch's per-unit graphs (an executor's item; the engine is shared with every batch)."""
    return engine.extract_graph(units)


def extract_stage(text_units: pl.DataFrame, engine, cfg: Config, progress=None, cache=None, executor=None):
    """(entities, relationships, text_units) frames: the graph of the skeleton units, and
    text_units with entity_ids/relationship_ids filled (empty lists off the skeleton).

    Batches are extracted by `executor` (provrag/executors/): the offline engine's anywhere,
    a model's in this process, where its client holds [llm] concurrency and rate limit."""
    import polars as pl

    from provrag.executors import cached_map, default_executor, engine_kind

    ecfg = cfg.extract
    batch = max(1, int(ecfg.batch_units))
    min_freq = max(1, int(ecfg.min_frequency))

    # the frame's order (documents by path, units by position), not human_readable_id: numbers
    # are stable across runs (index/ids.py), so they no longer follow the text
    skel = text_units.filter(pl.col("is_skeleton").fill_null(False))
    units = list(zip(skel[schema.ID].to_list(), [t or "" for t in skel[schema.TEXT].to_list()]))

    ents: dict[str, _Merged] = {}
    rels: dict[tuple[str, str], _Merged] = {}
    seen = 0  # running position: first-appearance order for human_readable_id
    # a batch's graph is a function of its units, the engine and [extract]: an index update
    # reuses the batches it saw before (store/cache.Cache); the others go to the executor
    batches = batches_of(units, batch)
    graphs = cached_map(executor or default_executor(cfg), extract_batch, batches, kind=engine_kind(engine),
                        shared=engine, cache=cache, keep=lambda results: isinstance(results, list),
                        key=lambda chunk: key_of("extract_graph", engine.name, engine.model, ecfg, chunk))
    with stage(progress, "extract", len(units)) as task:
        for chunk, results in zip(batches, graphs):
            for (uid, _), res in zip(chunk, results if isinstance(results, list) else []):
                if not isinstance(res, dict):
                    continue
                for e in res.get("entities") or []:
                    if not isinstance(e, dict):
                        continue
                    title = " ".join(str(e.get("title") or "").split())
                    key = title_key(title)
                    if not key:
                        continue
                    m = ents.get(key) or ents.setdefault(key, _Merged(seen))
                    seen += 1
                    m.surfaces[title.upper()] += 1
                    etype = str(e.get("type") or "").strip().upper()
                    if etype:
                        m.types[etype] += 1
                    m.describe(e.get("description"))
                    m.units.add(uid)
                for r in res.get("relationships") or []:
                    if not isinstance(r, dict):
                        continue
                    s_title = " ".join(str(r.get("source") or "").split())
                    t_title = " ".join(str(r.get("target") or "").split())
                    sk, tk = title_key(s_title), title_key(t_title)
                    if not sk or not tk or sk == tk:
                        continue
                    for k, t in ((sk, s_title), (tk, t_title)):
                        if k not in ents:  # an endpoint the model did not list as an entity
                            ents[k] = _Merged(seen)
                            seen += 1
                            ents[k].surfaces[t.upper()] += 1
                        ents[k].units.add(uid)
                    pair = (sk, tk) if sk < tk else (tk, sk)
                    m = rels.get(pair) or rels.setdefault(pair, _Merged(seen))
                    seen += 1
                    m.weight += _weight(r.get("weight"))
                    m.dirs[(sk, tk)] += 1
                    m.describe(r.get("description"))
                    m.units.add(uid)
            task.advance(len(chunk))

    keep = {k for k, m in ents.items() if len(m.units) >= min_freq}
    rels = {p: m for p, m in rels.items() if p[0] in keep and p[1] in keep}
    ent_keys = sorted(keep, key=lambda k: (ents[k].first, k))
    rel_keys = sorted(rels, key=lambda p: (rels[p].first, p))

    neighbours: dict[str, set[str]] = defaultdict(set)
    for a, b in rel_keys:
        neighbours[a].add(b)
        neighbours[b].add(a)

    n_summaries = sum(len(ents[k].descs) > 1 for k in ent_keys) + sum(len(rels[p].descs) > 1 for p in rel_keys)
    titles: dict[str, str] = {}
    ent_rows, rel_rows = [], []
    with stage(progress, "summarize", n_summaries) as task:
        def description(title: str, m: _Merged) -> str:
            if len(m.descs) <= 1:
                return m.descs[0] if m.descs else ""
            task.advance()
            key = key_of("summarize", engine.name, engine.model, ecfg, title, m.descs) if cache else None
            summary = cache.get(key) if cache else None  # same descriptions, same summary
            if summary is None:
                summary = engine.summarize_descriptions(title, list(m.descs)) or ""
                if cache:
                    cache.put(key, summary)
            return summary

        for i, k in enumerate(ent_keys):
            m = ents[k]
            title = _most_common(m.surfaces)
            titles[k] = title
            ent_rows.append({
                schema.ID: schema.content_id("entity", k), schema.HRID: i, schema.TITLE: title,
                "type": _most_common(m.types),
                "description": description(title, m),
                schema.TEXT_UNIT_IDS: sorted(m.units), "frequency": len(m.units),
                "degree": len(neighbours[k]),
            })
        for i, p in enumerate(rel_keys):
            m = rels[p]
            src, dst = _most_common(m.dirs)
            rel_rows.append({
                schema.ID: schema.content_id("relationship", *p), schema.HRID: i,
                "source": titles[src], "target": titles[dst],
                "description": description(f"{titles[src]} -> {titles[dst]}", m),
                "weight": float(m.weight), "combined_degree": len(neighbours[src]) + len(neighbours[dst]),
                schema.TEXT_UNIT_IDS: sorted(m.units),
            })

    by_unit_e: dict[str, list[str]] = defaultdict(list)
    by_unit_r: dict[str, list[str]] = defaultdict(list)
    for r in ent_rows:
        for u in r[schema.TEXT_UNIT_IDS]:
            by_unit_e[u].append(r[schema.ID])
    for r in rel_rows:
        for u in r[schema.TEXT_UNIT_IDS]:
            by_unit_r[u].append(r[schema.ID])
    ids = text_units[schema.ID].to_list()
    out_units = text_units.with_columns(
        pl.Series(schema.ENTITY_IDS, [by_unit_e.get(u, []) for u in ids], dtype=pl.List(pl.String)),
        pl.Series(schema.RELATIONSHIP_IDS, [by_unit_r.get(u, []) for u in ids], dtype=pl.List(pl.String)),
    )
    return frame(schema.ENTITIES, ent_rows), frame(schema.RELATIONSHIPS, rel_rows), out_units
