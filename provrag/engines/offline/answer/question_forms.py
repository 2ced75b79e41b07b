"""Two forms of question the reader was not trained on, told by their wording.

- "What did the President say about foreign relations?" asks what a source says on a topic,
  not for one fact: no single sentence "states the answer" as the answer head was trained to find
  (SQuAD-style spans), so the passage on the topic is the answer (said_about);
- "What does X supply and when was it commissioned?" is two questions: each part is read on its
  own (reading.other_parts), since the reader was trained on one question per sentence.
"""
from __future__ import annotations

import re

_SAID_ABOUT = re.compile(r"\bwhat (do|does|did) .{1,80}?\b(say|says|said|write|writes|wrote|state|states|stated)\b.*\babout\b",
                         re.I)


def asks_what_is_said(question: str) -> bool:
    """"What did the President say about foreign relations?": the question asks for what a source
    says on a topic, not for one fact, so no single sentence "states the answer" as the answer
    head was trained to find (SQuAD-style spans); the passage on the topic is the answer."""
    return bool(_SAID_ABOUT.search(question or ""))


def said_about(cands: list[dict], order: list[int], pscores: list[float | None] | None, threshold: float,
               best: float) -> tuple[list[dict], float]:
    """For a question asking what is said about a topic: the most relevant passage, when the
    reader's passage head reads it as relevant (at or above the same threshold), answers with its
    best sentence; the confidence is the passage head's. Otherwise nothing, as before."""
    if pscores is None or not order or pscores[order[0]] is None or pscores[order[0]] < threshold:
        return [], best
    top = order[0]
    in_passage = [c for c in cands if c["record"] == top]   # cands are sorted best first
    return (in_passage[:1], round(float(pscores[top]), 4)) if in_passage else ([], best)


# "What does X supply and when was it commissioned?": a second question after "and" + a wh-word
_SECOND_PART = re.compile(r"(?:,\s*|\s)and\s+(?=(?:what|when|where|who|whom|which|why|how)\b)", re.I)


def question_parts(question: str) -> list[str]:
    """The parts of a compound question (at ", and when …", " and who …"), or [] for one question."""
    parts = [p.strip(" ?") for p in _SECOND_PART.split(question or "") if p.strip(" ?")]
    return parts if len(parts) > 1 else []
