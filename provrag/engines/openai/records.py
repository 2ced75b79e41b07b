"""Reading an extraction reply: GraphRAG's tuple records — or the JSON object or markdown table
a model writes instead — into {"entities": [...], "relationships": [...]}.

The prompt asks for `("entity"<|>NAME<|>TYPE<|>DESCRIPTION)` records; small local models
often answer with `{"entities": [...], "relationships": [...]}` or a markdown table instead,
and those say the same thing, so all three are read. What is read is then checked against
the passage: an entity none of whose words occurs in the passage (a template placeholder
such as "NAME", or a name the model made up) is dropped with its relationships, and a reply
left with nothing but such records is invalid — the engine asks once more, then falls back.
"""
from __future__ import annotations

import re

from provrag.engines.openai.prompts import COMPLETE, TUPLE
from provrag.engines.openai.replies import load_json_object

_NAME_KEYS = ("title", "name", "entity", "entity_name", "entity name")
_TYPE_KEYS = ("type", "entity_type", "entity type", "category", "kind")
_DESC_KEYS = ("description", "desc", "entity_description", "relationship_description", "summary")
_SOURCE_KEYS = ("source", "source_entity", "source entity", "src", "from", "subject", "entity1", "entity 1")
_TARGET_KEYS = ("target", "target_entity", "target entity", "tgt", "to", "object", "entity2", "entity 2")
_WEIGHT_KEYS = ("strength", "weight", "relationship_strength", "relationship strength", "score")
_WORD = re.compile(r"[^\W_]+")


def _clean(field) -> str:
    return " ".join(str(field if field is not None else "").split()).strip().strip('"').strip("'").strip()


def _pick(row: dict, keys: tuple[str, ...]) -> str:
    low = {str(k).strip().lower(): v for k, v in row.items()}
    return next((_clean(low[k]) for k in keys if low.get(k) not in (None, "")), "")


def _weight(v) -> float:
    try:
        w = float(v)
    except (TypeError, ValueError):
        return 1.0
    return w if w == w and w > 0 else 1.0


def _from_records(reply: str) -> tuple[list[dict], list[dict], int]:
    ents, rels, bad = [], [], 0
    for piece in re.split(r"##|\n", reply.replace(COMPLETE, "\n")):
        piece = piece.strip().rstrip(",").strip()
        if not piece:
            continue
        if piece.startswith("(") and piece.endswith(")"):
            piece = piece[1:-1]
        fields = [_clean(f) for f in piece.split(TUPLE)]
        kind = fields[0].lower()
        if kind == "entity" and len(fields) >= 3 and fields[1]:
            ents.append({"title": fields[1], "type": fields[2], "description": fields[3] if len(fields) > 3 else ""})
        elif kind == "relationship" and len(fields) >= 4 and fields[1] and fields[2]:
            rels.append({"source": fields[1], "target": fields[2], "description": fields[3],
                         "weight": fields[4] if len(fields) > 4 else None})
        else:
            bad += 1
    return ents, rels, bad


def _rows_of(items, is_rel: bool) -> list[dict]:
    out = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        if is_rel:
            out.append({"source": _pick(it, _SOURCE_KEYS), "target": _pick(it, _TARGET_KEYS),
                        "description": _pick(it, _DESC_KEYS + ("relationship", "relation")),
                        "weight": next((it[k] for k in _WEIGHT_KEYS if k in it), None)})
        else:
            out.append({"title": _pick(it, _NAME_KEYS), "type": _pick(it, _TYPE_KEYS),
                        "description": _pick(it, _DESC_KEYS)})
    return out


def _from_json(reply: str) -> tuple[list[dict], list[dict]] | None:
    if "{" not in reply:
        return None
    try:
        obj = load_json_object(reply)
    except ValueError:
        return None
    low = {str(k).lower(): v for k, v in obj.items()}
    if not any(k in low for k in ("entities", "relationships", "relations")):
        return None
    return _rows_of(low.get("entities"), False), _rows_of(low.get("relationships") or low.get("relations"), True)


def _from_tables(reply: str) -> tuple[list[dict], list[dict]] | None:
    """Markdown tables: one with source and target columns holds relationships, one with a
    name column entities."""
    ents, rels, header = [], [], None
    for line in reply.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip().strip("*").strip() for c in line.strip("|").split("|")]
        if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            continue
        if header is None:
            header = [c.lower() for c in cells]
            continue
        row = dict(zip(header, cells))
        if any(k in header for k in _SOURCE_KEYS) and any(k in header for k in _TARGET_KEYS):
            rels += _rows_of([row], True)
        elif any(k in header for k in _NAME_KEYS):
            ents += _rows_of([row], False)
    return (ents, rels) if ents or rels else None


def _named_in(title: str, passage_words: set[str], passage_upper: str) -> bool:
    """The passage names it: one of its words (3+ letters) occurs there, or the whole short title does."""
    words = [w for w in _WORD.findall(title.lower()) if len(w) >= 3]
    if words:
        return any(w in passage_words for w in words)
    return bool(title) and title.upper() in passage_upper


def parse_extraction(reply: str, passage: str | None = None) -> dict:
    """{"entities": [{"title", "type", "description"}], "relationships": [{"source", "target",
    "description", "weight"}]} from records, JSON or a table. Names and types are upper-cased as
    GraphRAG writes them, so the same name merges across units. Valid: something named in the
    passage, or an empty answer that says so (`<|COMPLETE|>` alone)."""
    read = _from_json(reply) or _from_tables(reply)
    bad = 0
    if read is None:
        ents, rels, bad = _from_records(reply)
    else:
        ents, rels = read
    if not ents and not rels:
        if bad or COMPLETE not in reply:
            raise ValueError(f'no ("entity"{TUPLE}…) or ("relationship"{TUPLE}…) records found; '
                             f"use the record format and end with {COMPLETE}")
        return {"entities": [], "relationships": []}
    words = set(_WORD.findall((passage or "").lower()))
    upper = (passage or "").upper()

    def known(name: str) -> bool:
        return bool(name) and (passage is None or _named_in(name, words, upper))

    entities: dict[str, dict] = {}
    for e in ents:
        title = e["title"].upper()
        if not known(title):
            continue
        desc = e["description"]
        if title not in entities:
            entities[title] = {"title": title, "type": e["type"].upper(), "description": desc}
        elif desc and desc not in entities[title]["description"]:
            entities[title]["description"] = (entities[title]["description"] + "\n" + desc).strip()
    out_rels, seen = [], set()
    for r in rels:
        src, tgt = r["source"].upper(), r["target"].upper()
        if not known(src) or not known(tgt) or src == tgt or (src, tgt, r["description"]) in seen:
            continue
        seen.add((src, tgt, r["description"]))
        out_rels.append({"source": src, "target": tgt, "description": r["description"], "weight": _weight(r["weight"])})
        for name in (src, tgt):  # an edge's endpoints are nodes even when the model forgot their records
            entities.setdefault(name, {"title": name, "type": "", "description": ""})
    if not entities:
        raise ValueError("none of the names in your records occurs in the passage; write each NAME as the "
                         "passage writes it, or reply with " + COMPLETE + " alone if it names nothing")
    return {"entities": list(entities.values()), "relationships": out_rels}

