"""Reading a model's replies: each parser turns the text into GraphRAG's shape or raises
ValueError with a short reason.

The reason is written for the model, not for the user: LLMClient.validated sends it back
once in a repair request (prompts.repair_message), so it says what the required format is.
Parsers are lenient about wrapping (a ```json fence, words around an object, quotes around a
field, a label's synonym, verdicts keyed by span number) and strict about content: labels,
numbers, one verdict per span, and never an id the prompt did not show (a citation of a record,
report, entity or span the model was not given is rejected). Extraction replies are read in
records.py.
"""
from __future__ import annotations

import json
import re

LABELS = ("supported", "contradicted", "unsupported")
# how models spell the three labels (NLI and fact-checking vocabularies); "not supported"
# and its kin are matched before a bare "supported" can be
SYNONYMS = {
    "unsupported": ("unsupported", "not supported", "not enough info", "not enough information", "nei",
                    "neutral", "unknown", "undetermined", "insufficient", "irrelevant", "unverifiable",
                    "not entailed", "no evidence", "none", "neither", "n/a"),
    "contradicted": ("contradicted", "contradicts", "contradict", "contradiction", "contradictory", "refutes",
                     "refuted", "refute", "false", "incorrect", "disputed", "inconsistent"),
    "supported": ("supported", "supports", "support", "entailed", "entails", "entailment", "true", "correct",
                  "confirmed", "consistent", "verified"),
}


def complete_part(reply: str) -> str:
    """A reply cut at max_tokens, up to the end of its last complete line, record or sentence."""
    ends = [m.end() for m in re.finditer(r"\n|##|\)|\]|[.!?](?=\s|$)", reply)]
    return reply[:ends[-1]] if ends else ""


def looping(reply: str) -> bool:
    """A reply that mostly repeats itself — the same line, record or JSON object again and again,
    as a small model stuck in a loop writes until max_tokens: at least four pieces, at most half
    of them distinct. Asked again with a bigger budget it would only loop longer. (Records that
    share a description are distinct pieces: their names differ.)"""
    pieces = [" ".join(p.split()) for p in re.split(r"\n|##|(?<=\})\s*,\s*(?=\{)", reply) if p.strip()]
    return len(pieces) >= 4 and len(set(pieces)) * 2 <= len(pieces)


def parse_text(reply: str) -> str:
    """A free-text reply (summary, reduce, answer): anything but nothing; a line repeated word
    for word (a small model looping) is kept once."""
    lines, seen = [], set()
    for line in reply.strip().splitlines():
        key = " ".join(line.split())
        if key and key in seen:
            continue
        seen.add(key)
        lines.append(line)
    text = "\n".join(lines).strip()
    if not text:
        raise ValueError("the reply was empty")
    return text


GROUNDED = 0.5   # share of a merged description's terms its descriptions (or the name) must hold


def parse_summary(reply: str, sources: list[str]) -> str:
    """A merged description made of its descriptions: at least half of its distinct terms
    (stemmed words and numbers, stop words aside) occur in them or in the name. A paraphrase
    keeps the names, numbers and most nouns it merges; a "summary" that is mostly new words
    (a small model writing about the EU for an entity of 1863) is an invention, not a merge."""
    from provrag.text.words import terms_of

    text = parse_text(reply)
    have = set(terms_of(" ".join(sources)))
    said = list(dict.fromkeys(terms_of(text)))
    new = [t for t in said if t not in have]
    if said and len(new) > (1 - GROUNDED) * len(said):
        raise ValueError(f"the description uses words the descriptions do not ({', '.join(new[:8])}): "
                         "merge only what they state")
    return text


def shown_ids(citations) -> dict[str, set[int]]:
    """The ids, by kind, that `[Data: …]` citations shown in a prompt hold (the ids a reply may cite)."""
    from provrag.query.citations import parse_citations

    out: dict[str, set[int]] = {}
    for c in citations:
        for kind, i in parse_citations(str(c or "")).pairs():
            out.setdefault(kind, set()).add(i)
    return out


def check_citations(text: str, allowed: dict[str, set[int]], given: str) -> int:
    """How many ids `text` cites; ValueError when one of them is not among `allowed` (what the
    prompt showed, by kind): a model must not cite a record, report or entity it was not given."""
    from provrag.query.citations import parse_citations

    cited = parse_citations(text).pairs()
    unknown = sorted(p for p in cited if p[1] not in allowed.get(p[0], ()))
    if unknown:
        named = ", ".join(f"{k} ({i})" for k, i in unknown[:5])
        ok = "; ".join(f"{k} ({', '.join(map(str, sorted(v)[:12]))})" for k, v in sorted(allowed.items())) or "none"
        raise ValueError(f"the reply cites {named}, which {given} did not include; cite only {ok}")
    return len(cited)


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


def parse_report(reply: str, max_findings: int = 10, allowed: dict[str, set[int]] | None = None) -> dict:
    """The report JSON; with `allowed`, its references may name only the id columns' ids shown."""
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
    if allowed is not None:
        check_citations(" ".join([summary] + [f["explanation"] + " " + f["summary"] for f in clean]), allowed,
                        "the tables")
    expl = obj.get("rating_explanation", "")
    return {"title": title.strip(), "summary": summary.strip(),
            "rating": _num(obj.get("rating"), "rating", 0, 10),
            "rating_explanation": expl if isinstance(expl, str) else str(expl),
            "findings": clean[:max_findings]}


def parse_map(reply: str, reports: set[int] | None = None) -> list[dict]:
    """Map points; with `reports` (the batch's report numbers), a point that helps (score > 0)
    must cite them and only them."""
    obj = load_json_object(reply)
    points = obj.get("points")
    if not isinstance(points, list):
        raise ValueError('"points" must be a list of {"description", "score"} objects')
    out = []
    for p in points:
        if not isinstance(p, dict) or not isinstance(p.get("description"), str):
            raise ValueError('each point must be an object with a string "description" and a "score"')
        point = {"description": p["description"].strip(), "score": _num(p.get("score"), "score", 0, 100)}
        if reports is not None and point["score"] > 0 \
                and not check_citations(point["description"], {"Reports": reports}, "the batch"):
            raise ValueError("every point with a score above 0 must end with [Data: Reports (ids)] citing the "
                             "reports it comes from")
        out.append(point)
    return out


def judge_label(value) -> str | None:
    """A verdict label, or one of its synonyms ("supports", "refutes", "not enough info" …), as
    one of LABELS; None for anything else."""
    text = re.sub(r"[\s_\-]+", " ", str(value or "")).strip().strip(".!\"'*").lower()
    for label, words in SYNONYMS.items():
        if text in words:
            return label
    return None


def _span_number(key) -> int | None:
    found = re.fullmatch(r"\s*(?:span|id|evidence)?\s*#?\s*(\d+)\s*", str(key), re.I)
    return int(found.group(1)) if found else None


def _verdict_items(obj: dict, n_spans: int) -> list[tuple[int | None, object]]:
    """(span number or None, verdict) pairs from a list of verdicts or verdicts keyed by span."""
    if "verdicts" not in obj and any(k in obj for k in ("label", "verdict")):
        obj = {"verdicts": [obj]}  # one verdict object on its own
    verdicts = obj.get("verdicts", obj)
    if isinstance(verdicts, dict):  # {"1": {...}} or {"span 2": "supported"}
        items = [(_span_number(k), v) for k, v in verdicts.items()]
        if any(i is None for i, _ in items):
            raise ValueError('"verdicts" must be a list with one object per span, or an object keyed by span number')
        return items
    if not isinstance(verdicts, list):
        raise ValueError('"verdicts" must be a list with one object per span')
    items = []
    for v in verdicts:
        key = next((v[k] for k in ("span", "span_id", "id", "index") if isinstance(v, dict) and k in v), None)
        items.append((_span_number(key) if key is not None else None, v))
    if all(i is None for i, _ in items) and len(items) == n_spans:  # in span order, unnumbered
        return [(i, v) for i, (_, v) in enumerate(items, 1)]
    if any(i is None for i, _ in items):
        raise ValueError('each verdict needs an integer "span"')
    return items


def parse_judge(reply: str, n_spans: int) -> list[dict]:
    """One verdict per span 1..n_spans: labels by synonym, a verdict given as a bare label, verdicts
    keyed by span number; a span number the prompt did not show is an error, never ignored."""
    by_span: dict[int, dict] = {}
    for i, v in _verdict_items(load_json_object(reply), n_spans):
        if not 1 <= i <= n_spans:
            raise ValueError(f"there is no span {i}: the spans are numbered 1 to {n_spans}")
        v = v if isinstance(v, dict) else {"label": v}
        raw = next((v[k] for k in ("label", "verdict", "answer", "result") if k in v), "")
        label = judge_label(raw)
        if label is None:
            raise ValueError(f'"label" must be one of {", ".join(LABELS)} (got {str(raw)[:40]!r})')
        by_span[i] = {"label": label, "score": _num(v.get("score", v.get("confidence", 1.0)), "score", 0, 1),
                      "reason": str(v.get("reason", v.get("explanation", "")))}
    missing = [i for i in range(1, n_spans + 1) if i not in by_span]
    if missing:
        raise ValueError(f"no verdict for span(s) {missing}; give exactly one per span 1..{n_spans}")
    return [by_span[i] for i in range(1, n_spans + 1)]
