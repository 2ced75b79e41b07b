"""The offline engine's global search steps: GraphRAG's map and reduce over community reports.

map_points turns each report's best sentences (the local answerer's scorer) into points
scored 0–100 that cite the report; for a broad question ("main themes", "summarise") every
report's own summary is a point too, weighted by the report's rating. reduce_answer keeps the
best points and merges the report ids of points that say the same thing (≤ 5 ids plus
`+more`, as GraphRAG does).
"""
from __future__ import annotations

import re
from collections import Counter

from provrag.config import Config
from provrag.engines.offline.answer.scoring import rank_sentences
from provrag.engines.offline.answer.wording import NO_ANSWER, clean, closed, normalised
from provrag.text.questions import is_broad
from provrag.text.sentences import split_sentences


def _report_text(r: dict) -> str:
    return r.get("full_content") or "\n\n".join(x for x in (r.get("title"), r.get("summary")) if x)


def map_points(question: str, reports: list[dict], cfg: Config) -> list[dict]:
    """Points (description citing its report, score 0–100) from a batch of reports."""
    per_report = 2
    records = [{"text": _report_text(r), "citation": f"[Data: Reports ({int(r['community'])})]",
                "score": float(r.get("score") or 0.0), "community": int(r["community"])} for r in reports]
    if not records:
        return []
    ranked = rank_sentences(question, records, prior_weight=0.1)
    count: Counter = Counter()
    points = []
    for c in ranked:
        rec = records[c["record"]]
        if count[c["record"]] >= per_report or c["coverage"] <= 0:
            continue
        if c["sentence"].startswith("#") or len(c["sentence"].split()) < 4:
            continue  # markdown headings and fragments are not points
        count[c["record"]] += 1
        points.append({"description": f"{closed(c['sentence'])} {rec['citation']}",
                       "score": int(round(min(100.0, 100.0 * c["coverage"]))),
                       "reports": [rec["community"]]})
    if is_broad(question):
        # "main themes", "summarise": every report's own summary is a point, weighted by the
        # report's rating (GraphRAG's map step answers broad questions from the whole report)
        for rec, r in zip(records, reports):
            summary = r.get("summary") or ""
            spans = split_sentences(summary)
            if not spans:
                continue
            first = clean(summary[spans[0][0]:spans[0][1]])
            if len(first.split()) >= 4:
                rank = float(r.get("rank") or 5.0)
                points.append({"description": f"{closed(first)} {rec['citation']}",
                               "score": int(round(max(1.0, min(100.0, 8.0 * rank)))), "reports": [rec["community"]]})
    return points


def _split_point(desc: str) -> tuple[str, list[int]]:
    ids = [int(x) for block in re.findall(r"\[Data:\s*Reports\s*\(([^)]*)\)\]", desc, re.I)
           for x in re.findall(r"\d+", block)]
    return clean(desc), ids


def format_reports(ids: list[int], max_ids: int = 5) -> str:
    """`[Data: Reports (4, 0, 3, +more)]`: at most five ids, then +more (GraphRAG's rule)."""
    shown = ", ".join(str(i) for i in ids[:max_ids])
    return f"[Data: Reports ({shown}{', +more' if len(ids) > max_ids else ''})]"


def reduce_answer(question: str, points: list[dict], cfg: Config) -> str:
    """The best points, near-duplicates merged (their report ids joined), each cited."""
    n = int(cfg.search.answer_sentences)
    good = sorted((p for p in points if int(p.get("score") or 0) > 0), key=lambda p: -int(p["score"]))
    if not good:
        return NO_ANSWER
    kept: list[tuple[str, list[int]]] = []
    from rapidfuzz import fuzz

    for p in good:
        text, ids = _split_point(str(p.get("description", "")))
        if not text:
            continue
        for i, (kt, kids) in enumerate(kept):
            if fuzz.token_set_ratio(normalised(text), normalised(kt)) >= 85:
                kept[i] = (kt, kids + [x for x in ids if x not in kids])
                break
        else:
            if len(kept) < n:
                kept.append((text, ids))
    return " ".join(f"{closed(t)} {format_reports(ids)}" if ids else closed(t) for t, ids in kept)
