"""`provrag verify` per claim, this tree beside the commit before, in one run; and the same verdicts.

usage: python bench/verify_speed.py [--base-ref bdc5891] [--set NAME=INDEX:CLAIMS …] [--reps 2]
         [--cold 3] [--judge features|learned] [--out STEM] [--work DIR]
       python bench/verify_speed.py --same [--set …] [--judge …]
       python bench/verify_speed.py --judge-only [--set …] [--reps 3]

Speed (the default): one child process per tree (the commit before as a detached worktree under
--work, imported first on sys.path with the editable finder dropped: the same venv, so the same
libraries), both alive at once and fed the same claims in turn — base, new, base, new … — so the
load of the moment falls on both alike. Each child verifies its first claims once to warm up
(models, caches, the index opened once, as a server holds it: /v1/verify), then times every
claim of every set `--reps` times, warm, in process (`run_verify`, trace stored), and splits its
time by stage, exclusive (a stage's time excludes the stages it calls):
  evidence retrieval (BM25 + fusion + why), MiniLM pass (the claim's query vector), vector search,
  cited resolution, unit fetch, judge spans/sentences, judge features, learned judge (claim head
  passes, only with --judge learned), judge other (decide/outweigh/normalise), seams, quote/page
  (evidence shown), trace write, other.
Cold: `provrag verify --answer CLAIM --json` through the CLI, --cold claims per tree, interleaved.
Indexes are read in place through a link farm (verify stores its trace in INDEX/queries, ours).

--same: every claim of every set through both trees (the trace not stored) and the full JSON of
each verify result compared: verdicts, labels, scores to 3 decimals, reasons, evidence ids, pages
and quotes, citations; the trace ids and file names aside. Exits 1 on any difference.
--judge-only: the fitted judge's features alone (judge/features.py, the largest stage) over the
(claim, text) pairs the claims of the sets are judged on (recorded from this tree's run), per tree,
interleaved, its caches emptied first (each text read for the first time) and then again (texts
met before, as a server meets them): the stage without retrieval, storage and load noise.
Writes bench/results/verify_speed-<date>.json (speed), verify_same-<date>.json (--same) or
verify_judge-only-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from question_speed import base_tree, link_farm, wrapper  # noqa: E402  (the same worktree and link farm)

HONEST = Path("/work/scratch/honest3")
DEFAULT_SETS = [f"manuals={HONEST}/idx-manuals:{ROOT}/eval/manuals/claims.jsonl",
                f"small={HONEST}/idx-small:{ROOT}/eval/small/claims.jsonl",
                f"texlive={HONEST}/idx-texlive:{ROOT}/eval/texlive/claims.jsonl",
                # answers with their citations, as /v1/verify gets them (a check_qa run of ask)
                f"manuals-answers={HONEST}/idx-manuals:{HONEST}/after-manuals.jsonl"]
# --same also checks the answers ask gave on the other two sets
SAME_SETS = DEFAULT_SETS + [f"small-answers={HONEST}/idx-small:{HONEST}/after-small.jsonl",
                            f"texlive-answers={HONEST}/idx-texlive:{HONEST}/after-texlive.jsonl"]
GOAL_MS = 150.0

# The child: reads one JSON command a line on stdin ({"set", "claim", "save"}), verifies the claim
# over that set's index (opened once) and writes {"ms", "stages", "result"} a line. Run as
# `python -c CHILD TREE SETS_JSON JUDGE` so the base tree's code is imported, never this one's.
CHILD = r"""
import sys, time, json, importlib
tree, sets, judge = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if tree != "-":
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, tree)
import provrag
assert tree == "-" or provrag.__file__.startswith(tree), provrag.__file__
from provrag.config import load_config
from provrag.pipelines.verify import run_verify
from provrag.store.reader import open_index
spent, stack = {}, []
def timed(stage, fn):
    def wrapped(*a, **k):
        stack.append(0.0)
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            took = time.perf_counter() - t
            inner = stack.pop()
            spent[stage] = spent.get(stage, 0.0) + 1000 * (took - inner)
            if stack:
                stack[-1] += took
    wrapped.__wrapped__ = fn
    return wrapped
STAGES = [("evidence retrieval", "provrag.verify.evidence", "retrieve"),
          ("MiniLM pass", "provrag.query.retrieve", "embed_query"),
          ("vector search", "provrag.query.retrieve", "dense_channel"),
          ("cited resolution", "provrag.verify.evidence", "cited_units"),
          ("unit fetch", "provrag.verify.evidence", "fetch_units"),
          ("unit fetch", "provrag.query.retrieve", "fetch_units"),
          ("judge spans/sentences", "provrag.engines.offline.judge.analysis", "sentences"),
          ("judge features", "provrag.engines.offline.judge.decide", "features"),
          ("judge features", "provrag.engines.offline.judge.learned", "veto"),
          ("learned judge (claim head)", "provrag.learned.reader", "Reader.claim_probs"),
          ("judge other", "provrag.verify.verdicts", "Judge.__call__"),
          ("seams", "provrag.verify.evidence", "seam_units"),
          ("quote/page", "provrag.verify.evidence", "evidence_of"),
          ("trace write", "provrag.pipelines.verify", "save_trace")]
for stage, module, name in STAGES:
    try:
        owner = importlib.import_module(module)
    except ImportError:
        continue
    *path, attr = name.split(".")
    for p in path:
        owner = getattr(owner, p)
    if hasattr(owner, attr):
        setattr(owner, attr, timed(stage, getattr(owner, attr)))
# analysis.sentences is also reached as a name imported elsewhere: patch those names too
import provrag.engines.offline.judge.analysis as analysis
for m in list(sys.modules.values()):
    if getattr(m, "__name__", "").startswith("provrag.") and getattr(m, "sentences", None) is getattr(analysis.sentences, "__wrapped__", None):
        m.sentences = analysis.sentences
import provrag.engines.offline.judge.decide as decide_module
recorded, record = [], {"on": False}
def recording(fn):
    def wrapped(claim, evidence, *a, **k):
        if record["on"]:
            recorded.append([claim, evidence, list(a), k])
        return fn(claim, evidence, *a, **k)
    return wrapped
decide_module.features = recording(decide_module.features)
def judge_pairs(pairs):
    # the fitted judge's features over recorded (claim, text) pairs: caches emptied, then again
    import provrag.engines.offline.judge.features as F
    caches = []
    for module, name in (("analysis", "analyse"), ("analysis", "sentences"), ("features", "_near"),
                         ("features", "_sorted_words"), ("slots", "sentence_tokens"), ("opposites", "_words")):
        fn = getattr(importlib.import_module("provrag.engines.offline.judge." + module), name, None)
        if hasattr(fn, "cache_clear"):
            caches.append(fn)
    for fn in caches:
        fn.cache_clear()
    t = time.perf_counter()
    first = [F.features(c, e, *a, **k) for c, e, a, k in pairs]
    cold = 1000 * (time.perf_counter() - t)
    t = time.perf_counter()
    [F.features(c, e, *a, **k) for c, e, a, k in pairs]
    return {"cold_ms": cold, "again_ms": 1000 * (time.perf_counter() - t), "n": len(first)}
overrides = {"verify": {"judge": judge}} if judge != "default" else None
cfg = load_config(None, overrides)
readers = {}
for line in sys.stdin:
    cmd = json.loads(line)
    if "pairs" in cmd:
        print(json.dumps(judge_pairs(cmd["pairs"])), flush=True)
        continue
    if "recorded" in cmd:
        print(json.dumps({"pairs": recorded[:]}), flush=True)
        recorded.clear()
        continue
    record["on"] = bool(cmd.get("record"))
    index = sets[cmd["set"]]
    if index not in readers:
        readers[index] = open_index(index)
        try:  # as a server lends it (serve/opened.py): unit rows kept between requests
            from provrag.store.units import KeptUnits
            readers[index].kept_units = KeptUnits()
        except ImportError:
            pass
    spent.clear()
    t = time.perf_counter()
    result = run_verify(index, cfg, answer=cmd["claim"], question=cmd.get("question"), save=cmd.get("save", True),
                        reader=readers[index])
    ms = 1000 * (time.perf_counter() - t)
    out = {"ms": ms, "n": len(result.claims), "stages": dict(spent)}
    if cmd.get("json"):
        out["result"] = result.to_json()
    print(json.dumps(out), flush=True)
"""
STAGE_ORDER = ("evidence retrieval", "MiniLM pass", "vector search", "cited resolution", "unit fetch",
               "judge spans/sentences", "judge features", "learned judge (claim head)", "judge other", "seams",
               "quote/page", "trace write", "other")


def parse_sets(given: list[str]) -> dict[str, tuple[str, list[dict]]]:
    """name → (index, claims) from NAME=INDEX:CLAIMS; sets whose index or claims are missing are skipped."""
    out = {}
    for s in given:
        name, rest = s.split("=", 1)
        index, claims = rest.rsplit(":", 1)
        if not Path(index, "manifest.json").exists() or not Path(claims).exists():
            print(f"skipped {name}: {index} or {claims} missing", file=sys.stderr)
            continue
        rows = [json.loads(x) for x in Path(claims).read_text().splitlines() if x.strip()]
        # a claims file ({"claim"}) or answers an ask gave ({"question", "answer"}, not abstained)
        out[name] = (index, [{"id": r.get("id"), "claim": r["claim"], "question": None} if "claim" in r else
                             {"id": r.get("id"), "claim": r["answer"], "question": r.get("question")}
                             for r in rows if r.get("claim") or (isinstance(r.get("answer"), str)
                                                                 and r["answer"].strip() and not r.get("abstained"))])
    return out


class Child:
    """One tree's child process, fed a claim at a time."""

    def __init__(self, tree: str, indexes: dict[str, str], judge: str):
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, tree, json.dumps(indexes), judge],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=str(ROOT))

    def ask(self, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"child died (exit {self.proc.wait()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def comparable(result: dict, places: int | None = 3) -> dict:
    """The verify JSON as a user sees it, floats to `places` decimals (None: as they are), the
    run's own ids and files aside."""
    def norm(x):
        if isinstance(x, float) and places is not None:
            return round(x, places)
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items() if k not in ("trace_id", "trace_file", "trace_error")}
        if isinstance(x, list):
            return [norm(v) for v in x]
        return x
    return norm(result)


def q(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))] if s else float("nan")


def load() -> list[float]:
    return list(os.getloadavg())


def same(children: dict[str, Child], sets: dict) -> dict:
    """Every claim through both trees, its full JSON compared."""
    diffs, n, exact, per_set = [], 0, 0, {}
    for name, (_, claims) in sets.items():
        per_set[name] = len(claims)
        for c in claims:
            raw = {tree: ch.ask(set=name, claim=c["claim"], question=c["question"], save=False, json=True)["result"]
                   for tree, ch in children.items()}
            got = {tree: comparable(r) for tree, r in raw.items()}
            n += 1
            exact += comparable(raw["base"], None) == comparable(raw["new"], None)
            if got["base"] != got["new"]:
                diffs.append({"set": name, "id": c.get("id"), "claim": c["claim"], "base": got["base"], "new": got["new"]})
                print(f"DIFFERENT {name} {c.get('id')}: {c['claim'][:80]}", flush=True)
    return {"claims": n, "per_set": per_set, "different": len(diffs), "identical_to_the_last_digit": exact, "diffs": diffs}


def speed(children: dict[str, Child], sets: dict, reps: int) -> dict:
    """Warm per-claim times and stage totals per tree, interleaved claim by claim."""
    for name, (_, claims) in sets.items():   # warm-up: models, caches, each index opened
        for c in claims[:2]:
            for ch in children.values():
                ch.ask(set=name, claim=c["claim"], question=c["question"], save=True)
    per_claim = {t: {} for t in children}
    stages = {t: {} for t in children}
    for rep in range(reps):
        for name, (_, claims) in sets.items():
            for c in claims:
                order = list(children.items()) if rep % 2 == 0 else list(children.items())[::-1]
                for tree, ch in order:
                    r = ch.ask(set=name, claim=c["claim"], question=c["question"], save=True)
                    per_claim[tree].setdefault(name, []).append(r["ms"] / max(r["n"], 1))
                    st = dict(r["stages"])
                    st["other"] = r["ms"] - sum(st.values())
                    for k, v in st.items():
                        stages[tree][k] = stages[tree].get(k, 0.0) + v
    n_claims = {t: sum(len(v) for v in per_claim[t].values()) for t in children}
    return {"per_claim_ms": per_claim,
            "stage_ms_per_claim": {t: {k: v / max(n_claims[t], 1) for k, v in stages[t].items()} for t in children}}


def judge_only(children: dict[str, Child], sets: dict, reps: int) -> dict:
    """The fitted judge alone (features.py) over the (claim, text) pairs every claim of the sets
    is judged on, per tree, interleaved: with its caches emptied (every text read for the first
    time, as a new claim's units are) and again (the units met before, as in a server)."""
    new = children["new"]
    for name, (_, claims) in sets.items():
        for c in claims:
            new.ask(set=name, claim=c["claim"], question=c["question"], save=False, record=True)
    pairs = new.ask(recorded=True)["pairs"]
    n_claims = sum(len(c) for _, c in sets.values())
    out = {t: {"cold_ms_per_claim": [], "again_ms_per_claim": []} for t in children}
    for rep in range(reps):
        for tree, ch in (list(children.items()) if rep % 2 == 0 else list(children.items())[::-1]):
            r = ch.ask(pairs=pairs)
            out[tree]["cold_ms_per_claim"].append(r["cold_ms"] / n_claims)
            out[tree]["again_ms_per_claim"].append(r["again_ms"] / n_claims)
    return {"pairs": len(pairs), "claims": n_claims, "per_tree": out}


def cold(clis: dict[str, str], farms: dict[str, str], sets: dict, n: int) -> dict:
    """`provrag verify --answer CLAIM --json` through the CLI, per tree, interleaved."""
    name = next(iter(sets))
    walls = {t: [] for t in clis}
    for c in sets[name][1][:n]:
        for tree, cli in clis.items():
            t0 = time.perf_counter()
            done = subprocess.run([cli, "verify", "--answer", c["claim"], "--index", farms[name], "--json"],
                                  capture_output=True, timeout=600)
            walls[tree].append(time.perf_counter() - t0)
            if done.returncode != 0:
                raise SystemExit(f"{tree} cold verify failed: {done.stderr.decode(errors='replace')[-300:]}")
    return {"set": name, "walls_s": walls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-ref", default="bdc5891")
    ap.add_argument("--set", action="append", help="NAME=INDEX:CLAIMS.jsonl (default: eval manuals, small, texlive)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--cold", type=int, default=3, help="claims verified cold through the CLI per tree")
    ap.add_argument("--judge", default="default", help="the [verify] judge: default (config.toml's), features, learned")
    ap.add_argument("--same", action="store_true", help="compare every verdict of both trees, no timing")
    ap.add_argument("--judge-only", action="store_true",
                    help="time the fitted judge's features alone over the claims' (claim, text) pairs")
    ap.add_argument("--work", type=Path, default=Path("/work/scratch/verifyspeed"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sets = parse_sets(args.set or (SAME_SETS if args.same else DEFAULT_SETS))
    args.work.mkdir(parents=True, exist_ok=True)
    base = base_tree(args.base_ref, args.work)
    farms = {name: str(link_farm(Path(index), args.work / "farms" / name)) for name, (index, _) in sets.items()}
    trees = {"base": str(base), "new": "-"}
    before = load()
    children = {t: Child(tree, farms, args.judge) for t, tree in trees.items()}
    try:
        if args.same:
            result = {"kind": "same", "judge": args.judge, **same(children, sets)}
        elif args.judge_only:
            result = {"kind": "judge_only", "judge": args.judge, **judge_only(children, sets, args.reps)}
        else:
            result = {"kind": "speed", "judge": args.judge, **speed(children, sets, args.reps)}
    finally:
        for ch in children.values():
            ch.close()
    if result["kind"] == "speed" and args.cold:
        clis = {"base": str(wrapper(base, args.work)), "new": str(Path(sys.executable).parent / "provrag")}
        result["cold"] = cold(clis, farms, sets, args.cold)
    result.update({"base_ref": args.base_ref, "machine": platform.platform(), "cpus": os.cpu_count(),
                   "load_before": before, "load_after": load(), "sets": {k: len(v[1]) for k, v in sets.items()}})
    stem = args.out or f"verify_{result['kind'].replace('_', '-')}-{dt.date.today()}"
    out = ROOT / "bench" / "results" / f"{stem}.json"
    out.write_text(json.dumps(result, indent=1))
    print(summary(result))
    print(f"wrote {out}")
    if args.same and result["different"]:
        sys.exit(1)


def summary(r: dict) -> str:
    """The figures as Markdown rows (what bench/results/verify_speed-*.md quotes)."""
    lines = [f"load average before {r['load_before'][0]:.1f}, after {r['load_after'][0]:.1f} "
             f"({r['cpus']} CPUs); judge: {r['judge']}"]
    if r["kind"] == "judge_only":
        per = r["per_tree"]
        med = {t: {k: statistics.median(v) for k, v in d.items()} for t, d in per.items()}
        lines.append(f"fitted judge alone, {r['pairs']} (claim, text) pairs of {r['claims']} claims, ms per claim "
                     f"(median of {len(per['base']['cold_ms_per_claim'])}): texts read for the first time: base "
                     f"{med['base']['cold_ms_per_claim']:.1f}, new {med['new']['cold_ms_per_claim']:.1f}; met before: "
                     f"base {med['base']['again_ms_per_claim']:.1f}, new {med['new']['again_ms_per_claim']:.1f}")
        return "\n".join(lines)
    if r["kind"] == "same":
        lines.append(f"same verdicts: {r['claims'] - r['different']} of {r['claims']} verify runs identical to 3 decimals "
                     f"({r['different']} different; {r['identical_to_the_last_digit']} identical to the last digit); "
                     + ", ".join(f"{k} {v}" for k, v in r["per_set"].items()))
        return "\n".join(lines)
    lines += ["| set | base p50 | new p50 | base p95 | new p95 | new ÷ base (p50) |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    pc = r["per_claim_ms"]
    for name in list(pc["base"]) + ["all"]:
        b = pc["base"][name] if name != "all" else [x for v in pc["base"].values() for x in v]
        n = pc["new"][name] if name != "all" else [x for v in pc["new"].values() for x in v]
        lines.append(f"| {name} | {q(b, .5):.0f} ms | {q(n, .5):.0f} ms | {q(b, .95):.0f} ms | {q(n, .95):.0f} ms "
                     f"| {q(n, .5) / q(b, .5):.2f}× |")
    lines += ["", "| stage (ms per claim, exclusive) | base | new |", "| --- | ---: | ---: |"]
    st = r["stage_ms_per_claim"]
    for k in STAGE_ORDER:
        if k in st["base"] or k in st["new"]:
            lines.append(f"| {k} | {st['base'].get(k, 0.0):.1f} | {st['new'].get(k, 0.0):.1f} |")
    lines.append(f"| total | {sum(st['base'].values()):.1f} | {sum(st['new'].values()):.1f} |")
    if "cold" in r:
        w = r["cold"]["walls_s"]
        lines.append(f"\ncold CLI `provrag verify --answer CLAIM --json` ({r['cold']['set']}, median of {len(w['base'])}): "
                     f"base {statistics.median(w['base']):.2f} s, new {statistics.median(w['new']):.2f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
