"""MiniLM on onnxruntime, in float and with int8 matmuls, against the numpy reference pass: time,
memory and agreement, one run.

usage: python bench/minilm_runtime.py [--rounds 5] [--out STEM] [--base-ref REV]

What a question and an index embed, from the sample corpus (data/, indexed here into a temporary
folder): a question's candidate sentences with their token vectors (32), the paragraphs they
stand in (20, ≤ 900 characters), and whole text units as the index embeds them (all of the
sample's). Each runtime runs in a child process of its own (PROVRAG_MINILM_RUNTIME=numpy selects
the reference; int8 is MiniLMEmbedder(int8=True), what [search] meaning_int8 selects for the
offline answer's meaning pass), alternately, --rounds times; the figure is the median. Also each
child's peak RSS, the largest difference between the float runtimes' vectors, and how far the
int8 vectors stand from the float ones: each text's cosine to its float vector (lowest, mean), and
how much the cosines between texts move (mean, largest), which is what the meaning score reads.
`--base-ref REV`: the int8 runtime of that commit too (a detached worktree, its code run with this
venv's libraries), alternately with the others, and whether its int8 vectors equal this tree's bit
for bit (a speed change that must not move a vector).
Writes bench/results/minilm-runtime-<date>.json and .md.
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
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, re, sys, time
if len(sys.argv) > 4:   # another commit's tree: its code, never this one's
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, sys.argv[4])
import numpy as np
import pyarrow.parquet as pq
from provrag.embeddings.minilm import MiniLMEmbedder
units = pq.read_table(sys.argv[1]).column("text").to_pylist()
sentences = [s for u in units for s in re.split(r"(?<=[.!?])\s+", u) if len(s.split()) > 3][:32]
paragraphs = [p[:900] for u in units for p in u.split("\n\n") if len(p.split()) > 20][:20]
e = MiniLMEmbedder(int8=sys.argv[3] == "int8")
runtime = "numpy" if e._bert.onnx is None else "int8" if e._bert.int8_encoder() is not None and e.int8 else "onnxruntime"
out = {"runtime": runtime, "ms": {}, "texts": {}}
vecs = []
for name, texts, tokens in (("sentences", sentences, True), ("paragraphs", paragraphs, False), ("units", units, False)):
    t = time.perf_counter()
    v = e.embed_tokens(texts)[0] if tokens else e.embed(texts)
    out["ms"][name] = round((time.perf_counter() - t) * 1000, 1)
    out["texts"][name] = len(texts)
    vecs.append(v)
np.save(sys.argv[2], np.concatenate(vecs))
out["peak_rss_mb"] = round(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024)
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=f"minilm-runtime-{dt.date.today().isoformat()}")
    ap.add_argument("--base-ref", help="also the int8 runtime of this commit (question_speed.py's base worktree)")
    args = ap.parse_args()
    import numpy as np

    work = Path(tempfile.mkdtemp(prefix="minilm_runtime-"))
    provrag = Path(sys.executable).parent / "provrag"
    subprocess.run([str(provrag), "index", str(ROOT / "data"), "--out", str(work / "idx")], check=True,
                   capture_output=True)
    units = work / "idx" / "text_units.parquet"
    runs: dict[str, list[dict]] = {"numpy": [], "onnxruntime": [], "int8": []}
    base = None
    if args.base_ref:
        sys.path.insert(0, str(ROOT / "bench"))
        from question_speed import base_tree

        base = base_tree(args.base_ref, work)
        runs["int8 base"] = []
    diff = 0.0
    for r in range(args.rounds):
        got = {}
        for runtime in runs:
            env = dict(os.environ, PROVRAG_MINILM_RUNTIME="numpy" if runtime == "numpy" else "")
            vec = work / f"{runtime}.npy"
            argv = [sys.executable, "-c", CHILD, str(units), str(vec), runtime.split()[0]]
            p = subprocess.run(argv + ([str(base)] if runtime == "int8 base" else []), env=env,
                               capture_output=True, text=True, check=True)
            row = json.loads(p.stdout.strip().splitlines()[-1])
            assert row["runtime"] == runtime.split()[0], row
            runs[runtime].append(row)
            got[runtime] = np.load(vec)
        diff = max(diff, float(np.abs(got["numpy"] - got["onnxruntime"]).max()))
        print(f"round {r + 1}/{args.rounds}", {k: v[-1]["ms"] for k, v in runs.items()}, file=sys.stderr)
    exact, quick = got["onnxruntime"], got["int8"]      # every round gives the same vectors
    own = (exact * quick).sum(1)
    moved = np.abs(exact @ exact.T - quick @ quick.T)[np.triu_indices(len(exact), 1)]
    agree = {"own_cosine_min": float(own.min()), "own_cosine_mean": float(own.mean()),
             "pair_cosine_moved_mean": float(moved.mean()), "pair_cosine_moved_max": float(moved.max())}
    med = {rt: {k: statistics.median(x["ms"][k] for x in rows) for k in rows[0]["ms"]} for rt, rows in runs.items()}
    rss = {rt: statistics.median(x["peak_rss_mb"] for x in rows) for rt, rows in runs.items()}
    texts = runs["numpy"][0]["texts"]
    load = os.getloadavg()[0]
    lines = [f"# MiniLM: onnxruntime, float and int8, vs the numpy reference pass ({dt.date.today().isoformat()})", "",
             f"`bench/minilm_runtime.py --rounds {args.rounds}`: each runtime in its own child process, alternately; "
             f"median ms. Machine: {platform.platform()}, {os.cpu_count()} CPUs, load {load:.1f} after the run.", "",
             "| texts embedded | numpy | onnxruntime | ratio | onnxruntime int8 | int8 ÷ float |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for k in med["numpy"]:
        lines.append(f"| {k} ({texts[k]}) | {med['numpy'][k]:.0f} ms | {med['onnxruntime'][k]:.0f} ms | "
                     f"{med['onnxruntime'][k] / med['numpy'][k]:.2f}× | {med['int8'][k]:.0f} ms | "
                     f"{med['int8'][k] / med['onnxruntime'][k]:.2f}× |")
    lines += [f"| child peak RSS | {rss['numpy']:.0f} MB | {rss['onnxruntime']:.0f} MB | | {rss['int8']:.0f} MB | |", "",
              f"Largest difference between the float runtimes' vectors: {diff:.1e} (unit-length vectors).", "",
              f"int8 against float, over the {len(exact)} texts: each text's cosine to its float vector "
              f"{agree['own_cosine_min']:.4f} at lowest, {agree['own_cosine_mean']:.4f} on average; the cosine "
              f"between two texts moves by {agree['pair_cosine_moved_mean']:.4f} on average, "
              f"{agree['pair_cosine_moved_max']:.4f} at most."]
    if base is not None:
        same = bool(np.array_equal(got["int8"], got["int8 base"]))
        lines += ["", f"int8 of {args.base_ref} (its own tree, the same libraries) against this tree's, median ms:", "",
                  f"| texts embedded | int8, {args.base_ref} | int8, this tree | ratio |", "| --- | ---: | ---: | ---: |"]
        lines += [f"| {k} ({texts[k]}) | {med['int8 base'][k]:.0f} ms | {med['int8'][k]:.0f} ms | "
                  f"{med['int8'][k] / med['int8 base'][k]:.2f}× |" for k in med["int8"]]
        lines += [f"| child peak RSS | {rss['int8 base']:.0f} MB | {rss['int8']:.0f} MB | |", "",
                  f"The two trees' int8 vectors are {'equal, bit for bit' if same else 'NOT equal'}."]
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], capture_output=True)
    (ROOT / "bench" / "results" / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    (ROOT / "bench" / "results" / f"{args.out}.json").write_text(json.dumps(
        {"median_ms": med, "peak_rss_mb": rss, "texts": texts, "max_abs_diff": diff, "int8_agreement": agree,
         "runs": runs, "load": load}, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
