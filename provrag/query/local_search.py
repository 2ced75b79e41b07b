"""GraphRAG's local search: entities named in the question (titles matched inside DuckDB) →
their text units, relationships and community reports; the units are ranked by hybrid
retrieval boosted by the matched entities; the answer cites Entities, Relationships and
Sources.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.query.context import (SearchResult, add_neighbours, answer_or_abstain, candidate_view, has_rows,
                                   selected_view)
from provrag.query.retrieve import neighbours, retrieve_units


def match_entities(con, question: str, limit: int = 10) -> list[dict]:
    """Entities whose title appears in the question as whole words (case-insensitive).

    `contains` first: a title the question holds as whole words it holds as a substring, and the
    substring test is cheap where compiling a pattern per entity is not (bench/query_lookups.py:
    ~10x faster over TeX Live's 29,207 entities); the pattern then runs only on the titles that
    pass it."""
    if not has_rows(con, "entities"):
        return []
    low = question.lower()
    rows = con.execute(
        """
        SELECT id, human_readable_id, title, type, description, text_unit_ids, degree
        FROM entities
        WHERE title IS NOT NULL AND length(title) >= 3
          AND contains(lower($1), lower(title))
          AND regexp_matches(lower($1), '\\b' || regexp_escape(lower(title)) || '\\b')
        ORDER BY length(title) DESC, degree DESC NULLS LAST, human_readable_id
        LIMIT $2
        """, [question, int(limit) * 3]).fetchall()
    out, covered = [], []
    for r in rows:
        t = (r[2] or "").lower()
        pos = low.find(t)
        # a title inside a longer matched title ("NEWTON" in "CAM NEWTON") adds nothing
        if any(a <= pos and pos + len(t) <= b for a, b in covered):
            continue
        covered.append((pos, pos + len(t)))
        out.append({"id": r[0], "human_readable_id": r[1], "title": r[2], "type": r[3], "description": r[4],
                    "text_unit_ids": list(r[5] or []), "degree": r[6]})
        if len(out) >= limit:
            break
    return out


def entity_relationships(con, titles: list[str], limit: int = 10, lookups=None) -> list[tuple]:
    """(human_readable_id, source, target, description, weight, text_unit_ids) of the relationships
    touching the entities titled `titles`: those between two of them first, then by weight.
    A list test rather than IN (subquery), which DuckDB ran as joins, each side twice (~1.8x
    faster over TeX Live's 201,739 relationships: bench/query_lookups.py). With a server's
    `lookups`, its map chooses the relationships and only their rows are read."""
    if not titles or not has_rows(con, "relationships"):
        return []
    chosen = lookups.relationship_ids(con, titles, int(limit)) if lookups is not None else None
    if chosen is not None:
        rows = {r[0]: r for r in con.execute(
            "SELECT human_readable_id, source, target, description, weight, text_unit_ids FROM relationships "
            "WHERE list_contains(?::BIGINT[], human_readable_id)", [chosen]).fetchall()} if chosen else {}
        return [rows[i] for i in chosen]
    return con.execute("""
        SELECT human_readable_id, source, target, description, weight, text_unit_ids FROM relationships
        WHERE list_contains($1::VARCHAR[], source) OR list_contains($1::VARCHAR[], target)
        ORDER BY (list_contains($1::VARCHAR[], source) AND list_contains($1::VARCHAR[], target)) DESC,
                 weight DESC NULLS LAST, human_readable_id LIMIT $2
    """, [list(titles), int(limit)]).fetchall()


def entity_reports(con, entity_ids: list[str], lookups=None, limit: int = 3) -> list[tuple]:
    """(community, title, summary, rank) of the reports of the communities holding any of
    `entity_ids`, the finest level first, then by rank. With a server's `lookups`, its map
    names the communities, and the join reads only their reports."""
    if not has_rows(con, "communities"):
        return []
    order = f"ORDER BY r.level DESC, r.rank DESC NULLS LAST, r.community LIMIT {int(limit)}"
    held = lookups.communities_of(con, entity_ids) if lookups is not None else None
    if held is not None:   # one row per communities row that holds one, as the join below has it
        return con.execute(f"""
            SELECT r.community, r.title, r.summary, r.rank FROM community_reports r
            JOIN (SELECT unnest(?::BIGINT[]) AS community) c ON c.community = r.community {order}
        """, [held]).fetchall() if held else []
    return con.execute(f"""
        SELECT r.community, r.title, r.summary, r.rank FROM community_reports r
        JOIN communities c ON c.community = r.community
        WHERE list_has_any(c.entity_ids, ?::VARCHAR[]) {order}
    """, [entity_ids]).fetchall()


def _fmt_ids(ids: list[int], cap: int = 5) -> str:
    shown = ", ".join(str(i) for i in ids[:cap])
    return shown + (", +more" if len(ids) > cap else "")


def _citation(entity_ids: list[int], rel_ids: list[int], sources: list[int]) -> str:
    parts = []
    if entity_ids:
        parts.append(f"Entities ({_fmt_ids(entity_ids)})")
    if rel_ids:
        parts.append(f"Relationships ({_fmt_ids(rel_ids)})")
    parts.append(f"Sources ({', '.join(str(s) for s in sources)})")
    return f"[Data: {'; '.join(parts)}]"


def local_search(reader, question: str, cfg: Config, engine, trace, entities: list[dict] | None = None,
                 restrict: list[str] | None = None, said=()) -> SearchResult:
    """`restrict`: only these units (ask's first attempt over the documents the question names);
    `said`: the question's terms that named those documents (query/named.py)."""
    scfg = cfg.search
    k = int(scfg.top_k_units)
    n_ctx, pool = int(scfg.context_units), int(scfg.candidate_pool)
    boost_w = float(scfg.local_entity_boost)
    con = reader.con
    with trace.stage("exploration") as d:
        lookups = getattr(reader, "graph_lookups", None)   # a server's (query/graph_lookups.py)
        ents = entities if entities is not None else match_entities(con, question)
        unit_ents: dict[str, list[int]] = {}
        for e in ents:
            for u in e["text_unit_ids"]:
                unit_ents.setdefault(u, []).append(int(e["human_readable_id"]))
        boost = {u: boost_w * min(len(v), 2) / 2 for u, v in unit_ents.items()}
        ret = retrieve_units(reader, question, cfg, k=max(k, n_ctx), boost=boost, pool=pool, restrict=restrict,
                             said=said)
        titles = [e["title"] for e in ents]
        rels = entity_relationships(con, titles, lookups=lookups)
        reports = entity_reports(con, [e["id"] for e in ents], lookups) if ents else []
        d["entities"] = [{"id": e["human_readable_id"], "title": e["title"], "type": e["type"],
                          "units": len(e["text_unit_ids"])} for e in ents]
        d["relationships"] = [{"id": r[0], "source": r[1], "target": r[2], "weight": r[4]} for r in rels]
        d["reports"] = [{"id": r[0], "title": r[1], "rank": r[3]} for r in reports]
        d["candidates"] = candidate_view(ret)
        d["retrieval"] = {"channels": ret.channels, "ms": ret.timings_ms}
    with trace.stage("focus") as d:
        units = ret.candidates[:max(k, n_ctx)]
        unit_rels: dict[str, list[int]] = {}
        for r in rels:
            for u in r[5] or []:
                unit_rels.setdefault(u, []).append(int(r[0]))
        context = []
        nxt, prv = neighbours(reader, [c["text_unit_id"] for c in units])
        for c in units:
            ents_c = sorted(set(unit_ents.get(c["text_unit_id"], [])))
            rels_c = sorted(set(unit_rels.get(c["text_unit_id"], [])))
            rec = {"kind": "source", "text": c["text"], "score": c["score"],
                   "citation": _citation(ents_c, rels_c, [int(c["human_readable_id"])]),
                   "text_unit_id": c["text_unit_id"], "document": c.get("document"), "path": c.get("path")}
            add_neighbours(rec, nxt.get(c["text_unit_id"]), prv.get(c["text_unit_id"]),
                            lambda h: _citation(ents_c, rels_c, [int(c["human_readable_id"]), h]),
                            lambda h: _citation(ents_c, rels_c, [h, int(c["human_readable_id"])]))
            context.append(rec)
        extra = []  # graph context for a model engine (the offline one quotes source text only)
        for e in ents:
            if e.get("description"):
                extra.append({"kind": "entity", "citation": f"[Data: Entities ({e['human_readable_id']})]",
                              "text": f"{e['title']}: {e['description']}"})
        for r in rels:
            if r[3]:
                extra.append({"kind": "relationship", "citation": f"[Data: Relationships ({r[0]})]",
                              "text": f"{r[1]} → {r[2]}: {r[3]}"})
        for r in reports:
            extra.append({"kind": "report", "citation": f"[Data: Reports ({r[0]})]", "text": f"{r[1]}: {r[2] or ''}"})
        d["selected"] = selected_view(units)
        d["graph_context"] = [{"kind": x["kind"], "citation": x["citation"]} for x in extra]
    return answer_or_abstain(engine, question, "local", units, context, extra, cfg, ret, trace)

