"""`provrag ask`: a question in, a cited answer with sources by page and a stored trace out.

Stages, top to bottom (each recorded in the trace, provrag/store/traces.py):
  question     terms of the question, entities it names, the method and why
  exploration  candidates with scores (text units, or community reports for global)
  focus        the selected context
  synthesis    map points and the answer (engine: offline extractive, or a model)
  citations    every `[Data: …]` of the answer resolved to document + page + quote
then the trace is saved (INDEX/queries/, or the user fallback for read-only folders).
"""
from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.query.trace import Trace
from provrag.results import CLOSEST_VIA, FURTHER_VIA, AskResult, Source
from provrag.store.traces import save_trace


class AskError(UsageError):
    """Bad question, index or method (one-line message; the CLI exits 2)."""


def attach_index_cache(engine, index_path: Path) -> None:
    """A model engine's replies are cached in the index (a re-asked question costs nothing),
    but only in an index provrag built and may write (never an audited GraphRAG folder)."""
    from provrag.store.cache import index_cache

    if engine.name != "offline":
        cache = index_cache(index_path, "llm")
        if cache is not None:
            engine.attach_cache(cache)


def count_embedder(reader, engine, manifest: dict | None = None) -> None:
    """An index whose embedder is a server's embeds the question with a request like the model's:
    counted in the engine's usage, so the trace's `usage` holds every request the question cost.
    `manifest`: the index's, when the caller has read it already."""
    manifest = reader.manifest() if manifest is None else manifest
    if (manifest.get("engine") or {}).get("embedder") == "openai":
        embedder = reader.embedder()
        if hasattr(embedder, "share_usage"):
            embedder.share_usage(engine.usage)


def order_sources(sources: list[Source], unit_rank: dict[str, int]) -> list[Source]:
    """Best page first: by the answer sentence that cites them (answers are written best
    sentence first), then by the unit's rank in the selected context, then by the
    resolver's claim-aware score; one entry per text unit."""
    def key(s: Source):
        si = s.sentence_index
        return (si if si is not None else 1 << 30, unit_rank.get(s.text_unit_id, 1 << 30), -float(s.score or 0.0))

    seen, out = set(), []
    for s in sorted(sources, key=key):
        k = s.text_unit_id or (s.document, s.page_start, s.quote)
        if k in seen:
            continue
        seen.add(k)
        out.append(s)
    return out


def closest_sources(reader, question: str, unit_ids: list[str], via: str = CLOSEST_VIA,
                    listed: list[Source] = (), limit: int | None = None) -> list[Source]:
    """Passages shown for what they are, never citations: an abstention's nearest ones, or the
    further passages an answer lists after its cited sources. Each with its page and the sentence
    that shares most of the question's words; `listed`: sources already shown, whose units and
    pages are not shown again; `limit`: at most this many."""
    from provrag.store.units import fetch_units
    from provrag.text.sentences import split_sentences
    from provrag.text.words import terms_of

    def place(doc, page, unit_id):   # a page; a unit where the index has no pages (GraphRAG's)
        return (doc, page) if page is not None else unit_id

    shown = {place(s.document, s.page_start, s.text_unit_id) for s in listed}
    cited = {s.text_unit_id for s in listed}
    unit_ids = [u for u in dict.fromkeys(unit_ids) if u not in cited]
    if limit is not None:
        if limit <= 0:
            return []
        unit_ids = unit_ids[:4 * limit]   # a few more than wanted: some share a page already shown
    wanted = set(terms_of(question))
    rows = fetch_units(reader, unit_ids)
    out = []
    for uid in unit_ids:
        unit = rows.get(uid)
        if unit is None or place(unit.document, unit.page_start, uid) in shown:
            continue
        shown.add(place(unit.document, unit.page_start, uid))
        spans = split_sentences(unit.text) or [(0, len(unit.text))]
        a, b = max(spans, key=lambda sp: (len(wanted & set(terms_of(unit.text[sp[0]:sp[1]]))), -sp[0]))
        out.append(Source.of_unit(unit, " ".join(unit.text[a:b].split()), a, b, via=via, score=0.0))
        if limit is not None and len(out) >= limit:
            break
    return out


def checked(reader, found, cfg: Config, engine, question: str, trace):
    """The answer shown is the answer checked (verify/answer_check.py): each sentence judged
    against the sources it cites; the unsupported ones removed and listed; nothing left → the
    honest abstention, with the passages the answer drew on as the closest."""
    from dataclasses import replace

    from provrag.query.context import ABSTENTION, CLOSEST
    from provrag.verify.answer_check import check_answer

    skip = found.engine_details.get("not_claims")
    if skip:
        # why the search says its answer is not claims to judge (query/global_search.py): a themes
        # answer lists documents' parts by their own headings; the offline engine's report answer
        # quotes the cited reports word for word — whether the text units hold what a report says
        # is `provrag verify`'s question, not ask's
        with trace.stage("check", "Answer check") as d:
            d["skipped"] = skip
        return found
    with trace.stage("check", "Answer check") as d:
        result = check_answer(reader, found.answer, cfg, engine, question)
        d.update(result.to_json())
        d["answer"] = result.answer if not result.emptied else ABSTENTION
    if not result.removed:
        return replace(found, raw_answer=found.answer, checked=True)
    if result.emptied:
        ranked = sorted(found.unit_rank, key=found.unit_rank.get)
        return replace(found, answer=ABSTENTION, raw_answer=found.answer, removed=result.removed, checked=True,
                       abstained=True, abstained_by="check", confidence=0.0, closest=ranked[:CLOSEST])
    return replace(found, answer=result.answer, raw_answer=found.answer, removed=result.removed, checked=True)


def run_ask(question: str, index_path, cfg: Config, method: str | None = None, save: bool = True,
            reader=None, check: bool = True) -> AskResult:
    """Answer `question` over the index: the answer, its citations and sources by page, and the
    trace of how it was made (stored unless `save` is False). `reader`: the index already open
    (a server's, kept between requests and not closed here) instead of opening `index_path`.
    `check`: judge each sentence of the answer against its cited sources and remove those they do
    not support (False: `ask --raw`, the answer as the engine gave it)."""
    from provrag.embeddings.remembered import reading_index
    from provrag.engines import get_engine
    from provrag.query.basic_search import basic_search
    from provrag.query.escalate import search_with_retries
    from provrag.query.local_search import local_search
    from provrag.query.resolve import resolve_answer
    from provrag.query.search import METHODS, choose_method, has_rows, match_entities, run_method
    from provrag.store.reader import reading

    question = (question or "").strip()
    if not question:
        raise AskError("the question is empty")
    method = (method or cfg.search.default_method or "auto").strip().lower()
    if method not in METHODS + ("auto",):
        raise AskError(f"unknown method '{method}' (expected auto, {', '.join(METHODS)})")
    # the index's stored paragraph vectors serve the answerer's MiniLM reads (embeddings/remembered.py)
    opened_here = reader is None
    with reading(index_path, reader) as reader, reading_index(getattr(reader, "path", None)):
        if opened_here:   # this ask's own reader: a unit's row is read once (a server's readers keep theirs)
            from provrag.store.units import KeptUnits

            reader.kept_units = KeptUnits()
        index_version = reader.manifest().get("index_version")
        engine = get_engine(cfg)  # a ConfigError (unknown engine, missing API key): one line, exit 2
        attach_index_cache(engine, reader.path)
        count_embedder(reader, engine)
        trace = Trace("ask", question, index=str(reader.path), index_kind=reader.kind, engine=engine.name,
                      model=engine.model)
        with trace.stage("question") as d:
            from provrag.text.words import query_terms

            d["terms"] = query_terms(question)
            entities = match_entities(reader.con, question)
            d["entities"] = [{"id": e["human_readable_id"], "title": e["title"]} for e in entities]
            if method == "auto":
                chosen, why = choose_method(reader, question, cfg, entities)
            else:
                chosen, why = method, "asked for with --method"
            if chosen == "global" and not has_rows(reader.con, "community_reports"):
                chosen, why = "basic", f"{why}; but the index has no community reports, so basic search"
            d["method"], d["why"] = chosen, why
        trace["method"], trace["method_why"] = chosen, why
        trace["requested_method"] = method

        def run_route(route, use, sub, restrict, said):
            if route == "basic" and restrict is not None:
                return basic_search(reader, question, use, engine, sub, restrict=restrict, said=said)
            if route == "local" and restrict is not None:
                return local_search(reader, question, use, engine, sub, entities, restrict=restrict, said=said)
            return run_method(route, reader, question, use, engine, sub, entities)

        def check_route(found, sub):
            return checked(reader, found, cfg, engine, question, sub) if check else found

        # a one-shot ask loads the models it will read while retrieval runs (engines/offline/warm.py);
        # a global answer reads none, and a server's are loaded already
        with engine.warming("ask") if opened_here and chosen != "global" else nullcontext():
            found, route = search_with_retries(reader, question, cfg, engine, trace, chosen, entities, run_route,
                                               check_route)

        with trace.stage("citations") as d:
            resolved = resolve_answer(reader, found.answer, top_k=int(cfg.resolve.top_k))
            sources = order_sources(resolved.sources, found.unit_rank)
            # every unit each cited sentence resolved to (sources keep one entry per unit): the citations table
            d["resolved"] = [{"sentence_index": s.sentence_index, "text_unit_id": s.text_unit_id, "document": s.document,
                              "page_start": s.page_start, "page_end": s.page_end, "via": s.via} for s in resolved.sources]
            if found.abstained:
                sources = closest_sources(reader, question, found.closest)
                d["closest"] = len(sources)
            elif sources and found.method != "global":
                # "which page says that?": when the cited page is not the one, the next best are
                # listed after it, up to [search] sources_listed in all, each marked as not cited.
                # Retrieval's order (the context's), not the reader's passage head: on the dev sets
                # it puts the page that answers among the first five more often
                # (bench/results/further-passages-2026-11-29.md)
                units = [c["text_unit_id"] for c in found.context if c.get("text_unit_id")]
                further = closest_sources(reader, question, units, FURTHER_VIA, sources,
                                          int(cfg.search.sources_listed) - len(sources))
                sources = sources + further
                d["further"] = len(further)
            unresolved = [u.to_json() for u in resolved.unresolved]
            d["citations"] = len(resolved.citations)
            d["sources"] = len(sources)
            d["unresolved"] = unresolved
            d["problems"] = resolved.problems
            d["dead_ends"] = resolved.dead_ends

    result = AskResult(trace_id=trace.id, question=question, method=chosen, answer=found.answer,
                       citations=resolved.citations, sources=sources, unresolved=resolved.unresolved,
                       has_pages=reader.kind == "provrag", abstained=found.abstained, confidence=found.confidence,
                       abstained_by=found.abstained_by, index_version=index_version, checked=found.checked,
                       removed_sentences=found.removed, raw_answer=found.raw_answer or found.answer, route=route,
                       attempts=len(trace.data.get("attempts") or [1]),
                       stopped=((trace.data.get("attempts") or [{}])[-1].get("final") if found.abstained else None))
    trace["abstained"], trace["confidence"] = found.abstained, found.confidence
    trace["abstained_by"] = found.abstained_by
    trace["index_version"] = index_version   # what its citations meant (query/since.py reads it back)
    trace["answer"] = found.answer
    trace["raw_answer"] = result.raw_answer
    trace["removed_sentences"] = found.removed   # what the answer check removed, and why
    if result.stopped:   # why no wider route was tried (the web app's trace page shows it)
        trace["stopped"] = result.stopped
    trace["route"] = route
    trace["citations"] = [c.to_json() for c in resolved.citations]
    trace["sources"] = [s.to_json() for s in sources]
    trace["unresolved"] = unresolved
    trace["usage"] = usage = engine.usage.to_dict()
    # a model step that failed: why, and what stood in (the offline engine's, unless [llm] strict)
    trace["error"] = result.error = engine.usage.failure_note(("answer", "map", "reduce"))
    result.llm = usage if engine.name != "offline" else None
    result.trace = trace.finish()
    if save:
        try:
            result.trace_file = str(save_trace(trace.data, reader.path))
        except OSError as e:  # a full disk must not cost the user the answer
            result.trace_error = f"trace not saved: {e.strerror or e}"
    return result
