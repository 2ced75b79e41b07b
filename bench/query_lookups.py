"""The lookups an ask makes around its model passes, timed for this tree and another commit in one
run, with the same results required of both (issue 30: nothing a question uses may cost more than
it must).

usage: python bench/query_lookups.py INDEX [INDEX …] [--base-ref b9ce90c] [--reps 5] [--work DIR]

For each index and each of eval/dev/squad's first questions (the server bench's questions) and
eval/texlive's, one child process per tree (the other commit checked out as a detached worktree
under --work, question_speed.base_tree, its code first on sys.path, this venv's libraries) times,
warm (the median of --reps calls after a first one):
- entities: local search's match of entity titles in the question (query/local_search.match_entities);
- relationships: the relationships of the entities matched (local search's graph context:
  local_search.entity_relationships here, the same query inline before it);
- named: the documents the question names (query/named.named_scope);
- neighbours: the units before and after the question's ten best units (continuations and
  antecedents: query/retrieve.neighbours here; two lookups before it), on a reader without kept rows
  (a CLI ask's first attempt) and asked again on a reader keeping them (a retry, a server).
Prints a table per index (ms per question, base and new, new ÷ base) and whether every result
is the same; exits 1 if any differs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
QUESTIONS = 12

CHILD = r'''
import json, statistics, sys, time
tree, index, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if tree != "-":
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, tree)
from provrag.config import load_config
from provrag.query import retrieve
from provrag.query.local_search import match_entities
from provrag.query.named import named_scope
from provrag.store import terms as lexical
from provrag.store.reader import open_index
from provrag.store.units import KeptUnits, fetch_units

questions = json.loads(sys.stdin.read())
cfg = load_config(None)
reader = open_index(index)
lexical.ensure_terms(reader.con, reader.path)

def timed(fn):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter(); out = fn(); times.append(time.perf_counter() - t)
    return out, statistics.median(times) * 1000

def relationships(titles):
    import provrag.query.local_search as ls
    if hasattr(ls, "entity_relationships"):
        return ls.entity_relationships(reader.con, titles)
    if not titles:
        return []
    return reader.con.execute("""
        SELECT human_readable_id, source, target, description, weight, text_unit_ids FROM relationships
        WHERE source IN (SELECT unnest(?::VARCHAR[])) OR target IN (SELECT unnest(?::VARCHAR[]))
        ORDER BY (source IN (SELECT unnest(?::VARCHAR[])) AND target IN (SELECT unnest(?::VARCHAR[]))) DESC,
                 weight DESC NULLS LAST, human_readable_id LIMIT 10""", [titles] * 4).fetchall()

def neighbours(rdr, ids):
    if hasattr(retrieve, "neighbours"):
        return list(retrieve.neighbours(rdr, ids))
    return [retrieve.continuations(rdr.con, ids), retrieve.antecedents(rdr.con, ids)]

rows = []
for q in questions:
    ents, ms_e = timed(lambda: match_entities(reader.con, q))
    titles = [e["title"] for e in ents]
    rels, ms_r = timed(lambda: relationships(titles))
    scope, ms_n = timed(lambda: named_scope(reader.con, reader.path, q))
    ids = [c["text_unit_id"] for c in retrieve.retrieve_units(reader, q, cfg, k=10, pool=100).candidates[:10]]
    reader.kept_units = None
    nb, ms_b = timed(lambda: neighbours(reader, ids))
    reader.kept_units = KeptUnits()
    fetch_units(reader, ids)
    nb2, ms_k = timed(lambda: neighbours(reader, ids))
    reader.kept_units = None
    rows.append({"q": q, "ms": {"entities": ms_e, "relationships": ms_r, "named": ms_n, "neighbours": ms_b,
                                "neighbours, kept": ms_k},
                 "result": [[e["id"] for e in ents], [list(r[:3]) for r in rels],
                            scope and [scope.documents, len(scope.unit_ids)], nb, nb2]})
print(json.dumps(rows))
'''


def child(tree: str, index: Path, reps: int, questions: list[str]) -> list:
    out = subprocess.run([sys.executable, "-c", CHILD, tree, str(index), str(reps)], input=json.dumps(questions),
                         capture_output=True, text=True, cwd=str(ROOT), check=True)
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("indexes", nargs="+", type=Path)
    ap.add_argument("--base-ref", default="b9ce90c")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--work", type=Path, default=Path("/tmp/provrag-query-lookups"))
    a = ap.parse_args()
    load = lambda p: [json.loads(x)["question"] for x in p.read_text().splitlines() if x.strip()][:QUESTIONS]
    questions = load(ROOT.parent / "shared" / "eval" / "dev" / "squad" / "questions.jsonl") \
        + load(ROOT / "eval" / "texlive" / "questions.jsonl")
    from question_speed import base_tree   # the same detached worktree of the commit before

    base = base_tree(a.base_ref, a.work)
    same = True
    for index in a.indexes:
        old = child(str(base), index, a.reps, questions)
        new = child("-", index, a.reps, questions)
        differ = [o["q"] for o, n in zip(old, new) if o["result"] != n["result"]]
        same &= not differ
        print(f"\n{index} ({len(questions)} questions; results the same: {'yes' if not differ else differ})")
        print(f"| lookup | {a.base_ref} ms | new ms | new ÷ base |\n| --- | ---: | ---: | ---: |")
        for key in old[0]["ms"]:
            b = statistics.mean(o["ms"][key] for o in old)
            n = statistics.mean(x["ms"][key] for x in new)
            print(f"| {key} | {b:.1f} | {n:.1f} | {n / b:.2f} |")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
