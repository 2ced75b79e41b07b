"""GraphRAG's global search: map-reduce over community reports.

Reports of level ≤ [search] global_level are scored against the question in SQL (BM25 over
term counts taken with regexes inside DuckDB), the best are packed into batches, each batch is
mapped to scored points citing `[Data: Reports (…)]`, and the best points are reduced into
the answer.
"""
from __future__ import annotations

import math
import re

from provrag.config import Config
from provrag.query.context import SearchResult
from provrag.text.words import STOP_WORDS, WORD, term_stem

_CHARS_PER_TOKEN = 4  # batching estimate (no tokenizer load per report: ~4 chars per cl100k token in English)


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

