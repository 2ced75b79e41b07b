"""What became of cited ids since an answer was made (CONTRACT.md §7), read off the index's
id registry (provrag/index/ids.py) and manifest.json's history.

An answer cites numbers: `[Data: Sources (1154)]`. On a later version of the index the number
means one of three things, and the user must be told which:
- the same content: nothing to say;
- retired: its content is gone (its document removed or edited) — resolving it says
  "no longer in the index (removed in version N)", never another unit's text;
- changed: an entity, relationship or report kept its number but its content was rewritten
  by a later run (a new document added a description) — verify judges against the content
  now in place and says it changed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provrag.index.ids import KIND_TABLE, Entry, IdRegistry, REGISTRY
from provrag.store import schema


@dataclass
class IdChanges:
    """The cited ids that changed or were retired between the version an answer was made on
    (`since`) and the index's version now."""

    since: str | None                   # the answer's index_version (None: made before versions existed)
    index_version: str | None           # the index's version now
    known: bool                         # False: `since` is not in the index's history; nothing can be said
    changed: list[dict] = field(default_factory=list)    # {"kind", "id", "run"}
    retired: list[dict] = field(default_factory=list)    # {"kind", "id", "run", "reason"}

    def to_json(self) -> dict[str, Any]:
        return {"since": self.since, "index_version": self.index_version, "known": self.known,
                "changed": self.changed, "retired": self.retired}


class IdHistory:
    """The registry and history of one provrag index, read once."""

    def __init__(self, index_path: Path):
        self.path = Path(index_path)
        try:
            self.manifest = json.loads((self.path / schema.MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.manifest = {}
        self.registry = IdRegistry.load(self.path, run=0)
        self._by_number: dict[str, dict[int, Entry]] = {}

    @property
    def version(self) -> str | None:
        return self.manifest.get("index_version")

    def entry(self, kind: str, number: int) -> Entry | None:
        table = KIND_TABLE.get(kind)
        if table is None:
            return None
        if table not in self._by_number:
            self._by_number[table] = {e.hrid: e for e in self.registry.entries.get(table, {}).values()}
        return self._by_number[table].get(int(number))

    def run_of(self, version: str | None) -> int | None:
        """The run that made `version` (the last one, if a version recurs), or None."""
        runs = [h.get("run") for h in self.manifest.get("history") or [] if isinstance(h, dict)
                and h.get("index_version") == version]
        return int(runs[-1]) if runs and runs[-1] is not None else None

    def run_label(self, run: int) -> str:
        """"version 3 of 2026-11-24 (a1b2c3d4)": how a run is named to a user."""
        for h in self.manifest.get("history") or []:
            if isinstance(h, dict) and h.get("run") == run:
                day = str(h.get("created") or "")[:10]
                ver = str(h.get("index_version") or "")[:8]
                return f"version {run}" + (f" of {day}" if day else "") + (f" ({ver})" if ver else "")
        return f"version {run}"

    def retired_reason(self, kind: str, number: int) -> str | None:
        """"no longer in the index (removed in version N …)" for a retired number, else None."""
        e = self.entry(kind, number)
        if e is None or e.retired is None:
            return None
        return f"no longer in the index (removed in {self.run_label(e.retired)})"

    def since(self, version: str | None, cited: list[tuple[str, int]]) -> IdChanges:
        """Which of the cited (kind, number) pairs changed or were retired after `version`."""
        now = self.version
        if version is not None and version == now:
            return IdChanges(version, now, True)
        base = self.run_of(version) if version is not None else None
        out = IdChanges(version, now, base is not None)
        for kind, number in dict.fromkeys(cited):
            e = self.entry(kind, number)
            if e is None:
                continue
            if e.retired is not None and (base is None or e.retired > base):
                out.retired.append({"kind": kind, "id": int(number), "run": e.retired,
                                    "reason": self.retired_reason(kind, number)})
            elif e.retired is None and base is not None and e.changed > base:
                out.changed.append({"kind": kind, "id": int(number), "run": e.changed,
                                    "reason": f"rewritten in {self.run_label(e.changed)}"})
        return out


def id_history(reader) -> IdHistory | None:
    """The reader's IdHistory, read once per reader; None for an index without a registry
    (a Microsoft GraphRAG folder, a provrag index made before ids were kept)."""
    st = reader.__dict__.setdefault("_prv_id_history", [None, False])
    if not st[1]:
        st[1] = True
        if reader.kind == "provrag" and (Path(reader.path) / f"{REGISTRY}.parquet").is_file():
            st[0] = IdHistory(reader.path)
    return st[0]


def changes_since(reader, version: str | None, answer: str) -> dict | None:
    """For an answer made on index `version` (a stored trace's): the ids it cites that changed or
    were retired since, as `index_changes` JSON; None when the index keeps no id registry."""
    history = id_history(reader)
    return history.since(version, cited_numbers(answer)).to_json() if history is not None else None


def cited_numbers(answer: str) -> list[tuple[str, int]]:
    """Every (kind, number) an answer cites, in order, once."""
    from provrag.query.citations import parse_citations

    return list(dict.fromkeys((r.kind, int(i)) for b in parse_citations(answer or "").blocks for r in b.refs
                              for i in r.ids))


def describe_changes(changes: dict | None) -> list[tuple[str, str]]:
    """(level, line) pairs telling a user what became of an answer's cited ids: level is
    "head", "retired", "changed" or "unknown". Empty when nothing changed or nothing can be
    compared (the terminal view and the HTML report both print these)."""
    if not changes or changes.get("since") == changes.get("index_version"):
        return []
    since, now = changes.get("since"), changes.get("index_version")
    lines: list[tuple[str, str]] = []
    if not changes.get("known"):
        what = f"version {since}" if since else "an index version it does not record"
        lines.append(("unknown", f"the answer was made on {what}; this index ({now}) keeps no history back to it, "
                                 "so which cited ids changed since cannot be said"))
        return lines
    for item in changes.get("retired") or []:
        lines.append(("retired", f"retired since the answer: {item['kind']} ({item['id']}) — {item['reason']}"))
    for item in changes.get("changed") or []:
        lines.append(("changed", f"changed since the answer: {item['kind']} ({item['id']}) — {item['reason']}; "
                                 "judged against its content now"))
    if lines:
        lines.insert(0, ("head", f"the index changed since this answer (made on version {since}, now {now})"))
    return lines
