"""The three search methods (GraphRAG's global, local and basic) and the choice between them.

Every read is a DuckDB query over the index's parquet views (provrag/store/reader.py); only the
rows a question needs ever reach Python.

- global: GraphRAG's map-reduce over community reports. Reports of level ≤ [search]
  global_level are scored against the question in SQL (BM25 over term counts taken with
  regexes inside DuckDB), the best are packed into batches, each batch is mapped to scored
  points citing `[Data: Reports (…)]`, and the best points are reduced into the answer.
- local: entities named in the question (titles matched inside DuckDB) → their text units,
  relationships and community reports; the units are ranked by hybrid retrieval boosted by
  the matched entities; the answer cites Entities, Relationships and Sources.
- basic: top-k text units by hybrid retrieval (provrag/query/retrieve.py); cites Sources.

`choose_method` ("auto"): global for broad questions about the whole collection when the
index has reports; local when the question names entities of the graph; basic otherwise.
The reason is returned and stored in the trace. Each method returns a `SearchResult`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from provrag.config import Config
from provrag.engines.base import QueryTerms
from provrag.query.retrieve import antecedents, continuations, retrieve_units
from provrag.text.questions import is_broad
from provrag.text.words import STOP_WORDS, WORD, term_stem

METHODS = ("global", "local", "basic")

_CHARS_PER_TOKEN = 4  # batching estimate (no tokenizer load per report: ~4 chars per cl100k token in English)


@dataclass
class SearchResult:
    """One method's outcome, after GraphRAG's SearchResult (response, context_data, …): the answer
    citing `[Data: …]`, the context the engine answered from (text-unit records, or community
    reports for global), each context unit's rank for ordering the answer's sources (global
    reaches units only through reports: none), and what the engine reported doing."""

    answer: str
    method: str
    context: list[dict] = field(default_factory=list)
    unit_rank: dict[str, int] = field(default_factory=dict)
    engine_details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"answer": self.answer, "method": self.method, "context": self.context,
                "unit_rank": self.unit_rank, "engine_details": self.engine_details}


def has_rows(con, table: str) -> bool:
    """Whether the index has `table` with at least one row (a missing table has none)."""
    try:
        return bool(con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)").fetchall()[0][0])
    except Exception:
        return False


def match_entities(con, question: str, limit: int = 10) -> list[dict]:
    """Entities whose title appears in the question as whole words (case-insensitive)."""
    if not has_rows(con, "entities"):
        return []
    rows = con.execute(
        """
        SELECT id, human_readable_id, title, type, description, text_unit_ids, degree
        FROM entities
        WHERE title IS NOT NULL AND length(title) >= 3
          AND regexp_matches(lower(?), '\\b' || regexp_escape(lower(title)) || '\\b')
        ORDER BY length(title) DESC, degree DESC NULLS LAST, human_readable_id
        LIMIT ?
        """, [question, int(limit) * 3]).fetchall()
    out, covered = [], []
    low = question.lower()
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


def choose_method(reader, question: str, cfg: Config, entities: list[dict] | None = None) -> tuple[str, str]:
    """("global" | "local" | "basic", why) for the default method "auto"."""
    con = reader.con
    has_reports = has_rows(con, "community_reports")
    if is_broad(question):
        if has_reports:
            return "global", "broad question about the collection (themes/summary/overview): map-reduce over community reports"
        reason = "broad question, but the index has no community reports"
    else:
        reason = None
    if entities is None:
        entities = match_entities(con, question)
    if entities:
        names = ", ".join(e["title"] for e in entities[:5])
        return "local", f"the question names {len(entities)} entit{'y' if len(entities) == 1 else 'ies'} of the graph ({names})" \
            + (f"; {reason}" if reason else "")
    return "basic", (reason + "; " if reason else "") + "no entity of the graph is named: hybrid retrieval over text units"


# ---- global ------------------------------------------------------------------------------------

def _prefix(word: str) -> str:
    stem = term_stem(word)
    common = 0
    for a, b in zip(word, stem):
        if a != b:
            break
        common += 1
    return word[:max(common, min(len(word), 3))]


def score_reports(con, question: str, level: int) -> tuple[list[dict], str]:
    """Reports of level ≤ `level` (all levels if none), with a BM25 score against the question."""
    words = []
    for m in WORD.finditer(question.lower()):
        w = m.group(0)
        if w in STOP_WORDS or len(w) < 2:
            continue
        p = _prefix(w) if not w[0].isdigit() else w
        if p not in words:
            words.append(p)
    where = "WHERE level <= ?"
    n_at = con.execute("SELECT count(*) FROM community_reports WHERE level <= ?", [int(level)]).fetchall()[0][0]
    note = f"reports of level <= {level}"
    if not n_at:
        where, note = "WHERE ? IS NOT NULL", "all reports (none at the configured level)"
    tf_cols = "".join(f", len(regexp_extract_all(txt, '\\b{re.escape(w)}')) AS tf{i}" for i, w in enumerate(words))
    rows = con.execute(f"""
        WITH r AS (SELECT community, level, title, rank,
                          lower(coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || coalesce(full_content, '')) AS txt
                   FROM community_reports {where})
        SELECT community, level, title, rank, len(string_split_regex(txt, '\\s+')) AS dl{tf_cols} FROM r
    """, [int(level)]).fetchall()
    if not rows:
        return [], note
    n = len(rows)
    avgdl = sum(r[4] for r in rows) / n or 1.0
    dfs = [sum(1 for r in rows if r[5 + i] > 0) for i in range(len(words))]
    out = []
    for r in rows:
        s = 0.0
        for i, df in enumerate(dfs):
            tf = r[5 + i]
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * r[4] / avgdl))
        out.append({"community": int(r[0]), "level": r[1], "title": r[2], "rank": r[3], "bm25": s})
    top = max((x["bm25"] for x in out), default=0.0)
    for x in out:
        # relevance first; the report's own rating (0–10 "impact") breaks ties, as GraphRAG weighs rank
        x["score"] = round((x["bm25"] / top if top else 0.0) * 0.85 + 0.15 * float(x["rank"] or 0) / 10.0, 6)
    out.sort(key=lambda x: (-x["score"], x["community"]))
    return out, note


def fetch_reports(con, communities: list[int]) -> dict[int, dict]:
    if not communities:
        return {}
    rows = con.execute("""
        SELECT community, title, summary, full_content, rank, level FROM community_reports
        WHERE community IN (SELECT unnest(?::BIGINT[]))
    """, [list(communities)]).fetchall()
    return {int(r[0]): {"community": int(r[0]), "title": r[1], "summary": r[2], "full_content": r[3],
                        "rank": r[4], "level": r[5]} for r in rows}


def global_search(reader, question: str, cfg: Config, engine, trace) -> SearchResult:
    scfg = cfg.search
    level = int(scfg.global_level)
    max_reports = int(scfg.global_max_reports)
    batch_tokens = int(scfg.map_batch_tokens)
    with trace.stage("exploration") as d:
        scored, note = score_reports(reader.con, question, level)
        d["what"] = f"community reports scored against the question ({note})"
        d["candidates"] = [{"kind": "report", "id": x["community"], "title": x["title"], "score": x["score"],
                            "bm25": round(x["bm25"], 4), "rank": x["rank"], "level": x["level"]} for x in scored[:50]]
        d["count"] = len(scored)
    with trace.stage("focus") as d:
        chosen = [x for x in scored if x["bm25"] > 0][:max_reports] or scored[:max_reports]
        texts = fetch_reports(reader.con, [x["community"] for x in chosen])
        reports = []
        for x in chosen:
            r = texts.get(x["community"])
            if r:
                r["score"] = x["score"]
                reports.append(r)
        batches, cur, size = [], [], 0
        for r in reports:
            t = len(r.get("full_content") or "") // _CHARS_PER_TOKEN + 1
            if cur and size + t > batch_tokens:
                batches.append(cur)
                cur, size = [], 0
            cur.append(r)
            size += t
        if cur:
            batches.append(cur)
        d["selected"] = [{"kind": "report", "key": f"report/{r['community']}", "id": r["community"],
                          "label": r["title"], "score": r["score"]} for r in reports]
        d["batches"] = [[r["community"] for r in b] for b in batches]
    with trace.stage("synthesis") as d:
        points = []
        for b in batches:
            points.extend(engine.map_points(question, b))
        points.sort(key=lambda p: -int(p.get("score") or 0))
        answer = engine.reduce_answer(question, points)
        d["points"] = [{"description": p.get("description"), "score": p.get("score")} for p in points[:40]]
        d["answer"] = answer
    return SearchResult(answer, "global", context=reports, engine_details={"points": points})


# ---- local ------------------------------------------------------------------------------------

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


def _add_neighbours(rec: dict, nxt: dict | None, prv: dict | None, cite_next, cite_previous) -> None:
    """A sentence cut by the unit's end (a page break) is completed from the next unit, one cut
    by its start (units are cut by tokens) from the previous unit; it then cites both units
    (the previous one first, where it begins)."""
    for key, nb, cite in (("continuation", nxt, cite_next), ("previous", prv, cite_previous)):
        if nb:
            rec[key] = nb["text"]
            rec[f"{key}_citation"] = cite(int(nb["human_readable_id"]))


def local_search(reader, question: str, cfg: Config, engine, trace, entities: list[dict] | None = None) -> SearchResult:
    scfg = cfg.search
    k = int(scfg.top_k_units)
    n_ctx, pool = int(scfg.context_units), int(scfg.candidate_pool)
    boost_w = float(scfg.local_entity_boost)
    con = reader.con
    with trace.stage("exploration") as d:
        ents = entities if entities is not None else match_entities(con, question)
        unit_ents: dict[str, list[int]] = {}
        for e in ents:
            for u in e["text_unit_ids"]:
                unit_ents.setdefault(u, []).append(int(e["human_readable_id"]))
        boost = {u: boost_w * min(len(v), 2) / 2 for u, v in unit_ents.items()}
        ret = retrieve_units(reader, question, cfg, k=max(k, n_ctx), boost=boost, pool=pool)
        titles = [e["title"] for e in ents]
        rels = []
        if titles and has_rows(con, "relationships"):
            rels = con.execute("""
                SELECT human_readable_id, source, target, description, weight, text_unit_ids FROM relationships
                WHERE source IN (SELECT unnest(?::VARCHAR[])) OR target IN (SELECT unnest(?::VARCHAR[]))
                ORDER BY (source IN (SELECT unnest(?::VARCHAR[])) AND target IN (SELECT unnest(?::VARCHAR[]))) DESC,
                         weight DESC NULLS LAST, human_readable_id LIMIT 10
            """, [titles, titles, titles, titles]).fetchall()
        reports = []
        if ents and has_rows(con, "communities"):
            reports = con.execute("""
                SELECT r.community, r.title, r.summary, r.rank FROM community_reports r
                JOIN communities c ON c.community = r.community
                WHERE list_has_any(c.entity_ids, ?::VARCHAR[])
                ORDER BY r.level DESC, r.rank DESC NULLS LAST, r.community LIMIT 3
            """, [[e["id"] for e in ents]]).fetchall()
        d["entities"] = [{"id": e["human_readable_id"], "title": e["title"], "type": e["type"],
                          "units": len(e["text_unit_ids"])} for e in ents]
        d["relationships"] = [{"id": r[0], "source": r[1], "target": r[2], "weight": r[4]} for r in rels]
        d["reports"] = [{"id": r[0], "title": r[1], "rank": r[3]} for r in reports]
        d["candidates"] = _cand_view(ret)
        d["retrieval"] = {"channels": ret.channels, "ms": ret.timings_ms}
    with trace.stage("focus") as d:
        units = ret.candidates[:max(k, n_ctx)]
        unit_rels: dict[str, list[int]] = {}
        for r in rels:
            for u in r[5] or []:
                unit_rels.setdefault(u, []).append(int(r[0]))
        context = []
        nxt = continuations(con, [c["text_unit_id"] for c in units])
        prv = antecedents(con, [c["text_unit_id"] for c in units])
        for c in units:
            ents_c = sorted(set(unit_ents.get(c["text_unit_id"], [])))
            rels_c = sorted(set(unit_rels.get(c["text_unit_id"], [])))
            rec = {"kind": "source", "text": c["text"], "score": c["score"],
                   "citation": _citation(ents_c, rels_c, [int(c["human_readable_id"])]),
                   "text_unit_id": c["text_unit_id"]}
            _add_neighbours(rec, nxt.get(c["text_unit_id"]), prv.get(c["text_unit_id"]),
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
        d["selected"] = _selected_view(units)
        d["graph_context"] = [{"kind": x["kind"], "citation": x["citation"]} for x in extra]
    with trace.stage("synthesis") as d:
        ans = _answer(engine, question, context, extra, cfg, ret, d)
        d["answer"] = ans.text
    return SearchResult(ans.text, "local", context, _unit_rank(units, context, ans.records_used), ans.details)


# ---- basic ------------------------------------------------------------------------------------

def basic_search(reader, question: str, cfg: Config, engine, trace) -> SearchResult:
    k = int(cfg.search.top_k_units)
    n_ctx, pool = int(cfg.search.context_units), int(cfg.search.candidate_pool)
    with trace.stage("exploration") as d:
        ret = retrieve_units(reader, question, cfg, k=max(k, n_ctx), pool=pool)
        d["candidates"] = _cand_view(ret)
        d["retrieval"] = {"channels": ret.channels, "ms": ret.timings_ms}
    with trace.stage("focus") as d:
        units = ret.candidates[:max(k, n_ctx)]
        nxt = continuations(reader.con, [c["text_unit_id"] for c in units])
        prv = antecedents(reader.con, [c["text_unit_id"] for c in units])
        context = []
        for c in units:
            h0 = int(c["human_readable_id"])
            rec = {"kind": "source", "text": c["text"], "score": c["score"],
                   "citation": f"[Data: Sources ({h0})]", "text_unit_id": c["text_unit_id"]}
            _add_neighbours(rec, nxt.get(c["text_unit_id"]), prv.get(c["text_unit_id"]),
                            lambda h, h0=h0: f"[Data: Sources ({h0}, {h})]", lambda h, h0=h0: f"[Data: Sources ({h}, {h0})]")
            context.append(rec)
        d["selected"] = _selected_view(units)
    with trace.stage("synthesis") as d:
        ans = _answer(engine, question, context, [], cfg, ret, d)
        d["answer"] = ans.text
    return SearchResult(ans.text, "basic", context, _unit_rank(units, context, ans.records_used), ans.details)


def _unit_rank(units: list[dict], context: list[dict], used: list[int]) -> dict[str, int]:
    """Rank of each context unit for ordering the answer's sources: the units the answer's
    sentences were taken from come first, in answer order (the first source is the page that
    holds the best sentence, not an entity's or relationship's other unit that happens to
    rank higher in retrieval), then the rest of the context in retrieval order."""
    order: list[str] = []
    for ri in used:
        if 0 <= ri < len(context):
            uid = context[ri].get("text_unit_id")
            if uid and uid not in order:
                order.append(uid)
    for c in units:
        if c["text_unit_id"] not in order:
            order.append(c["text_unit_id"])
    return {u: i for i, u in enumerate(order)}


def _answer(engine, question: str, context: list[dict], extra: list[dict], cfg: Config, ret, d: dict):
    """The engine's answer from the context (and, for a model, the graph context too); the
    question's index terms and their idf go with it, for an engine that ranks by them."""
    k = cfg.search.top_k_units
    records = context if engine.name == "offline" else context[:k] + extra
    ans = engine.answer(question, records, QueryTerms(list(ret.query_terms), ret.idf))
    if ans.details:
        d["extract"] = ans.details
    return ans


def _cand_view(ret) -> list[dict]:
    return [{"kind": "text_unit", "id": c["human_readable_id"], "text_unit_id": c["text_unit_id"],
             "document": c["document"], "page_start": c["page_start"], "page_end": c["page_end"],
             "score": c["score"], "bm25": c["bm25"], "cosine": c["cosine"]} for c in ret.candidates]


def _selected_view(units: list[dict]) -> list[dict]:
    return [{"kind": "text_unit", "key": c["text_unit_id"], "text_unit_id": c["text_unit_id"],
             "id": c["human_readable_id"], "label": f"Sources ({c['human_readable_id']})", "document": c["document"],
             "path": c["path"], "page_start": c["page_start"], "page_end": c["page_end"], "score": c["score"]}
            for c in units]


def run_method(method: str, reader, question: str, cfg: Config, engine, trace, entities=None) -> SearchResult:
    """One search method over the open index, its stages recorded in `trace`."""
    if method == "global":
        return global_search(reader, question, cfg, engine, trace)
    if method == "local":
        return local_search(reader, question, cfg, engine, trace, entities)
    return basic_search(reader, question, cfg, engine, trace)
