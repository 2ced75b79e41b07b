"""Same decisions before and after a speed change: ask every question of an eval set in one
process per tree, then compare the two runs field by field.

usage: python bench/same_answers.py run TREE|- SET INDEX OUT.jsonl [--settle]
       python bench/same_answers.py compare BASE.jsonl NEW.jsonl

`run`: `provrag.pipelines.ask.run_ask` in-process (save=False, the default config, offline engine)
over eval/SET/questions.jsonl then unanswerable.jsonl; TREE is a checkout of another commit (run
with this venv's libraries, its code first on sys.path) or `-` for this one. `--settle`: the
allocators of a one-question CLI process first (`provrag ask` does it: serve/memory.py). One JSON
line per question: answer text, citations, sources (document, page), confidence to 3 decimals,
abstained / abstained_by, raw answer, removed sentences, route, attempts, method, unresolved, ms.
`compare`: the rows that differ in anything but ms.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ("abstained_by", "raw_answer", "removed_sentences", "route", "attempts", "method", "unresolved")


def run(tree: str, name: str, index: str, out: str, settle: bool) -> None:
    if tree != "-":
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, tree)
    if settle:
        from provrag.serve.memory import settle_one_question

        settle_one_question()
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask

    cfg = load_config(None)
    questions = [json.loads(x)["question"] for f in ("questions.jsonl", "unanswerable.jsonl")
                 for x in (ROOT / "eval" / name / f).read_text().splitlines() if x.strip()]
    with open(out, "w") as f:
        for q in questions:
            t = time.perf_counter()
            r = run_ask(q, index, cfg, save=False).to_json()
            conf = r.get("confidence")
            row = {"set": name, "q": q, "answer": r.get("answer"), "citations": r.get("citations"),
                   "confidence": None if conf is None else round(conf, 3), "abstained": r.get("abstained"),
                   "sources": [(s.get("document"), s.get("page")) for s in r.get("sources") or []],
                   **{k: r.get(k) for k in FIELDS}, "ms": round(1000 * (time.perf_counter() - t))}
            f.write(json.dumps(row, sort_keys=True) + "\n")


def compare(base: str, new: str) -> int:
    a = [json.loads(x) for x in open(base)]
    b = [json.loads(x) for x in open(new)]
    differ = [x["q"] for x, y in zip(a, b) if {k: v for k, v in x.items() if k != "ms"} != {k: v for k, v in y.items()
                                                                                           if k != "ms"}]
    for q in differ:
        print("DIFFERS:", q)
    print(f"{len(a)} vs {len(b)} rows, {len(differ)} differ")
    return 1 if differ or len(a) != len(b) else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(*sys.argv[2:6], settle="--settle" in sys.argv)
    elif sys.argv[1:2] == ["compare"]:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
