"""A served question's graph context by SQL scan and by the server's maps (query/graph_lookups.py),
in one process over the same index, with the same rows required of both (issue 30).

usage: python bench/graph_lookups.py INDEX [INDEX …] [--reps 3] [--asks 12]

For eval/manuals' and eval/texlive's questions (dev sets), it times, warm (each lookup's median of
--reps calls, per question), local search's three graph lookups (query/local_search.py):
entities named in the question, their relationships, their community reports; each by SQL (a CLI
ask's way) and through one GraphLookups (a server's), alternately; and how long each map took to
read. With --asks N, it also asks N questions as a server does (serve/opened.OpenIndex, a cursor
lent per question), once with the version's maps and once without, in two child processes,
and prints both p50s and the exploration stage's mean (where the graph lookups run). Exits 1
if any result differs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ASK = r"""
import json, statistics, sys, time
from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.serve.opened import OpenIndex
index, maps = sys.argv[1], sys.argv[2] == "maps"
qs = json.loads(sys.stdin.read())
cfg = load_config(None)
opened = OpenIndex(index)
if not maps:
    opened.graph_lookups = None      # every lent cursor then scans, as a CLI ask does
def ask(q):
    twin = opened.lend()
    try:
        return run_ask(q, index, cfg, save=False, reader=twin)
    finally:
        opened.give_back(twin, True)
ask(qs[0])                           # models loaded and the maps read: nothing measured
times, explore, answers = [], [], []
for q in qs[1:]:
    t = time.perf_counter()
    res = ask(q)
    times.append(1000 * (time.perf_counter() - t))
    explore.append(sum(s.get("ms") or 0 for s in res.trace.get("stages", []) if isinstance(s, dict)
                       and s.get("name") == "exploration"))
    a = res.to_json()
    answers.append([a["answer"], a["citations"], a["confidence"]])
print(json.dumps({"p50": statistics.median(times), "exploration": statistics.mean(explore), "answers": answers}))
"""


def questions() -> list[str]:
    out = []
    for name in ("manuals", "texlive"):
        f = ROOT / "eval" / name / "questions.jsonl"
        out += [json.loads(line)["question"] for line in f.read_text().splitlines() if line.strip()]
    return out


def lookups_per_question(index: Path, qs: list[str], reps: int) -> tuple[dict, dict, int]:
    """({"sql"|"maps": [entities, relationships, reports] ms per question}, map read ms, differing)."""
    from provrag.query.graph_lookups import GraphLookups
    from provrag.query.local_search import entity_relationships, entity_reports, match_entities
    from provrag.store.reader import open_index

    with open_index(index) as r:
        con, lookups = r.con, GraphLookups()
        read = {}
        for name, first in (("relationships", lambda: lookups.relationship_ids(con, ["x"], 10)),
                            ("communities", lambda: lookups.communities_of(con, ["x"]))):
            t = time.perf_counter()
            first()
            read[name] = 1000 * (time.perf_counter() - t)
        ms = {"sql": [0.0, 0.0, 0.0], "maps": [0.0, 0.0, 0.0]}
        differ = 0
        for q in qs:
            got = {}
            for mode, lk in (("sql", None), ("maps", lookups)):
                steps = [lambda: match_entities(con, q)]
                ents = steps[0]()
                steps += [lambda: entity_relationships(con, [e["title"] for e in ents], lookups=lk),
                          lambda: entity_reports(con, [e["id"] for e in ents], lk) if ents else []]
                for i, step in enumerate(steps):
                    times = []
                    for _ in range(reps):
                        t = time.perf_counter()
                        step()
                        times.append(1000 * (time.perf_counter() - t))
                    ms[mode][i] += statistics.median(times) / len(qs)
                got[mode] = repr([s() for s in steps])
            differ += got["sql"] != got["maps"]
    return ms, read, differ


def served(index: Path, qs: list[str], maps: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", ASK, str(index), "maps" if maps else "sql"], input=json.dumps(qs),
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"served asks failed: {done.stderr[-600:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", type=Path, nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--asks", type=int, default=0, help="served asks with and without the maps (0: none)")
    a = ap.parse_args()
    qs = questions()
    bad = 0
    for index in a.index:
        ms, read, differ = lookups_per_question(index, qs, a.reps)
        bad += differ
        print(f"\n{index} ({len(qs)} questions; results the same: {'yes' if not differ else f'no, {differ} differ'})")
        print("maps read once: " + ", ".join(f"{k} {v:.0f} ms" for k, v in read.items()))
        print("| lookup | SQL, ms per question | maps | maps ÷ SQL |\n| --- | ---: | ---: | ---: |")
        for i, name in enumerate(("entities", "relationships", "reports")):
            s, m = ms["sql"][i], ms["maps"][i]
            print(f"| {name} | {s:.1f} | {m:.1f} | {m / s:.2f} |")
        if a.asks:
            base, new = served(index, qs[:a.asks + 1], False), served(index, qs[:a.asks + 1], True)
            same = sum(x == y for x, y in zip(base["answers"], new["answers"]))
            bad += same != len(base["answers"])
            print(f"served asks ({a.asks}): p50 {base['p50']:.0f} ms without the maps, {new['p50']:.0f} ms with them "
                  f"({new['p50'] / base['p50']:.2f}); exploration stage {base['exploration']:.0f} → "
                  f"{new['exploration']:.0f} ms; answers the same: {same} of {len(base['answers'])}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
