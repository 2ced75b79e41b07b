"""What every prompt of the `openai` engine shares: the version marker, the message roles,
GraphRAG's record delimiters and the repair request.

The prompts are provrag's own sentences; what they ask for is GraphRAG's OUTPUT formats, so
an index built through a model has the same shapes as Microsoft GraphRAG's:
- extraction: tuple-delimited records `("entity"<|>NAME<|>TYPE<|>DESCRIPTION)` and
  `("relationship"<|>SOURCE<|>TARGET<|>DESCRIPTION<|>STRENGTH)` joined by `##`, ended by
  `<|COMPLETE|>` (GraphRAG's delimiters), with optional "gleaning" continuation rounds;
- community report JSON: title, summary, rating, rating_explanation, findings;
- global-search map JSON: {"points": [{"description": "… [Data: Reports (…)]", "score"}]};
- reduce / local / basic answers: markdown text keeping `[Data: …]` references;
- judge JSON: one NLI-style verdict per (claim, evidence span).
The index steps' prompts are in index_prompts.py, the query steps' in query_prompts.py, and
the parsers that validate the replies in replies.py.

Every prompt carries a marker line `[provrag-prompt:KIND vN]` (KIND = extract, glean,
summarize, report, map, reduce, answer, judge, repair). The version is part of the text, so a
changed prompt changes the cache key; the marker also lets the scripted test server
(tests/llm_server.py) recognise what it is asked. Parsers raise ValueError with a short
reason; the engine sends that reason back once in a repair request.
"""
from __future__ import annotations

import re

PROMPTS_VERSION = 1
TUPLE, RECORD, COMPLETE = "<|>", "##", "<|COMPLETE|>"
MARKER_RE = re.compile(r"\[provrag-prompt:(\w+) v(\d+)\]")


def marker(kind: str) -> str:
    return f"[provrag-prompt:{kind} v{PROMPTS_VERSION}]"


def system_message(kind: str, body: str) -> dict:
    """The system message of a request: its marker line, then what the model is for."""
    return {"role": "system", "content": f"{marker(kind)}\n{body.strip()}"}


def user_message(body: str) -> dict:
    return {"role": "user", "content": body.strip()}


def request_messages(kind: str, system: str, user_template: str, **fields) -> list[dict]:
    """A first request: the marked system message, then the user template filled with `fields`."""
    return [system_message(kind, system), user_message(user_template.format(**fields))]


_REPAIR_USER = """
{marker}
Your previous reply could not be used: {reason}.
Reply again to the same request with only the corrected output in the required format.
"""


def repair_message(reason: str) -> dict:
    """The one follow-up sent after an unusable reply, saying what was wrong with it."""
    return user_message(_REPAIR_USER.format(marker=marker("repair"), reason=reason))
