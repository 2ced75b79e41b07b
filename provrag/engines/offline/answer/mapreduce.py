"""The offline engine's global search steps: GraphRAG's map and reduce over community reports.

map_points reads each report's findings — in an offline index, statements quoted from the
community's text units, each citing its unit (engines/offline/report.py); in a GraphRAG index,
the model's paragraphs — and scores their sentences against the question with the local
answerer's scorer (scoring.rank_sentences, with the index-wide idf of the question's terms
when the caller has it). A point is one sentence citing its report, and its unit where the
finding names one: `[Data: Reports (n); Sources (u)]`, so the resolver reaches the page that
says it. Its score (0–100, GraphRAG's scale) is the share of the question's idf-weighted terms
the sentence holds; `strength`, the scorer's full sentence score, orders points of one score.
A report without findings is read whole (title, summary, full_content), as before.

A broad question ("main themes", "summarise") has no terms to match. When global search hands
over themes (query/themes.py: a document's parts, or the collection's documents grouped by
report), each theme is one point, its cited `line` as written there, scored by the share of
the text it covers; reduce lists them largest first within `[search] global_words` words, and
names the themes that did not fit ("Also: …") rather than dropping them silently. Over plain
reports (a GraphRAG index) every report offers its most central finding as a point, scored by the size of its community (global search's
relevance for a broad question: the share of the collection the theme covers), the report's
rating breaking ties.

reduce_answer keeps the best points, one per theme: near-duplicates are merged (their report
and source ids joined, ≤ 5 each plus `+more`, as GraphRAG writes them); for a broad question a
report gives one sentence at most, and up to `[search] global_themes` themes are listed; a
specific question is answered as the local answer is: its best points re-ordered by the
MiniLM reranker (selection.select: on the SQuAD dev split the gold page comes first for 28 % of
questions instead of 25 %, bench/ask_quality.py --methods global), then cut to what answers it
(focus.focus), `[search] answer_sentences` at most.
"""
from __future__ import annotations

import re

from provrag.config import Config
from provrag.engines.offline.answer.scoring import rank_sentences
from provrag.engines.offline.answer.wording import NO_ANSWER, clean, closed, normalised
from provrag.text.questions import is_broad
from provrag.text.sentences import is_heading, split_sentences

_PER_REPORT = 2          # points one report gives to a specific question
_KIND_IDS = re.compile(r"\b(Reports|Sources)\s*\(([^)]*)\)", re.I)
_BLOCK = re.compile(r"\[Data:([^\]]*)\]", re.I)


def cited_ids(text: str) -> dict[str, list[int]]:
    """The Reports and Sources ids cited in `text`'s `[Data: …]` blocks, in order, each once."""
    out: dict[str, list[int]] = {"Reports": [], "Sources": []}
    for block in _BLOCK.findall(text or ""):
        for kind, ids in _KIND_IDS.findall(block):
            bucket = out[kind.capitalize()]
            bucket.extend(int(x) for x in re.findall(r"\d+", ids) if int(x) not in bucket)
    return out


def _ids(ids: list[int], max_ids: int = 5) -> str:
    return ", ".join(str(i) for i in ids[:max_ids]) + (", +more" if len(ids) > max_ids else "")


def format_reports(ids: list[int], max_ids: int = 5) -> str:
    """`[Data: Reports (4, 0, 3, +more)]`: at most five ids, then +more (GraphRAG's rule)."""
    return f"[Data: Reports ({_ids(ids, max_ids)})]"


def format_citation(reports: list[int], sources: list[int]) -> str:
    """`[Data: Reports (…); Sources (…)]`, each kind cut at five ids with `+more`."""
    parts = [f"Reports ({_ids(reports)})"] if reports else []
    parts += [f"Sources ({_ids(sources)})"] if sources else []
    return f"[Data: {'; '.join(parts)}]" if parts else ""


def _records(reports: list[dict]) -> list[dict]:
    """One record per finding (its text without `[Data: …]` blocks, whose ids are no words of it,
    and the units it cites), or per report when it has none; `score` is the report's relevance,
    the scorer's prior."""
    records = []
    for r in reports:
        base = {"community": int(r["community"]), "score": float(r.get("score") or 0.0),
                "rank": float(r.get("rank") or 0.0)}
        findings = [f for f in (r.get("findings") or []) if isinstance(f, dict) and f.get("explanation")]
        for f in findings:
            text = str(f["explanation"])
            records.append({**base, "text": _BLOCK.sub(" ", text), "sources": cited_ids(text)["Sources"]})
        if not findings:
            whole = r.get("full_content") or "\n\n".join(x for x in (r.get("title"), r.get("summary")) if x)
            records.append({**base, "text": _BLOCK.sub(" ", whole), "sources": []})
    return records


def _point(sentence: str, rec: dict, score: float, strength: float) -> dict:
    return {"description": f"{closed(sentence)} {format_citation([rec['community']], rec['sources'])}",
            "score": int(round(max(0.0, min(100.0, score)))), "strength": round(strength, 6),
            "reports": [rec["community"]], "sources": list(rec["sources"])}


def _theme_points(records: list[dict]) -> list[dict]:
    """A broad question: each report's most central statement (the first sentence of its first
    finding), scored by the report's relevance, which global search sets for a broad question
    to its community's size over the largest's (the share of the collection the theme covers),
    the report's rating breaking ties."""
    points, seen = [], set()
    for rec in records:
        if rec["community"] in seen:
            continue
        spans = split_sentences(rec["text"])
        sentence = clean(rec["text"][spans[0][0]:spans[0][1]]) if spans else ""
        if len(sentence.split()) < 4 or is_heading(sentence):
            continue
        seen.add(rec["community"])
        points.append(_point(sentence, rec, max(1.0, 100.0 * rec["score"]), rec["rank"]))
    return points


def _line_points(themes: list[dict]) -> list[dict]:
    """One point per theme global search composed (its `line`, already cited, and its `short`
    form: name and citation), scored by the share of the text the theme covers (1–100)."""
    return [{"description": t["line"], "short": str(t.get("short") or ""),
             "score": int(max(1, min(100, round(100 * float(t.get("score") or 0))))),
             "strength": float(t.get("rank") or 0.0), "label": str(t.get("label") or t.get("title") or ""),
             "reports": [t["community"]] if t.get("community") is not None else [],
             "sources": list(t.get("sources") or []), "theme": True} for t in themes]


def _theme_answer(points: list[dict], budget: int) -> str:
    """Theme lines, largest first, within `budget` words: as many whole lines as leave room for
    the short form (name and citation) of every theme after them; then those short forms; the
    themes even those cannot hold are counted ("and 3 more"), never dropped unsaid."""
    def words(text: str) -> int:
        return len(text.split())

    full = [str(p["description"]) for p in points]
    short = [str(p.get("short") or "") for p in points]
    k = len(points)
    while k and sum(map(words, full[:k])) + sum(words(x) + 1 for x in short[k:] if x) > budget:
        k -= 1
    lines, used = full[:k], sum(map(words, full[:k]))
    also, more = [], 0
    for p, brief in zip(points[k:], short[k:]):
        if not brief:
            if used + words(p["description"]) <= budget:  # no short form: the whole line or nothing
                lines.append(str(p["description"]))
                used += words(p["description"])
            else:
                more += 1
            continue
        if used + words(brief) + 4 > budget:
            more += 1
            continue
        also.append(brief)
        used += words(brief) + 1
    out = "\n".join(f"- {x}" for x in lines)  # a markdown list: one theme a line wherever it is rendered
    if also:
        out += "\n\nAlso: " + "; ".join(also) + (f"; and {more} more." if more else ".")
    elif more:
        out += f"\n\nAnd {more} more."
    return out


def map_points(question: str, reports: list[dict], cfg: Config, idf: dict[str, float] | None = None,
               qterms: list[str] | None = None) -> list[dict]:
    """Points (description citing its report and unit, score 0–100) from a batch of reports."""
    if is_broad(question) and reports and all(r.get("line") for r in reports):
        return _line_points(reports)
    records = _records(reports)
    if not records:
        return []
    if is_broad(question):
        return _theme_points(records)
    ranked = rank_sentences(question, records, idf=idf, prior_weight=0.1, qterms=qterms)
    count: dict[int, int] = {}
    points = []
    for c in ranked:
        rec = records[c["record"]]
        if count.get(rec["community"], 0) >= _PER_REPORT or c["coverage"] <= 0:
            continue
        if c["sentence"].startswith("#") or len(c["sentence"].split()) < 4:
            continue  # markdown headings and fragments are not points
        count[rec["community"]] = count.get(rec["community"], 0) + 1
        point = _point(c["sentence"], rec, 100.0 * c["coverage"], c["score"])
        point["paragraph"] = clean(c.get("paragraph") or c["sentence"])  # the finding it stands in
        if "type_factor" in c:
            point["type_factor"] = c["type_factor"]
        points.append(point)
    return points


def _merged(points: list[dict]) -> list[dict]:
    """The points in order, each near-duplicate (token-set similarity ≥ 85) folded into the first
    that says the same, their report and source ids joined."""
    from rapidfuzz import fuzz

    out: list[dict] = []
    for p in points:
        desc = str(p.get("description", ""))
        text, ids = clean(desc), cited_ids(desc)
        if not text:
            continue
        same = next((m for m in out if fuzz.token_set_ratio(normalised(text), normalised(m["text"])) >= 85), None)
        if same is None:
            out.append({"text": text, "reports": ids["Reports"], "sources": ids["Sources"],
                        "strength": float(p.get("strength") or 0.0), "paragraph": p.get("paragraph") or text,
                        "type_factor": p.get("type_factor", 1.0)})
        else:
            same["reports"] += [x for x in ids["Reports"] if x not in same["reports"]]
            same["sources"] += [x for x in ids["Sources"] if x not in same["sources"]]
    return out


def _answering(question: str, merged: list[dict], n: int, cfg: Config, idf: dict[str, float] | None) -> list[dict]:
    """A specific question's points as the local answer picks its sentences: the best
    `rerank_sentences` re-ordered by the scorer's strength plus MiniLM's reading of question and
    sentence (selection.select; unchanged with [search] rerank = "none"), then cut to what
    answers the question (focus.focus: a further point only when it is as strong and about the
    same subject)."""
    from provrag.engines.offline.answer.focus import focus
    from provrag.engines.offline.answer.selection import select

    head = merged[:max(n, int(cfg.search.rerank_sentences))]
    cands = [{"sentence": m["text"], "score": m["strength"], "record": i, "start": 0, "paragraph": m["paragraph"],
              "type_factor": m["type_factor"]} for i, m in enumerate(head)]
    picked = select(question, [], len(head), ranked=cands, cfg=cfg, min_score=float("-inf"))
    return [head[c["record"]] for c in focus(question, picked, [{"text": m["text"]} for m in head], idf or {}, n)]


def reduce_answer(question: str, points: list[dict], cfg: Config, idf: dict[str, float] | None = None) -> str:
    """The best points, one per theme, near-duplicates merged (their ids joined), each cited.
    `idf`: the index-wide idf of the question's terms, when the caller has it."""
    broad = is_broad(question)
    if broad and points and all(p.get("theme") for p in points):
        return _theme_answer(points, int(cfg.search.global_words))  # in the order global search gave the themes
    n = int(cfg.search.global_themes if broad else cfg.search.answer_sentences)
    good = sorted((p for p in points if int(p.get("score") or 0) > 0),
                  key=lambda p: (-int(p["score"]), -float(p.get("strength") or 0.0)))
    merged = _merged(good)
    if not broad:  # "main themes" has no words for a reader to weigh sentences by
        merged = _answering(question, merged, n, cfg, idf)
    kept, themes = [], set()
    for m in merged:
        theme = m["reports"][0] if m["reports"] else None
        if broad and theme in themes:
            continue  # one sentence per theme
        themes.add(theme)
        kept.append(m)
        if len(kept) >= n:
            break
    if not kept:
        return NO_ANSWER
    return " ".join(f"{closed(m['text'])} {format_citation(m['reports'], m['sources'])}".strip() for m in kept)
