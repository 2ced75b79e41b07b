"""Ask corrects itself before giving up: when the chosen route finds no answering sentence, it
tries a route with a wider scope, at most [search] retries times, and keeps the best attempt.

Agentic Graph RAG designs escalate through their tools when retrieval falls short; provrag's
tools, narrowest first:

  local    the entities the question names, their units (local_search.py)
  basic    hybrid retrieval over every unit (basic_search.py)
  wide     basic search reading WIDE times more passages (and re-ranking more of them)
  section  the whole section around the best page found so far: the units before and after
           it in its document (SECTION_UNITS each way, about two pages), read in full

Before them, when a local or basic question names documents of the index ("How do I letterspace
text with microtype?" names microtype.pdf: query/named.py), the chosen route first reads only
those documents (`named`), so a package's own manual answers before another that mentions it.
When that attempt abstains, the routes above run as they would have, and the retries they may
take are not spent on it, but they read only the passages that name what the question names
(named.naming_units: the named documents, and the others that say the naming terms), so "Who
wrote the booktabs package?" is not answered by who wrote listings; unless those terms are
words of much of the index. A question that asks for a limit, a version or a cost
(text/asked.py: "What is the maximum line length a listing may have in the listings package?")
is confined further: the fact of a named package stands in its own documents, so the wider
routes read those documents only. Over all 606 TeX Live PDFs, the whole index held another
manual's own maximum ("line_max … Maximum length of an output line", memoir's) for that question.

A route starts after the chosen method's own (global and local go on to basic, then wide;
basic to wide, then section). Each attempt runs in its own trace, recorded whole in the ask
trace's `attempts` (route, scope, outcome, its stages); the kept attempt's stages become the
trace's own, so the provenance tables describe the answer shown. The best attempt is the first
that answers, or, when none does, the one whose reading came closest (highest confidence):
its closest passages are the abstention's. An abstention that says why no route can answer
(engine_details["final"], kept in its attempt's record: the document asked about could not be
read; "cut": the model's answer was cut at max_tokens for good, and a wider route would ask
the same looping model again; or, on any route but `named`, the learned reader read nothing
that came near an answer: `far_from_answering`) ends the search.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from provrag.config import Config
from provrag.query.context import SearchResult
from provrag.text.asked import asked_facts

ROUTES = ("local", "basic", "wide", "section")   # "named", before them, reads the documents a question names
WIDE = 3              # the wide route reads this many times the passages of the first
SECTION_UNITS = 4     # units on each side of the best one that make up "its section"


def next_routes(chosen: str) -> list[str]:
    """The wider routes after the chosen method's, in order."""
    if chosen == "global":
        return ["basic", "wide"]
    return list(ROUTES[ROUTES.index(chosen) + 1:]) if chosen in ROUTES else ["wide", "section"]


def wide_config(cfg: Config) -> Config:
    s = cfg.search
    return replace(cfg, search=replace(s, context_units=s.context_units * WIDE,
                                       candidate_pool=max(s.candidate_pool, s.context_units * WIDE),
                                       reader_passages=s.reader_passages * WIDE,
                                       reader_sentences=s.reader_sentences * 2))


def section_units(con, unit_id: str, each_side: int = SECTION_UNITS) -> list[str]:
    """The unit and its neighbours in its document (by position), `each_side` each way."""
    rows = con.execute("""
        WITH o AS (SELECT id, row_number() OVER (ORDER BY char_start, human_readable_id) AS pos
                   FROM text_units WHERE document_id = (SELECT document_id FROM text_units WHERE id = ?))
        SELECT id FROM o WHERE abs(pos - (SELECT pos FROM o WHERE id = ?)) <= ? ORDER BY pos
    """, [unit_id, unit_id, int(each_side)]).fetchall()
    return [r[0] for r in rows]


def far_from_answering(found: SearchResult, route: str, cfg: Config) -> str | None:
    """Why no wider route is worth trying after this attempt, or None: the learned reader read the
    attempt's passages and no sentence came near answering — its best probability is below
    [search] retry_from. Not after `named` (the documents a question names, read first): the
    routes after it read the whole index, which that attempt did not.

    Measured, not assumed (bench/results/retry-from-2026-11-30.md): on the 847 questions of the
    five dev sets, 413 first whole-index attempts abstained; below 0.2 (350 of them) a wider
    route never answered, and those retries took a third of their time; the four it answered
    read 0.27-0.50 first. A wider route reads more passages of the same index with the same
    reader, so a question nothing came near stays unanswered; near the threshold it can tip."""
    floor = float(cfg.search.retry_from)
    if not found.abstained or found.abstained_by != "reader" or route == "named" or floor <= 0:
        return None
    best = float(found.confidence or 0.0)
    if best >= floor:
        return None
    nowhere = found.engine_details.get("names_nowhere")
    if nowhere:   # read() read nothing: no term of the index is the name (near_miss.names_nowhere)
        return f"it names {', '.join(nowhere)}, which the index holds nowhere"
    return (f"nothing read came near an answer (best probability {best:.2f}; a wider route is tried "
            f"from {floor:g}, [search] retry_from)")


def _better(a: SearchResult, b: SearchResult | None) -> bool:
    """Whether attempt a beats b: an answer beats an abstention; then the higher confidence."""
    if b is None:
        return True
    if a.abstained != b.abstained:
        return not a.abstained
    return (a.confidence or 0.0) > (b.confidence or 0.0)


def search_with_retries(reader, question: str, cfg: Config, engine, trace, chosen: str, entities,
                        run_route: Callable, check: Callable | None = None) -> tuple[SearchResult, str]:
    """(the kept attempt's result, its route). `run_route(route, cfg, trace, restrict, said)` runs one
    search (`said`: the terms that named the documents `restrict` confines it to, or []);
    `check(result, trace)` checks its answer (ask's answer check) and may turn it into an
    abstention. Every attempt is recorded in trace["attempts"]; the kept one's stages are appended
    to the trace's."""
    from provrag.query.trace import Trace

    routes = [chosen] + next_routes(chosen)[:int(cfg.search.retries)]
    named = None
    if chosen in ("local", "basic"):
        from provrag.query.named import named_scope

        named = named_scope(reader.con, getattr(reader, "path", None), question)
        if named is not None:
            routes.insert(0, "named")
    confined = named is not None and bool(asked_facts(question))
    if confined:
        routes.remove(chosen)   # the named attempt is the chosen route over the named documents
    naming = None   # the named documents' units and the others that name them (made when `named` abstained)
    attempts: list[dict] = []
    kept, kept_route, kept_stages = None, chosen, []
    for n, route in enumerate(routes):
        sub = Trace("ask", question)
        t0 = time.perf_counter()
        scope: dict = {}
        restrict = None
        said: list[str] = []   # the terms that named the documents read (named.py): no sentence there differs by them
        use = cfg
        if route == "named":
            restrict, said = named.unit_ids, named.terms
            scope = named.to_json()
        elif route == "wide":
            use = wide_config(cfg)
            scope = {"context_units": use.search.context_units, "reader_passages": use.search.reader_passages}
        elif route == "section":
            best = (kept.closest[:1] if kept is not None else []) or []
            if not best:
                attempts.append({"attempt": n + 1, "route": route, "skipped": "no best page to read around"})
                continue
            restrict = section_units(reader.con, best[0])
            s = cfg.search
            use = replace(cfg, search=replace(s, context_units=len(restrict), reader_passages=len(restrict),
                                              reader_sentences=s.reader_sentences * 2))
            scope = {"around": best[0], "units": len(restrict)}
        if confined and route in ("local", "basic", "wide"):
            restrict, said = named.unit_ids, named.terms
            scope = {**scope, "documents": named.documents}
        elif named is not None and route in ("local", "basic", "wide"):
            if naming is None:
                from provrag.query.named import naming_units

                naming = naming_units(reader.con, getattr(reader, "path", None), named) or []
            if naming:
                restrict, said = naming, named.terms
                scope = {**scope, "naming": named.terms, "units": len(naming)}
        found = run_route(chosen if route == "named" else route if route in ("global", "local") else "basic",
                          use, sub, restrict, said)
        if check is not None and not found.abstained:
            found = check(found, sub)
        cut = found.engine_details.get("cut")
        why_final = (cut if found.abstained and cut else None) or far_from_answering(found, route, cfg)
        if why_final and not found.engine_details.get("final"):
            found = replace(found, engine_details={**found.engine_details, "final": why_final})
        final = found.engine_details.get("final") if found.abstained else None
        data = sub.finish()
        attempts.append({"attempt": n + 1, "route": route, "scope": scope, "abstained": found.abstained,
                         "abstained_by": found.abstained_by, "confidence": found.confidence,
                         "answer": found.answer[:400], "ms": round((time.perf_counter() - t0) * 1000, 1),
                         "stages": data["stages"], **({"final": final} if final else {})})
        if _better(found, kept):
            kept, kept_route, kept_stages = found, route, data["stages"]
        if not found.abstained or final:
            break   # an answer; or an abstention no wider route can change (it says why in "final")
    for a in attempts:
        a["kept"] = a.get("route") == kept_route and "skipped" not in a
    trace.data["stages"].extend(kept_stages)
    trace["attempts"] = attempts
    return kept, kept_route
