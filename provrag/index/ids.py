"""Stable ids over time (CONTRACT.md §7): the index's id registry, `ids.parquet`.

An audit trail is only as good as the ids it cites. GraphRAG numbers `human_readable_id` by
row position, so deleting one document moves every number after it and an old
`[Data: Sources (1154)]` silently points at another paragraph. provrag keeps a registry
beside the tables instead: one row per id ever given out, per table, with its number, a
digest of its content and the runs that added, last changed and retired it.

- `id` is content-derived (a text unit: its document path, text and occurrence; an entity:
  its normalised title; a relationship: its pair; a community: its level and members), so the
  same content gets the same `id` in every run, and the registry hands it the same number.
- New content gets the next number of its table; a number is never given to other content,
  so numbers may have gaps. An id whose content is gone is retired in this run: resolving
  its number then says "no longer in the index (removed in version N)". Content that comes
  back (a deleted file restored) gets its old number back — it is the same content.
- Entities, relationships and reports keep their identity while their content may change
  (an entity gains a description from a new document); the digest notices that, and the run
  that changed it is recorded, so a trace made before says "changed since".
- Community reports take their community's number (GraphRAG cites `Reports (n)` by it);
  the registry keeps a row per report, keyed by the community id, for the digest of its text.

The registry is small (one row per id, ~100 bytes) and read once per run and per resolution
of a missing or changed id.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from provrag.store import schema

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

REGISTRY = "ids"   # ids.parquet in the index folder
# the tables whose numbers the registry keeps (community reports use their community's)
NUMBERED = (schema.DOCUMENTS, schema.TEXT_UNITS, schema.ENTITIES, schema.RELATIONSHIPS, schema.COMMUNITIES,
            schema.COMMUNITY_REPORTS)
# the columns whose content a row's digest covers: a change there is a change of that id
DIGEST_COLUMNS = {
    schema.DOCUMENTS: ("path", "sha256", "status"),
    schema.TEXT_UNITS: (schema.TEXT,),
    schema.ENTITIES: (schema.TITLE, "type", "description", schema.TEXT_UNIT_IDS),
    schema.RELATIONSHIPS: ("source", "target", "description", "weight", schema.TEXT_UNIT_IDS),
    schema.COMMUNITIES: (schema.LEVEL, schema.ENTITY_IDS),
    schema.COMMUNITY_REPORTS: ("full_content",),
}
# citation kind → the table its numbers live in
KIND_TABLE = {"Sources": schema.TEXT_UNITS, "Entities": schema.ENTITIES, "Relationships": schema.RELATIONSHIPS,
              "Reports": schema.COMMUNITY_REPORTS}

REGISTRY_SCHEMA_FIELDS = (("table", "string"), ("id", "string"), ("human_readable_id", "int64"),
                          ("digest", "string"), ("added", "int64"), ("changed", "int64"), ("retired", "int64"))


@dataclass
class Entry:
    """One id ever given out: its number and the runs that added, last changed and retired it."""

    hrid: int
    digest: str
    added: int
    changed: int
    retired: int | None = None


def digest_of(values) -> str:
    """A short hash of a row's content columns (lists and numbers as their text)."""
    return schema.content_id(*(repr(v) for v in values))[:16]


class IdRegistry:
    """The numbers of every table across runs; one instance per index run."""

    def __init__(self, entries: dict[str, dict[str, Entry]] | None = None, run: int = 1):
        self.entries: dict[str, dict[str, Entry]] = {t: dict((entries or {}).get(t, {})) for t in NUMBERED}
        self.run = run
        self.seen: dict[str, set[str]] = {t: set() for t in NUMBERED}

    # ---- reading and writing ----------------------------------------------------------------

    @classmethod
    def load(cls, index_dir: Path | None, run: int) -> IdRegistry:
        """The registry of the index at `index_dir` (empty when there is none), for run `run`."""
        path = Path(index_dir) / f"{REGISTRY}.parquet" if index_dir is not None else None
        if path is None or not path.is_file():
            return cls(run=run)
        import pyarrow.parquet as pq

        entries: dict[str, dict[str, Entry]] = {t: {} for t in NUMBERED}
        for t, i, h, d, a, c, r in zip(*pq.read_table(path).to_pydict().values()):
            if t in entries:
                entries[t][i] = Entry(int(h), d, int(a), int(c), None if r is None else int(r))
        return cls(entries, run)

    def to_arrow(self) -> pa.Table:
        import pyarrow as pa

        cols: dict[str, list] = {name: [] for name, _ in REGISTRY_SCHEMA_FIELDS}
        for table in NUMBERED:
            for id_, e in sorted(self.entries[table].items(), key=lambda kv: kv[1].hrid):
                for name, value in zip(cols, (table, id_, e.hrid, e.digest, e.added, e.changed, e.retired)):
                    cols[name].append(value)
        return pa.table({name: pa.array(cols[name], getattr(pa, typ)()) for name, typ in REGISTRY_SCHEMA_FIELDS})

    # ---- numbering a run's tables -----------------------------------------------------------

    def number(self, table: str, ids: list[str], digests: list[str]) -> list[int]:
        """The human_readable_id of each id: its registered number, or the next free one of the
        table for new content (in the order given, so a first run numbers 0, 1, 2 …)."""
        following = max((e.hrid for e in self.entries[table].values()), default=-1) + 1
        out = []
        for id_, digest in zip(ids, digests):
            e = self.record(table, id_, following, digest)
            if e.hrid == following:  # new content took the next number
                following += 1
            out.append(e.hrid)
        return out

    def record(self, table: str, id_: str, number: int, digest: str) -> Entry:
        """This run saw `id_` with content `digest`: its entry (new ones numbered `number`),
        revived if it had been retired and marked changed if its content differs."""
        e = self.entries[table].get(id_)
        if e is None:
            e = self.entries[table][id_] = Entry(number, digest, self.run, self.run)
        elif e.retired is not None or e.digest != digest:
            e.retired, e.digest, e.changed = None, digest, self.run  # back, or rewritten
        self.seen[table].add(id_)
        return e

    def number_frame(self, table: str, df: pl.DataFrame, key: str = schema.ID) -> pl.DataFrame:
        """`df` with human_readable_id from the registry (the digest read off DIGEST_COLUMNS)."""
        import polars as pl

        cols = DIGEST_COLUMNS[table]
        digests = [digest_of(row) for row in df.select(cols).iter_rows()]
        numbers = self.number(table, df[key].to_list(), digests)
        return df.with_columns(pl.Series(schema.HRID, numbers, dtype=pl.Int64))

    def retire_unseen(self) -> dict[str, dict[str, int]]:
        """Retire every live id this run did not see; per table: added, changed, retired, live."""
        counts = {}
        for table in NUMBERED:
            added = changed = retired = live = 0
            for id_, e in self.entries[table].items():
                if id_ not in self.seen[table]:
                    if e.retired is None:
                        e.retired = self.run
                        retired += 1
                    continue
                live += 1
                added += e.added == self.run
                changed += e.changed == self.run and e.added != self.run
            counts[table] = {"added": added, "changed": changed, "retired": retired, "live": live}
        return counts

    def version(self) -> str:
        """The index's content version: a hash of every live id and its digest. Same content,
        same version, whichever run or machine built it."""
        parts = sorted(f"{t}\x1f{i}\x1f{e.digest}" for t in NUMBERED for i, e in self.entries[t].items()
                       if e.retired is None)
        return schema.content_id("index", *parts)[:16]


def community_numbers(registry: IdRegistry, communities: pl.DataFrame) -> pl.DataFrame:
    """Communities renumbered by the registry: `community`, `human_readable_id`, `parent` and
    `children` all take the stable number (the stage numbers them 0…n−1 per run)."""
    import polars as pl

    if communities.height == 0:
        return communities
    numbered = registry.number_frame(schema.COMMUNITIES, communities)
    stable = dict(zip(communities[schema.COMMUNITY].to_list(), numbered[schema.HRID].to_list()))
    return numbered.with_columns(
        pl.Series(schema.COMMUNITY, [stable[c] for c in communities[schema.COMMUNITY].to_list()], dtype=pl.Int64),
        pl.Series(schema.PARENT, [stable.get(p, -1) for p in communities[schema.PARENT].to_list()], dtype=pl.Int64),
        pl.Series(schema.CHILDREN, [sorted(stable[c] for c in cs or []) for cs in communities[schema.CHILDREN].to_list()],
                  dtype=pl.List(pl.Int64)),
    )


def register_reports(registry: IdRegistry, reports: pl.DataFrame, communities: pl.DataFrame) -> None:
    """Record each report's digest under its community's id and number (reports are cited by
    their community's number; a rewritten report is a change of that number's content)."""
    community_id = dict(zip(communities[schema.COMMUNITY].to_list(), communities[schema.ID].to_list()))
    for number, full in reports.select(schema.COMMUNITY, "full_content").iter_rows():
        if number in community_id:
            registry.record(schema.COMMUNITY_REPORTS, community_id[number], int(number), digest_of((full,)))
