"""Prompts of the `openai` engine and the parsers that validate their replies.

The prompts are provrag's own sentences; what they ask for is GraphRAG's OUTPUT formats, so
an index built through a model has the same shapes as Microsoft GraphRAG's:
- extraction: tuple-delimited records `("entity"<|>NAME<|>TYPE<|>DESCRIPTION)` and
  `("relationship"<|>SOURCE<|>TARGET<|>DESCRIPTION<|>STRENGTH)` joined by `##`, ended by
  `<|COMPLETE|>` (GraphRAG's delimiters), with optional "gleaning" continuation rounds;
- community report JSON: title, summary, rating, rating_explanation, findings;
- global-search map JSON: {"points": [{"description": "… [Data: Reports (…)]", "score"}]};
- reduce / local / basic answers: markdown text keeping `[Data: …]` references;
- judge JSON: one NLI-style verdict per (claim, evidence span).

Every prompt carries a marker line `[provrag-prompt:KIND vN]` (KIND = extract, glean,
summarize, report, map, reduce, answer, judge, repair). The version is part of the text, so a
changed prompt changes the cache key; the marker also lets the scripted test server
(tests/llm_server.py) recognise what it is asked. Parsers raise ValueError with a short
reason; the engine sends that reason back once in a repair request.
"""
from __future__ import annotations

import csv
import io
import json
import re

PROMPTS_VERSION = 1
TUPLE, RECORD, COMPLETE = "<|>", "##", "<|COMPLETE|>"
DEFAULT_ENTITY_TYPES = ["organization", "person", "geo", "event"]  # GraphRAG's default types
LABELS = ("supported", "contradicted", "unsupported")
MARKER_RE = re.compile(r"\[provrag-prompt:(\w+) v(\d+)\]")


def marker(kind: str) -> str:
    return f"[provrag-prompt:{kind} v{PROMPTS_VERSION}]"


def _sys(kind: str, body: str) -> dict:
    return {"role": "system", "content": f"{marker(kind)}\n{body.strip()}"}


def _user(body: str) -> dict:
    return {"role": "user", "content": body.strip()}


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


def extract_messages(text: str, entity_types: list[str] | None = None) -> list[dict]:
    types = ", ".join(t.upper() for t in (entity_types or DEFAULT_ENTITY_TYPES))
    return [_sys("extract", _EXTRACT_SYS),
            _user(_EXTRACT_USER.format(types=types, rec=RECORD, done=COMPLETE, t=TUPLE, text=text))]


def glean_message() -> dict:
    return _user(_GLEAN_USER.format(marker=marker("glean"), done=COMPLETE))


def _clean(field: str) -> str:
    return field.strip().strip('"').strip("'").strip()


def parse_extraction(reply: str) -> dict:
    """GraphRAG tuple records → {"entities": [...], "relationships": [...]}.

    Valid: at least one record parsed, or an empty answer that says so (`<|COMPLETE|>` alone).
    Names and types are upper-cased as GraphRAG does, so the same name merges across units.
    """
    body = reply.replace(COMPLETE, "\n")
    entities: dict[str, dict] = {}
    rels: list[dict] = []
    seen_rel: set[tuple] = set()
    bad = 0
    for piece in re.split(r"##|\n", body):
        piece = piece.strip().rstrip(",").strip()
        if not piece:
            continue
        if piece.startswith("(") and piece.endswith(")"):
            piece = piece[1:-1]
        fields = [_clean(f) for f in piece.split(TUPLE)]
        kind = fields[0].lower()
        if kind == "entity" and len(fields) >= 3 and fields[1]:
            title = fields[1].upper()
            desc = fields[3] if len(fields) > 3 else ""
            if title not in entities:
                entities[title] = {"title": title, "type": fields[2].upper(), "description": desc}
            elif desc and desc not in entities[title]["description"]:
                entities[title]["description"] = (entities[title]["description"] + "\n" + desc).strip()
        elif kind == "relationship" and len(fields) >= 4 and fields[1] and fields[2]:
            src, tgt = fields[1].upper(), fields[2].upper()
            try:
                weight = float(fields[4]) if len(fields) > 4 and fields[4] else 1.0
            except ValueError:
                weight = 1.0
            if (src, tgt, fields[3]) not in seen_rel and src != tgt:
                seen_rel.add((src, tgt, fields[3]))
                rels.append({"source": src, "target": tgt, "description": fields[3], "weight": weight})
        else:
            bad += 1
    if not entities and not rels and (bad or COMPLETE not in reply):
        raise ValueError("no (\"entity\"<|>…) or (\"relationship\"<|>…) records found; "
                         f"use the record format and end with {COMPLETE}")
    for r in rels:  # an edge's endpoints are nodes even when the model forgot their records
        for name in (r["source"], r["target"]):
            entities.setdefault(name, {"title": name, "type": "", "description": ""})
    return {"entities": list(entities.values()), "relationships": rels}


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
    return [_sys("summarize", _SUMMARIZE_SYS), _user(_SUMMARIZE_USER.format(title=title, items=items))]


def parse_text(reply: str) -> str:
    text = reply.strip()
    if not text:
        raise ValueError("the reply was empty")
    return text


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
Give between 1 and {max_findings} findings. Ground every finding in the tables: end each
explanation with references such as [Data: Entities (3, 7); Relationships (12, 15, +more)],
using the id column, at most 5 ids per kind and "+more" when there are more.

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


def report_messages(context: dict, max_findings: int, count_tokens, budget: int) -> list[dict]:
    """Entities, then relationships, then excerpts, each added while the budget allows
    (GraphRAG caps report input at ~8k tokens the same way)."""
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
        cost = count_tokens(text) + 4
        if used + cost > budget:
            break
        xrows.append(text)
        used += cost
    body = _REPORT_USER.format(
        max_findings=max_findings,
        entities=_csv(["id", "entity", "type", "description", "degree"], erows),
        relationships=_csv(["id", "source", "target", "description", "weight"], rrows),
        excerpts="\n---\n".join(xrows) or "(none)")
    return [_sys("report", _REPORT_SYS), _user(body)]


def load_json_object(reply: str) -> dict:
    """The JSON object in a reply; tolerates a ```json fence or words around the object."""
    text = reply.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    try:
        obj = json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the reply holds no JSON object") from None
        try:
            obj = json.loads(text[start:end + 1])
        except ValueError as e:
            raise ValueError(f"the reply is not valid JSON ({e.msg} at char {e.pos})") from None
    if not isinstance(obj, dict):
        raise ValueError("the reply is JSON but not an object")
    return obj


def _num(v, name: str, lo: float, hi: float) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f'"{name}" must be a number from {lo:g} to {hi:g}') from None
    if x != x:
        raise ValueError(f'"{name}" must be a number')
    return float(min(hi, max(lo, x)))


def parse_report(reply: str, max_findings: int = 10) -> dict:
    obj = load_json_object(reply)
    title, summary = obj.get("title"), obj.get("summary")
    if not isinstance(title, str) or not title.strip():
        raise ValueError('"title" must be a non-empty string')
    if not isinstance(summary, str):
        raise ValueError('"summary" must be a string')
    findings = obj.get("findings")
    if not isinstance(findings, list):
        raise ValueError('"findings" must be a list of {"summary", "explanation"} objects')
    clean = []
    for f in findings:
        if not isinstance(f, dict) or not isinstance(f.get("summary", ""), str) \
                or not isinstance(f.get("explanation", ""), str):
            raise ValueError('each finding must be an object with string "summary" and "explanation"')
        if f.get("summary") or f.get("explanation"):
            clean.append({"summary": f.get("summary", ""), "explanation": f.get("explanation", "")})
    expl = obj.get("rating_explanation", "")
    return {"title": title.strip(), "summary": summary.strip(),
            "rating": _num(obj.get("rating"), "rating", 0, 10),
            "rating_explanation": expl if isinstance(expl, str) else str(expl),
            "findings": clean[:max_findings]}


# ---------------------------------------------------------------- global search

_MAP_SYS = """
You answer a question from a batch of community reports. Each point you make must be
supported by the reports and cite them.
"""

_MAP_USER = """
Question: {question}

Reply with one JSON object and nothing else:
{{"points": [{{"description": "one point answering the question, ending with [Data: Reports (ids)]", "score": 0-100}}]}}
score says how much the point helps answer the question (0 = not at all). Cite reports by
the number after "Report", at most 5 numbers per reference and "+more" when there are more.
If the reports say nothing relevant, reply {{"points": [{{"description": "No relevant information.", "score": 0}}]}}.

{reports}
"""


def map_messages(question: str, reports: list[dict]) -> list[dict]:
    blocks = []
    for r in reports:
        content = r.get("full_content") or r.get("summary") or ""
        blocks.append(f"-----Report {r.get('community')}-----\ntitle: {r.get('title', '')}\n"
                      f"rank: {r.get('rank', '')}\n{content.strip()}")
    return [_sys("map", _MAP_SYS), _user(_MAP_USER.format(question=question, reports="\n\n".join(blocks)))]


def parse_map(reply: str) -> list[dict]:
    obj = load_json_object(reply)
    points = obj.get("points")
    if not isinstance(points, list):
        raise ValueError('"points" must be a list of {"description", "score"} objects')
    out = []
    for p in points:
        if not isinstance(p, dict) or not isinstance(p.get("description"), str):
            raise ValueError('each point must be an object with a string "description" and a "score"')
        out.append({"description": p["description"].strip(), "score": _num(p.get("score"), "score", 0, 100)})
    return out


_REDUCE_SYS = """
You write the final answer to a question from the points several analysts made, each with
an importance score. Keep only what the points support.
"""

_REDUCE_USER = """
Question: {question}

Write a clear answer in markdown from the analysts' points below, most important first.
Keep the [Data: Reports (…)] references of the points you use, at most 5 ids per reference
and "+more" when there are more. Do not invent references. If the points do not answer the
question, say so.

{points}
"""


def reduce_messages(question: str, points: list[dict]) -> list[dict]:
    blocks = [f"-----Analyst {i}-----\nImportance Score: {p.get('score', 0):g}\n{p.get('description', '')}"
              for i, p in enumerate(points, 1)]
    return [_sys("reduce", _REDUCE_SYS), _user(_REDUCE_USER.format(question=question, points="\n\n".join(blocks)))]


# ---------------------------------------------------------------- local / basic answers

_ANSWER_SYS = """
You answer a question using only the numbered records given. Every sentence that uses a
record ends with that record's citation, copied exactly.
"""

_ANSWER_USER = """
Question: {question}

Answer in markdown from the records below. After each sentence put the citation of the
record(s) it comes from, exactly as written after "citation:", e.g. [Data: Sources (12, 40)].
If the records do not answer the question, say so and cite nothing.

{records}
"""


def answer_messages(question: str, records: list[dict]) -> list[dict]:
    blocks = [f"-----Record {i}-----\ncitation: {r.get('citation', '')}\n{(r.get('text') or '').strip()}"
              for i, r in enumerate(records, 1)]
    return [_sys("answer", _ANSWER_SYS), _user(_ANSWER_USER.format(question=question, records="\n\n".join(blocks)))]


# ---------------------------------------------------------------- verify's judge

_JUDGE_SYS = """
You are a strict fact checker. For one claim and each evidence span, decide on that span
alone whether it supports the claim, contradicts it, or neither.
"""

_JUDGE_USER = """
Claim: {claim}

Judge each span separately (never combine spans). Reply with one JSON object and nothing else:
{{"verdicts": [{{"span": 1, "label": "supported" | "contradicted" | "unsupported", "score": 0.0-1.0, "reason": "a short reason"}}]}}
with exactly one verdict per span number. "supported": the span alone states the claim;
"contradicted": the span states something incompatible (negation, other number, other
name); otherwise "unsupported". score is your confidence in the label.

{spans}
"""


def judge_messages(claim: str, spans: list[str]) -> list[dict]:
    blocks = [f"-----Span {i}-----\n{s.strip()}" for i, s in enumerate(spans, 1)]
    return [_sys("judge", _JUDGE_SYS), _user(_JUDGE_USER.format(claim=claim, spans="\n\n".join(blocks)))]


def parse_judge(reply: str, n_spans: int) -> list[dict]:
    obj = load_json_object(reply)
    verdicts = obj.get("verdicts")
    if not isinstance(verdicts, list):
        raise ValueError('"verdicts" must be a list with one object per span')
    by_span: dict[int, dict] = {}
    for v in verdicts:
        if not isinstance(v, dict):
            raise ValueError("each verdict must be an object")
        try:
            i = int(v.get("span"))
        except (TypeError, ValueError):
            raise ValueError('each verdict needs an integer "span"') from None
        label = str(v.get("label", "")).strip().lower()
        if label not in LABELS:
            raise ValueError(f'"label" must be one of {", ".join(LABELS)} (got {label!r})')
        by_span[i] = {"label": label, "score": _num(v.get("score", 1.0), "score", 0, 1),
                      "reason": str(v.get("reason", ""))}
    missing = [i for i in range(1, n_spans + 1) if i not in by_span]
    if missing:
        raise ValueError(f"no verdict for span(s) {missing}; give exactly one per span 1..{n_spans}")
    return [by_span[i] for i in range(1, n_spans + 1)]


# ---------------------------------------------------------------- repair

_REPAIR_USER = """
{marker}
Your previous reply could not be used: {reason}.
Reply again to the same request with only the corrected output in the required format.
"""


def repair_message(reason: str) -> dict:
    return _user(_REPAIR_USER.format(marker=marker("repair"), reason=reason))
