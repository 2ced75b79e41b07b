"""Stage 8 — reports: one GraphRAG community report per community, through the engine.

The engine gets a context (engines/base.py): the community's entities (by degree), its
relationships (by combined degree, then weight) and its text units (those mentioning most of
its entities first), cut to `[reports].max_input_tokens` cl100k tokens as GraphRAG caps report
input (~8k). Entities and relationships may use at most 30 % of the budget each, text units
the rest. The context also says what the index measured of the community: its key phrases
(c-TF-IDF of its units against the other communities of its level, text/phrases.py), its
coverage (its text units and the index's), and for each unit the document part it is in
("R FAQ › R and Emacs", from index/sections.py) — what a report names its title, sub-themes and
rating by. Whatever the engine answers is checked and rendered into GraphRAG's columns:
`full_content` is the markdown GraphRAG renders ("# title", summary, one "## finding" section
each), `full_content_json` the report JSON, `rank` the rating.

The report id hashes the community number with full_content (GraphRAG hashes full_content
alone; adding the number keeps ids unique if two communities ever read alike).
"""
from __future__ import annotations

import json

from provrag.config import Config
from provrag.index.progress import stage
from provrag.index.tables import frame
from provrag.store import schema

_PHRASE_UNITS = 60  # units of one community counted for its key phrases (evenly spread: bounds huge communities)


def _context(c: dict, ents: dict, rels: dict, units: dict, budget: int, sizes: dict, about: dict) -> dict:
    from provrag.text.tokens import count_tokens

    e_rows = sorted((ents[i] for i in c["entity_ids"] if i in ents),
                    key=lambda e: (-int(e["degree"] or 0), e["human_readable_id"]))
    r_rows = sorted((rels[i] for i in c["relationship_ids"] if i in rels),
                    key=lambda r: (-int(r["combined_degree"] or 0), -float(r["weight"] or 0), r["human_readable_id"]))
    members = set(c["entity_ids"])
    u_rows = sorted((units[u] for u in c["text_unit_ids"] if u in units),
                    key=lambda u: (-len(members.intersection(u["entity_ids"] or [])), u["human_readable_id"]))

    def take(rows, fields, share):
        out, used = [], 0
        for r in rows:
            rec = {f: r[f] for f in fields}
            n = sizes.get(r["id"])  # a record recurs in its community at every level: count once
            if n is None:  # one by one: tiktoken's batch call starts a thread pool per call
                n = sizes[r["id"]] = count_tokens(json.dumps(rec, ensure_ascii=False, default=str))
            if used + n > share and out:
                break
            out.append(rec)
            used += n
        return out, used

    e_ctx, e_used = take(e_rows, ("human_readable_id", "title", "type", "description", "degree"), int(budget * 0.3))
    r_ctx, r_used = take(r_rows, ("human_readable_id", "source", "target", "description", "weight"), int(budget * 0.3))
    # a unit's human_readable_id lets a report quote it with `[Data: Sources (n)]`
    u_ctx, _ = take(u_rows, ("id", "human_readable_id", "text"), max(0, budget - e_used - r_used))
    for u in u_ctx:  # the part of its document a unit is in: the sub-themes a report names
        if about["sections"].get(u["id"]):
            u["section"] = about["sections"][u["id"]]
    return {"community": int(c["community"]), "level": int(c["level"]),
            "entities": e_ctx, "relationships": r_ctx, "text_units": u_ctx,
            "key_phrases": about["phrases"].get(int(c["community"]), []),
            "coverage": {"text_units": len(c["text_unit_ids"] or []), "of": about["n_units"]}}


def _about(communities, text_units, units: dict, sections, titles: dict[str, str]) -> dict:
    """What every report's context shares: each community's key phrases (c-TF-IDF of its units
    against the other communities of its level, text/phrases.py), each unit's document part
    ("R FAQ › R and Emacs", from the sections table) and the index's number of text units."""
    from provrag.text.phrases import class_phrases, unit_counts

    from provrag.index.sections import spread

    classes = {int(c): spread([u for u in us or [] if u in units], _PHRASE_UNITS)
               for c, us in communities.select("community", "text_unit_ids").rows()}
    order = {u: i for i, u in enumerate(dict.fromkeys(u for us in classes.values() for u in us))}
    counts, terms = unit_counts([units[u]["text"] or "" for u in order])
    phrases: dict[int, list[str]] = {}
    for level in sorted(set(communities["level"].to_list())):
        at = [int(c) for c in communities.filter(communities["level"] == level)["community"].to_list()]
        found = class_phrases(counts, terms, [[order[u] for u in classes[c]] for c in at], top=6)
        phrases.update(zip(at, found))
    labels: dict[str, str] = {}
    if sections is not None and sections.height:
        from provrag.index.sections import plain_heading

        for doc, level, title, origin, ids in sections.select("document_id", "level", "title", "origin",
                                                              "text_unit_ids").rows():
            if level != 0:
                continue
            name = plain_heading(title) if origin != "segments" else title
            label = f"{titles[doc]} › {name}" if titles.get(doc) else name
            for u in ids or []:
                labels.setdefault(u, label)
    return {"phrases": phrases, "sections": labels, "n_units": text_units.height}


def _clean(report) -> dict:
    """The engine's answer coerced into GraphRAG's report shape (never raises)."""
    report = report if isinstance(report, dict) else {}
    try:
        rating = float(report.get("rating", 0) or 0)
    except (TypeError, ValueError):
        rating = 0.0
    rating = min(10.0, max(0.0, rating)) if rating == rating else 0.0
    findings = []
    for f in report.get("findings") or []:
        if isinstance(f, dict) and (f.get("summary") or f.get("explanation")):
            findings.append({"summary": str(f.get("summary") or ""), "explanation": str(f.get("explanation") or "")})
        elif isinstance(f, str) and f.strip():
            findings.append({"summary": "", "explanation": f.strip()})
    return {"title": str(report.get("title") or "").strip() or "Report", "summary": str(report.get("summary") or ""),
            "findings": findings, "rating": rating, "rating_explanation": str(report.get("rating_explanation") or "")}


def render(report: dict) -> str:
    """GraphRAG's markdown rendering of a report."""
    sections = "\n\n".join(f"## {f['summary']}\n\n{f['explanation']}" for f in report["findings"])
    return f"# {report['title']}\n\n{report['summary']}\n\n{sections}"


def write_report(engine, context: dict) -> dict:
    """One community's report, in GraphRAG's shape (an executor's item; the engine is shared)."""
    return _clean(engine.community_report(context))


def reports_stage(communities, entities, relationships, text_units, engine, cfg: Config, progress=None, cache=None,
                  executor=None, sections=None, document_titles: dict[str, str] | None = None):
    """The community_reports table (polars), one row per community, in community order.

    `cache` (store/cache.Cache): a report is a function of its context, the engine and the
    [reports] settings, so one written for the same input before is reused — an index update
    writes reports only for communities whose members or their text changed. The others are
    written by `executor` (provrag/executors/): the offline engine's anywhere, a model's in
    this process (its client holds [llm] concurrency and rate limit), one at a time, so the
    engine's counters tell whether each was the model's. `sections` (index/sections.py) and
    `document_titles` ({document id: title}) name the document part each unit is in."""
    import polars as pl

    from provrag.executors import cached_map, default_executor, engine_kind
    from provrag.store.cache import key_of

    budget = max(500, int(cfg.reports.max_input_tokens))
    if communities is None or communities.height == 0:
        return frame(schema.COMMUNITY_REPORTS, [])
    ents = {r["id"]: r for r in entities.iter_rows(named=True)}
    rels = {r["id"]: r for r in relationships.iter_rows(named=True)}
    needed = {u for us in communities["text_unit_ids"].to_list() for u in (us or [])}
    units = {r["id"]: r for r in text_units.select("id", "human_readable_id", "text", "entity_ids")
             .filter(pl.col("id").is_in(list(needed))).iter_rows(named=True)}
    rows, sizes = [], {}
    ordered = communities.sort("community")
    lost = [engine.usage.not_by_model("report")]

    def by_model(report: dict) -> bool:
        """Was the report just written the model's? (a stand-in is asked for again next run)"""
        before, lost[0] = lost[0], engine.usage.not_by_model("report")
        return lost[0] == before

    about = _about(ordered, text_units, units, sections, document_titles or {})
    contexts = (_context(c, ents, rels, units, budget, sizes, about) for c in ordered.iter_rows(named=True))
    reports = cached_map(executor or default_executor(cfg), write_report, contexts, kind=engine_kind(engine),
                         shared=engine, cache=cache, keep=by_model,
                         key=lambda context: key_of("community_report", engine.name, engine.model, cfg.reports,
                                                    context))
    with stage(progress, "reports", communities.height) as task:
        for c, report in zip(ordered.iter_rows(named=True), reports):
            full = render(report)
            rows.append({
                schema.ID: schema.content_id("community_report", str(c["community"]), full),
                schema.HRID: c["community"], schema.COMMUNITY: c["community"], schema.LEVEL: c["level"],
                schema.PARENT: c["parent"], schema.CHILDREN: c["children"] or [], schema.TITLE: report["title"],
                "summary": report["summary"], "full_content": full, "rank": report["rating"],
                "rating_explanation": report["rating_explanation"],
                "findings": [{"explanation": f["explanation"], "summary": f["summary"]} for f in report["findings"]],
                "full_content_json": json.dumps(report, ensure_ascii=False, indent=4),
                "period": c["period"], "size": c["size"],
            })
            task.advance()
    return frame(schema.COMMUNITY_REPORTS, rows)
