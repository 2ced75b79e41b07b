"""How the scripted server (tests/llm_server.py) misbehaves the way real small models and local
servers do, so the `openai` engine's reading, validation and fallbacks can be tested.

Each fault turns the scripted reply (right content, right format) into what a real server was
seen to send instead — SmolLM2-135M through llama-cpp-python's server (issue 16):
  loop         the reply's first line repeated until max_tokens: finish_reason "length"
  table        extraction as a markdown table instead of records
  json         extraction as {"entities": [...], "relationships": [...]}
  placeholder  extraction records copied from the prompt's template (NAME, TYPE …)
  synonyms     judge labels as "supports" / "refutes" / "not enough info"
  keyed        judge verdicts keyed by span number: {"verdicts": {"1": {...}}}
  badspan      judge verdicts plus one for a span the prompt did not show
  invented     an answer / reduce / map point / report citing an id the prompt did not show
  uncited      an answer with no citation at all
  overlong     HTTP 400 as llama.cpp says a prompt exceeds its context window
  400json      HTTP 400 naming response_format (a server without JSON mode)
The server also honours `max_tokens` (a longer reply is cut, finish_reason "length") and, when
told a context size, answers an overlong prompt with that HTTP 400 by itself.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

TUPLE, RECORD, COMPLETE = "<|>", "##", "<|COMPLETE|>"
CHAT_FAULTS = {"loop", "table", "json", "placeholder", "synonyms", "keyed", "badspan", "invented", "uncited"}
STATUS_FAULTS = {
    "overlong": (400, "Requested tokens (5210) exceed context window of 2048"),
    "400json": (400, "response_format is not supported by this server"),
}
_SYNONYM = {"supported": "supports", "contradicted": "refutes", "unsupported": "not enough info"}


def issue_docs(small_corpus: Path, folder: Path) -> Path:
    """`folder` holding the two real documents issue 16 was found on (../shared/corpora/small)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("sotu-1863-lincoln.txt", "debian-developers-reference-scope.html"):
        shutil.copy(small_corpus / name, folder / name)
    return folder


def overlong_error(prompt_tokens: int, context: int) -> tuple[int, str]:
    return 400, f"Requested tokens ({prompt_tokens}) exceed context window of {context}"


def _records(text: str) -> tuple[list[list[str]], list[list[str]]]:
    ents, rels = [], []
    for piece in re.split(r"##|\n", text.replace(COMPLETE, "")):
        fields = piece.strip().strip("()").split(TUPLE)
        kind = fields[0].strip('"').lower()
        if kind == "entity" and len(fields) >= 4:
            ents.append(fields[1:4])
        elif kind == "relationship" and len(fields) >= 5:
            rels.append(fields[1:5])
    return ents, rels


def _extraction(fault: str, text: str) -> str:
    ents, rels = _records(text)
    if fault == "json":
        return "```json\n" + json.dumps({
            "entities": [{"name": n.title(), "type": t.lower(), "description": d} for n, t, d in ents],
            "relationships": [{"source": s, "target": t, "description": d, "strength": int(w)} for s, t, d, w in rels],
        }) + "\n```"
    if fault == "table":
        rows = "\n".join(f"| {n.title()} | {t.title()} | {d} |" for n, t, d in ents)
        return f"Here are the entities:\n\n| Entity | Type | Description |\n|---|---|---|\n{rows}\n"
    if fault == "placeholder":
        return f'("entity"{TUPLE}NAME{TUPLE}TYPE{TUPLE}what the passage says about it)\n{COMPLETE}'
    return text


def _judge(fault: str, text: str, spans: int) -> str:
    verdicts = json.loads(text)["verdicts"]
    if fault == "synonyms":
        for v in verdicts:
            v["label"] = _SYNONYM[v["label"]]
    if fault == "keyed":
        return json.dumps({"verdicts": {str(v.pop("span")): v for v in verdicts}})
    if fault == "badspan":
        verdicts.append({"span": spans + 1, "label": "supported", "score": 1.0, "reason": "a span nobody showed"})
    return json.dumps({"verdicts": verdicts})


def _invent(kind: str, text: str) -> str:
    if kind == "report":
        obj = json.loads(text)
        for f in obj.get("findings") or []:
            f["explanation"] = re.sub(r"\[Data: [^\]]*\]", "[Data: Entities (90001)]", f["explanation"])
        return json.dumps(obj)
    if kind == "map":
        obj = json.loads(text)
        for p in obj.get("points") or []:
            p["description"] = re.sub(r"Reports \([^)]*\)", "Reports (90001)", p["description"])
        return json.dumps(obj)
    return re.sub(r"\((\d+)(?=[,)])", "(90001", text) if "[Data:" in text else text + " [Data: Sources (90001)]"


def misbehave(fault: str, kind: str, text: str, messages: list[dict]) -> tuple[str, str]:
    """(reply text, finish_reason) for a chat request of prompt `kind` under `fault`."""
    user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
    if fault == "loop":
        line = (text.strip().splitlines() or ["and so on"])[0]
        return "\n".join([line] * 400), "stop"  # the server's max_tokens cut makes it "length"
    if kind in ("extract", "glean"):
        return _extraction(fault, text), "stop"
    if kind == "judge" and fault in ("synonyms", "keyed", "badspan"):
        return _judge(fault, text, len(re.findall(r"^-----Span \d+-----$", user, re.M))), "stop"
    if fault == "invented":
        return _invent(kind, text), "stop"
    if fault == "uncited":
        return re.sub(r"\s*\[Data: [^\]]*\]", "", text), "stop"
    return text, "stop"
