"""The provenance tables: every trace's retrievals and citations as rows DuckDB reads as tables.

The provenance-aware vector database paper keeps a provenance table — query, retrieved chunk,
rank, time and the query's token-level influence on it — so that "why do my queries keep
retrieving this chunk?" and "which sources did my last answer use?" are one SQL query. A
trace (provrag/query/trace.py) holds all of it as nested JSON; these tables flatten it:

  retrievals  one row per retrieved candidate of an ask (text units; community reports for
              global search) or of a verify claim (its retrieved evidence units): rank
              (1 = best), score, `components` (the parts the score is the sum of, as retrieval
              combines them: query/why.py) and `influence` (the question's words that drove
              it, with weights, per channel)
  citations   one row per cited id of an answer (ask: per answer sentence; verify: per claim),
              with each text unit it resolved to (a row with a null unit when none did), and
              for verify the claim's verdict and whether that id supports it

Stored like the traces themselves (provrag/store/traces.py): one small parquet file per trace
and table, INDEX/queries/retrievals/<stamp>-<id>.parquet and …/citations/…, written atomically
(temp file + rename) and without a lock, in the same folder as the trace (the index's own, or
the user fallback of a read-only index). A trace with no such rows writes no file.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

TABLES = ("retrievals", "citations")

# the resolver's routes (provrag/query/expand.py: "Report 4 → community 4 → text unit 12",
# "Entity 7 (NAME) → text unit 3"; several joined by "; "): which cited kind and id reached a unit
_ROUTE = re.compile(r"(?:^|; )(Report|Entity|Relationship|Claim|Source) (\d+)\b")
_ROUTE_KIND = {"Report": "Reports", "Entity": "Entities", "Relationship": "Relationships", "Claim": "Claims",
               "Source": "Sources"}
_COMPONENTS = ("bm25", "cosine", "lexical", "embedding", "entity_boost", "rating", "size")


def routes_of(via) -> set[tuple[str, int]]:
    """The (citation kind, id) pairs a source's `via` names (its routes from cited ids)."""
    return {(_ROUTE_KIND[w], int(i)) for w, i in _ROUTE.findall(via if isinstance(via, str) else "")}


def schema(table: str):
    """The Arrow schema of a provenance table (pyarrow is imported here, not at import time)."""
    import pyarrow as pa

    common = [("trace_id", pa.string()), ("created", pa.string())]
    if table == "retrievals":
        return pa.schema(common + [
            ("kind", pa.string()), ("method", pa.string()), ("question", pa.string()), ("claim_index", pa.int64()),
            ("query", pa.string()), ("candidate", pa.string()), ("candidate_id", pa.int64()),
            ("text_unit_id", pa.string()), ("document", pa.string()), ("page", pa.int64()), ("page_end", pa.int64()),
            ("rank", pa.int64()), ("score", pa.float64()),
            ("components", pa.struct([(c, pa.float64()) for c in _COMPONENTS])),
            ("influence", pa.list_(pa.struct([("term", pa.string()), ("channel", pa.string()),
                                              ("weight", pa.float64())])))])
    return pa.schema(common + [
        ("trace_kind", pa.string()), ("question", pa.string()), ("sentence_index", pa.int64()),
        ("sentence", pa.string()), ("kind", pa.string()), ("id", pa.int64()), ("text_unit_id", pa.string()),
        ("document", pa.string()), ("page", pa.int64()), ("page_end", pa.int64()), ("via", pa.string()),
        ("verdict", pa.string()), ("supports", pa.bool_())])


# ---- rows from a trace ------------------------------------------------------------------------

def _int(x) -> int | None:
    try:
        return int(x) if x is not None and not isinstance(x, bool) else None
    except (TypeError, ValueError):
        return None


def _float(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _dicts(x) -> list[dict]:
    return [d for d in x if isinstance(d, dict)] if isinstance(x, list) else []


def _stage(trace: dict, name: str) -> dict:
    for s in _dicts(trace.get("stages")):
        if s.get("name") == name and isinstance(s.get("data"), dict):
            return s["data"]
    return {}


def _retrieval(base: dict, n: int, c: dict) -> dict:
    why = c.get("why") if isinstance(c.get("why"), dict) else {}
    comp = why.get("components") if isinstance(why.get("components"), dict) else {}
    report = c.get("kind") == "report"
    return base | {
        "candidate": "report" if report else "text_unit", "candidate_id": _int(c.get("id")),
        "text_unit_id": None if report else c.get("text_unit_id"), "document": c.get("document"),
        "page": _int(c.get("page_start")), "page_end": _int(c.get("page_end")),
        "rank": _int(why.get("rank")) or n + 1, "score": _float(why.get("score", c.get("score"))),
        "components": {k: _float(comp.get(k)) for k in _COMPONENTS} if comp else None,
        "influence": [{"term": str(x.get("term")), "channel": str(x.get("channel")), "weight": _float(x.get("weight"))}
                      for x in _dicts(why.get("influence"))]}


def retrieval_rows(trace: dict) -> list[dict]:
    """A trace's retrieved candidates, one row each (see the module docstring)."""
    base = {"trace_id": str(trace.get("trace_id")), "created": trace.get("created"), "kind": trace.get("kind"),
            "method": trace.get("method"), "question": trace.get("question")}
    rows = [_retrieval(base | {"claim_index": None, "query": trace.get("question")}, n, c)
            for n, c in enumerate(_dicts(_stage(trace, "exploration").get("candidates")))]
    for i, r in enumerate(_dicts(_stage(trace, "evidence").get("retrievals"))):  # verify: per claim
        claim = base | {"claim_index": i, "query": r.get("query")}
        rows += [_retrieval(claim, n, c) for n, c in enumerate(_dicts(r.get("candidates")))]
    return rows


def _cited(base: dict, index, sentence, kind, cid, units: list[dict], verdict=None, supports=None) -> list[dict]:
    """The rows of one cited id: one per unit it resolved to, or one with no unit."""
    row = base | {"sentence_index": _int(index), "sentence": sentence, "kind": kind, "id": _int(cid),
                  "verdict": verdict, "supports": supports}
    hits = [u for u in units if (kind, _int(cid)) in routes_of(u.get("via"))]
    if not hits:
        return [row | {"text_unit_id": None, "document": None, "page": None, "page_end": None, "via": None}]
    return [row | {"text_unit_id": u.get("text_unit_id"), "document": u.get("document"),
                   "page": _int(u.get("page_start")), "page_end": _int(u.get("page_end")), "via": u.get("via")}
            for u in hits]


def citation_rows(trace: dict) -> list[dict]:
    """A trace's cited ids with the units they resolved to (see the module docstring)."""
    base = {"trace_id": str(trace.get("trace_id")), "created": trace.get("created"),
            "trace_kind": trace.get("kind"), "question": trace.get("question")}
    rows: list[dict] = []
    verified = trace.get("verify") if isinstance(trace.get("verify"), dict) else {}
    for i, claim in enumerate(_dicts(verified.get("claims"))):   # verify: per claim, its verdict
        cited = _dicts(claim.get("cited"))
        for c in _dicts(claim.get("citations")):
            rows += _cited(base, i, claim.get("text"), c.get("kind"), c.get("id"), cited,
                           claim.get("verdict"), c.get("supports") if isinstance(c.get("supports"), bool) else None)
    if trace.get("kind") == "verify":
        return rows
    # ask: every source the resolver found per sentence (the citations stage), else the listed ones
    resolved = _dicts(_stage(trace, "citations").get("resolved")) or _dicts(trace.get("sources"))
    for c in _dicts(trace.get("citations")):
        idx = c.get("sentence_index")
        units = [u for u in resolved if u.get("sentence_index") == idx]
        for cid in c.get("ids") if isinstance(c.get("ids"), list) else []:
            rows += _cited(base, idx, c.get("sentence"), c.get("kind"), cid, units)
    return rows


# ---- writing ---------------------------------------------------------------------------------

def write_tables(trace: dict, folder: Path, name: str) -> list[Path]:
    """Write the trace's rows as folder/<table>/<name> for each table that has any; returns the
    files. Each file appears whole or not at all (temp file, then rename)."""
    import pyarrow.parquet as pq

    from provrag.store.rows import table_from_rows

    written = []
    for table, rows in (("retrievals", retrieval_rows(trace)), ("citations", citation_rows(trace))):
        if not rows:
            continue
        sub = Path(folder) / table
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / name
        tmp = sub / f".{name}.{os.getpid()}.tmp"
        pq.write_table(table_from_rows(rows, schema(table)), tmp, compression="zstd")
        os.replace(tmp, path)
        written.append(path)
    return written
