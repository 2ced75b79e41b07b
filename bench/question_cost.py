"""What a warm question's model passes cost, pass by pass, this code beside the commit before.

usage: python bench/question_cost.py --index DIR [--set manuals] [--n 8] [--base-ref 1b14cfe] [--rounds 2]
       [--base-index DIR] [--served] [--profile N] [--tag TAG]

bench/question_speed.py times the stages of an ask; this one looks inside the two costliest, the
learned reader (provrag/learned/reader.py, onnxruntime) and the MiniLM meaning pass
(provrag/embeddings/minilm.py, numpy), on warm asks of eval/<set>/questions.jsonl: per question,
the reader's pairs by head (and how many are distinct), the word pieces it pads them to and how
many are real, its batches and milliseconds; MiniLM's texts, word pieces and milliseconds; the
answer check's milliseconds; and whether both trees gave the same answers (text, citations,
confidence to 3 decimals); the trace's stage rows; how many paragraph vectors came from the index
(index/passages.py). --served asks as the server does (the index opened once, a cursor lent per
question, its unit rows kept); --profile N adds the new tree's N costliest calls under cProfile.
Each tree runs in a child process of its own (the base tree through a
sys.path wrapper, the same venv), alternately for --rounds rounds, so machine load falls on both.
Writes bench/results/question_cost-<date>.json and prints a table.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

# The child: patches the reader's and MiniLM's entry points to count and time, then asks warm.
CHILD = r"""
import sys, json, time, collections
tree, index, qfile, n, served, profile = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "served", int(sys.argv[6])
if tree != "-":
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, tree)
from provrag.config import load_config
from provrag.pipelines.ask import run_ask
from provrag.learned import reader as R
from provrag.embeddings import minilm as M
from provrag.embeddings import remembered as REM
cfg = load_config(None)
qs = [json.loads(l)["question"] for l in open(qfile) if l.strip()][:n + 1]
opened = None
if served:          # as the server asks: the index opened once, a cursor lent per question (serve/opened.py)
    from provrag.serve.opened import OpenIndex
    opened = OpenIndex(index)
def ask(q):
    if opened is None:
        return run_ask(q, index, cfg, save=False)
    twin = opened.lend()
    try:
        return run_ask(q, index, cfg, save=False, reader=twin)
    finally:
        opened.give_back(twin, True)
ask(qs[0])                                                  # warm: models loaded, nothing measured
stored0 = getattr(REM.STORE, "stored", 0)
stats = collections.defaultdict(collections.Counter)
r = R.get()
run_session = r.session.run
head_now = {}
def session_run(names, feeds, options=None):
    t = time.perf_counter()
    out = run_session(names, feeds, options)
    s = stats["reader " + head_now["head"]]
    s["batches"] += 1; s["batch_ms"] += 1000 * (time.perf_counter() - t)
    s["padded_pieces"] += int(feeds["input_ids"].size); s["real_pieces"] += int(feeds["attention_mask"].sum())
    return out
r.session = type("Timed", (), {"run": staticmethod(session_run), "get_session_options": r.session.get_session_options})()
reader_run = R.Reader._run
def timed_run(self, head, firsts, seconds, contexts=None):
    head_now["head"] = head
    s = stats["reader " + head]
    s["pairs"] += len(seconds)
    s["distinct_pairs"] += len(set(zip(firsts, seconds, contexts or [None] * len(seconds))))
    t = time.perf_counter()
    try:
        return reader_run(self, head, firsts, seconds, contexts)
    finally:
        s["ms"] += 1000 * (time.perf_counter() - t)
R.Reader._run = timed_run
forward = M.MiniLMEmbedder._forward
def timed_forward(self, texts, tokens):
    s = stats["minilm " + ("with token vectors" if tokens is not None else "pooled")]
    s["texts"] += len(texts); s["pieces"] += sum(self.token_counts(texts))
    t = time.perf_counter()
    try:
        return forward(self, texts, tokens)
    finally:
        s["ms"] += 1000 * (time.perf_counter() - t)
M.MiniLMEmbedder._forward = timed_forward
answers, totals = [], collections.Counter()
prof = None
if profile:
    import cProfile
    prof = cProfile.Profile()
    prof.enable()
for q in qs[1:]:
    t = time.perf_counter()
    res = ask(q)
    totals["ask_ms"] += 1000 * (time.perf_counter() - t)
    for st in res.trace.get("stages", []):
        if isinstance(st, dict) and st.get("name") == "check":
            totals["check_ms"] += st.get("ms", 0.0)
        if isinstance(st, dict) and st.get("name"):    # the trace's own stage rows
            stats["stage ms"][st["name"]] += st.get("ms", 0.0) or 0.0
stats["minilm paragraphs read from the index"]["texts"] += getattr(REM.STORE, "stored", 0) - stored0
if prof is not None:
    import io, pstats
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(profile)
    print(out.getvalue(), file=sys.stderr)
    a = res.to_json()
    answers.append({"q": q, "answer": a["answer"], "citations": a["citations"], "abstained": a["abstained"],
                    "confidence": None if a["confidence"] is None else round(a["confidence"], 3)})
k = max(1, len(qs) - 1)
print(json.dumps({"per_question": {name: {x: v / k for x, v in s.items()} for name, s in stats.items()},
                  "ask_ms": totals["ask_ms"] / k, "check_ms": totals["check_ms"] / k, "answers": answers}))
"""


def run_child(tree: str, index: Path, qfile: Path, n: int, served: bool = False, profile: int = 0) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, tree, str(index), str(qfile), str(n),
                           "served" if served else "cli", str(profile)], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"child of {tree} failed: {done.stderr[-600:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["profile"] = done.stderr[done.stderr.find("   Ordered by"):] if profile else ""
    return out


def main() -> None:
    from question_speed import base_tree

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True, help="an index of the set's documents (read only)")
    ap.add_argument("--set", default="manuals", help="eval/<set>/questions.jsonl")
    ap.add_argument("--n", type=int, default=8, help="questions measured (after one that warms up)")
    ap.add_argument("--base-ref", default="1b14cfe")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tag", default="", help="results file: bench/results/question_cost-TAG-DATE.md")
    ap.add_argument("--base-index", type=Path, default=None,
                    help="the index the base tree reads (default --index): an index written by the base commit")
    ap.add_argument("--served", action="store_true",
                    help="ask as the server does: the index opened once, a cursor lent per question")
    ap.add_argument("--profile", type=int, default=0,
                    help="also profile the new tree's asks (a run of their own) and add its N costliest calls (cProfile)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/question_cost"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    trees = {"base": str(base_tree(args.base_ref, args.work)), "new": "-"}
    qfile = ROOT / "eval" / args.set / "questions.jsonl"
    load = [os.getloadavg()[0]]
    runs: dict = {name: [] for name in trees}
    index_of = {"base": args.base_index or args.index, "new": args.index}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(run_child(tree, index_of[name], qfile, args.n, args.served))
            load.append(os.getloadavg()[0])
    # the profile in a run of its own (cProfile slows what it watches: its run is not among the timed ones)
    profile = run_child("-", args.index, qfile, args.n, args.served, args.profile)["profile"] if args.profile else ""
    same = all(a == b for ra, rb in zip(runs["base"], runs["new"]) for a, b in zip(ra["answers"], rb["answers"]))
    rows = []
    for name, results in runs.items():
        per = results[0]["per_question"]
        row = {"tree": name, "ask_ms": statistics.median(r["ask_ms"] for r in results),
               "check_ms": statistics.median(r["check_ms"] for r in results)}
        for part in sorted(per):
            for key in per[part]:
                row[f"{part}: {key}"] = statistics.median(r["per_question"].get(part, {}).get(key, 0.0) for r in results)
        rows.append(row)
    keys = list(dict.fromkeys(k for row in rows for k in row if k != "tree"))
    where = f"{args.index}" + (f", base reads {args.base_index}" if args.base_index else "")
    lines = [f"# question_cost: this tree vs {args.base_ref}, {args.set} ({where}), {args.n} warm questions"
             f"{' asked as the server does (index opened once)' if args.served else ' (index opened per question)'}, "
             f"median of {args.rounds} rounds; machine load {min(load):.1f}-{max(load):.1f} on {os.cpu_count()} CPUs",
             "", "| per question | base | new |", "| --- | ---: | ---: |"]
    lines += [f"| {k} | " + " | ".join(f"{row.get(k, 0.0):.1f}" for row in rows) + " |" for k in keys]
    lines += ["", f"Same answers (text, citations, confidence to 3 decimals): {'yes' if same else '**no**'}"]
    if args.profile:
        lines += ["", f"## The new tree's {args.n} asks under cProfile (a run of their own; cumulative seconds)", "",
                  "```", profile.rstrip(), "```"]
    print("\n".join(lines))
    out = ROOT / "bench" / "results" / f"question_cost-{args.tag + '-' if args.tag else ''}{dt.date.today()}"
    out.with_suffix(".json").write_text(json.dumps({"index": str(args.index), "set": args.set, "n": args.n,
                                                    "base_ref": args.base_ref, "load": load, "rows": rows,
                                                    "same_answers": same, "runs": runs}, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md")


if __name__ == "__main__":
    main()
