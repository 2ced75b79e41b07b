"""Prompts of the query steps: global search's map and reduce, local/basic answers, and
verify's judge.

Each numbers what it shows the model (reports, analysts' points, records, spans) so the reply
can point back at it: map points and answers keep `[Data: …]` references, the judge gives
one verdict per span number; replies.py checks that they do. The texts are part of the reply
cache key: change one and PROMPTS_VERSION (prompts.py) with it.
"""
from __future__ import annotations

from provrag.engines.openai.prompts import request_messages


def _numbered(label: str, bodies) -> str:
    """Blocks headed `-----Label i-----` (i from 1), the number a reply refers back to."""
    return "\n\n".join(f"-----{label} {i}-----\n{body}" for i, body in enumerate(bodies, 1))

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
    """Reports headed by their community number: the id a point's `[Data: Reports (…)]` cites."""
    blocks = []
    for r in reports:
        content = r.get("full_content") or r.get("summary") or ""
        blocks.append(f"-----Report {r.get('community')}-----\ntitle: {r.get('title', '')}\n"
                      f"rank: {r.get('rank', '')}\n{content.strip()}")
    return request_messages("map", _MAP_SYS, _MAP_USER, question=question, reports="\n\n".join(blocks))


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
    """points: the map points kept, best first; each shows its score, as GraphRAG's reduce does."""
    analysts = _numbered("Analyst", (f"Importance Score: {p.get('score', 0):g}\n{p.get('description', '')}"
                                     for p in points))
    return request_messages("reduce", _REDUCE_SYS, _REDUCE_USER, question=question, points=analysts)


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
    """records: {"citation", "text"}; the citation is printed above the text so the model can
    copy it verbatim, which is what lets resolve find each sentence's source."""
    numbered = _numbered("Record", (f"citation: {r.get('citation', '')}\n{(r.get('text') or '').strip()}"
                                    for r in records))
    return request_messages("answer", _ANSWER_SYS, _ANSWER_USER, question=question, records=numbered)


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
    """Spans numbered from 1: parse_judge wants exactly one verdict per number."""
    return request_messages("judge", _JUDGE_SYS, _JUDGE_USER, claim=claim,
                            spans=_numbered("Span", (s.strip() for s in spans)))
