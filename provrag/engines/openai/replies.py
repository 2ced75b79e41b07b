"""Reading a model's replies: each parser turns the text into GraphRAG's shape or raises
ValueError with a short reason.

The reason is written for the model, not for the user: LLMClient.validated sends it back
once in a repair request (prompts.repair_message), so it says what the required format is.
Parsers are lenient about wrapping (a ```json fence, words around an object, quotes around a
field) and strict about content (labels, numbers, one verdict per span).
"""
from __future__ import annotations

import json
import re

from provrag.engines.openai.prompts import COMPLETE, TUPLE

LABELS = ("supported", "contradicted", "unsupported")


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


def parse_text(reply: str) -> str:
    """A free-text reply (summary, reduce, answer): anything but nothing."""
    text = reply.strip()
    if not text:
        raise ValueError("the reply was empty")
    return text


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
