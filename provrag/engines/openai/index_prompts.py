"""Prompts of the index steps: graph extraction (and its gleaning rounds), description
summaries and community reports.

They ask for GraphRAG's output shapes (tuple records, report JSON) so a model-built index
has the tables Microsoft GraphRAG writes; replies.py validates what comes back. The texts are
part of the reply cache key: change one and PROMPTS_VERSION (prompts.py) with it.
"""
from __future__ import annotations

import csv
import io

from provrag.engines.openai.prompts import (
    COMPLETE,
    RECORD,
    TUPLE,
    marker,
    request_messages,
    user_message,
)

# ---------------------------------------------------------------- extraction

_EXTRACT_SYS = """
You turn a passage into knowledge-graph records. Report the named things the passage is
about and how the passage says they relate. Use only what the passage states.
"""

_EXTRACT_USER = """
Entity types to look for: {types}

Write one record per entity and per relationship, records separated by {rec}, and end the
whole reply with {done}. Nothing else: no headings, no explanations.
Entity record:        ("entity"{t}NAME{t}TYPE{t}what the passage says about it)
Relationship record:  ("relationship"{t}SOURCE NAME{t}TARGET NAME{t}how the passage relates them{t}STRENGTH)
NAME is the name as the passage gives it, in capital letters. TYPE is one of the types above,
in capital letters. A relationship joins two NAMEs that also have entity records. STRENGTH is
a number from 1 (loose) to 10 (tight). If the passage names nothing, reply with {done} alone.

-----TEXT-----
{text}
-----END TEXT-----
"""

_GLEAN_USER = """
{marker}
Your records may have missed entities or relationships the passage states. Write only the
missing ones, in exactly the same record format, ending with {done}. If nothing is missing,
reply with {done} alone.
"""


def extract_messages(text: str, entity_types: list[str]) -> list[dict]:
    """entity_types: `[extract] entity_types` of config.toml (GraphRAG's defaults there)."""
    types = ", ".join(t.upper() for t in entity_types)
    return request_messages("extract", _EXTRACT_SYS, _EXTRACT_USER,
                            types=types, rec=RECORD, done=COMPLETE, t=TUPLE, text=text)


def glean_message() -> dict:
    return user_message(_GLEAN_USER.format(marker=marker("glean"), done=COMPLETE))


# ---------------------------------------------------------------- summarisation

_SUMMARIZE_SYS = """
You merge several descriptions of one entity or relationship into a single description.
"""

_SUMMARIZE_USER = """
Name: {title}
Descriptions:
{items}

Write one description in the third person that keeps every fact above and resolves any
contradiction by stating both versions. Reply with the description text only.
"""


def summarize_messages(title: str, descriptions: list[str]) -> list[dict]:
    items = "\n".join(f"- {d}" for d in descriptions)
    return request_messages("summarize", _SUMMARIZE_SYS, _SUMMARIZE_USER, title=title, items=items)


# ---------------------------------------------------------------- community reports

_REPORT_SYS = """
You write an analyst's report about one community of a knowledge graph: the entities
listed, the relationships among them, and excerpts of the source text. The report is read by
someone deciding whether this community matters for their question.
"""

_REPORT_USER = """
Reply with one JSON object and nothing else:
{{"title": "a short specific name for the community, naming its key entities",
 "summary": "an executive summary of the community's structure and what it is about",
 "rating": a number from 0 to 10 for how important the community is,
 "rating_explanation": "one sentence justifying the rating",
 "findings": [{{"summary": "a one-line insight", "explanation": "a paragraph grounded in the data"}}]}}
Give between 1 and {max_findings} findings, each about one theme of the community (the parts
of the documents its excerpts come from name them). Rate its importance by how much of the
corpus it covers. Ground every finding in the tables: end each
explanation with references such as [Data: Entities (3, 7); Relationships (12, 15, +more)],
using the id column, at most 5 ids per kind and "+more" when there are more.
{about}
-----Entities-----
{entities}
-----Relationships-----
{relationships}
-----Excerpts-----
{excerpts}
"""


def _csv(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else str(v).replace("\n", " ") for v in r])
    return buf.getvalue().rstrip("\n")


def report_messages(context: dict, max_findings: int, count_tokens, budget: int,
                    shown: dict | None = None) -> list[dict]:
    """Entities, then relationships, then excerpts, each added while the budget allows
    (GraphRAG caps report input at ~8k tokens the same way). `shown`, when given, receives the
    ids of the rows the prompt holds ({"Entities": {…}, "Relationships": {…}}): the only ids
    the report may cite."""
    # a total order (ties by id), so the same community gives the same prompt — and a cache hit — every run
    ents = sorted(context.get("entities", []),
                  key=lambda e: (-(e.get("degree") or 0), str(e.get("human_readable_id")), str(e.get("title"))))
    rels = sorted(context.get("relationships", []),
                  key=lambda r: (-(r.get("weight") or 0), str(r.get("human_readable_id")), str(r.get("source"))))
    used = 400
    erows, rrows, xrows = [], [], []
    for e in ents:
        row = [e.get("human_readable_id"), e.get("title"), e.get("type"), e.get("description"), e.get("degree")]
        cost = count_tokens(" ".join(map(str, row))) + 2
        if used + cost > budget and erows:
            break
        erows.append(row)
        used += cost
    for r in rels:
        row = [r.get("human_readable_id"), r.get("source"), r.get("target"), r.get("description"), r.get("weight")]
        cost = count_tokens(" ".join(map(str, row))) + 2
        if used + cost > budget:
            break
        rrows.append(row)
        used += cost
    for u in context.get("text_units", []):
        text = (u.get("text") or "").strip()
        if u.get("section"):  # the document part it is from: "(from R FAQ › R and Emacs)"
            text = f"(from {u['section']}) {text}"
        cost = count_tokens(text) + 4
        if used + cost > budget:
            break
        xrows.append(text)
        used += cost
    if shown is not None:
        shown["Entities"] = {int(r[0]) for r in erows if str(r[0]).isdigit()}
        shown["Relationships"] = {int(r[0]) for r in rrows if str(r[0]).isdigit()}
    return request_messages(
        "report", _REPORT_SYS, _REPORT_USER, max_findings=max_findings,
        entities=_csv(["id", "entity", "type", "description", "degree"], erows),
        relationships=_csv(["id", "source", "target", "description", "weight"], rrows),
        excerpts="\n---\n".join(xrows) or "(none)", about=_about(context))


def _about(context: dict) -> str:
    """What the index measured of the community: its distinctive key phrases and its share of the corpus."""
    lines = []
    if context.get("key_phrases"):
        lines.append(f"Key phrases distinctive of this community: {', '.join(context['key_phrases'])}.")
    cov = context.get("coverage") or {}
    if cov.get("of"):
        lines.append(f"It holds {cov.get('text_units', 0)} of the corpus's {cov['of']} text units.")
    return ("\n" + "\n".join(lines) + "\n") if lines else ""
