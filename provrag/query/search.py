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

`choose_method` ("auto"): global for broad questions — worded as one ("main themes",
"summarise", "what is … about") and asking about no subject beyond the names of the indexed
documents (text/questions.broad_subject: "What are the main topics covered in the R FAQ?" is
broad; "Summarise what the President said about foreign relations" asks about a subject a
paragraph answers) — when the index has reports or sections; local when the question names
entities of the graph; basic otherwise. The reason is returned and stored in the trace. Each method (global_search.py,
local_search.py, basic_search.py) returns a `SearchResult` (context.py).
"""
from __future__ import annotations

from provrag.config import Config
from provrag.query.basic_search import basic_search
from provrag.query.context import SearchResult, has_rows
from provrag.query.local_search import local_search, match_entities
from provrag.query.themes import specific_subject
from provrag.text.questions import is_broad

__all__ = ["METHODS", "SearchResult", "choose_method", "has_rows", "match_entities", "run_method"]

METHODS = ("global", "local", "basic")


def choose_method(reader, question: str, cfg: Config, entities: list[dict] | None = None) -> tuple[str, str]:
    """("global" | "local" | "basic", why) for the default method "auto"."""
    con = reader.con
    reason = None
    if is_broad(question):
        subject = specific_subject(con, question)
        if subject:
            reason = (f"worded broadly, but it asks about a subject ({', '.join(subject[:5])}), not what documents "
                      "cover as a whole")
        elif has_rows(con, "community_reports") or has_rows(con, "sections"):
            return "global", ("broad question about what the documents cover (themes/summary/overview): its themes "
                              "from the documents' sections and the community reports")
        else:
            reason = "broad question, but the index has no community reports"
    if entities is None:
        entities = match_entities(con, question)
    if entities:
        names = ", ".join(e["title"] for e in entities[:5])
        return "local", f"the question names {len(entities)} entit{'y' if len(entities) == 1 else 'ies'} of the graph ({names})" \
            + (f"; {reason}" if reason else "")
    return "basic", (reason + "; " if reason else "") + "no entity of the graph is named: hybrid retrieval over text units"



def run_method(method: str, reader, question: str, cfg: Config, engine, trace, entities=None) -> SearchResult:
    """One search method over the open index, its stages recorded in `trace`."""
    if method == "global":
        from provrag.query.global_search import global_search   # a local or basic question never needs it

        return global_search(reader, question, cfg, engine, trace)
    if method == "local":
        return local_search(reader, question, cfg, engine, trace, entities)
    return basic_search(reader, question, cfg, engine, trace)
