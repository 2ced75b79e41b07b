"""What ask's wider routes change, by how close the first reading came: the evidence behind
[search] retry_from (query/escalate.py far_from_answering), and its check.

    .venv/bin/python bench/retry_from.py run SETDIR INDEX OUT.jsonl [--retry-from X]
    .venv/bin/python bench/retry_from.py table OUT.jsonl [OUT.jsonl …]
    .venv/bin/python bench/retry_from.py compare BEFORE.jsonl AFTER.jsonl

`run`: every question of a check_qa folder (bench/qa_sets.py: questions.jsonl, then
unanswerable.jsonl) asked in process over INDEX (the offline engine, default settings but
--retry-from, default 0: every wider route tried), one JSON line each — the answer, sources,
confidence, whether the gold page comes first (check_qa.py's rule), and each attempt's route,
outcome, confidence and milliseconds (from the ask trace, which is not stored).

`table` (on `run --retry-from 0` dumps): of the questions whose first attempt over the whole index
— any route but `named`, the documents a question names, after which the whole index is still
read — abstained, how many a wider route then answered (rightly: an answerable question, the
gold page first; or wrongly), by the first attempt's confidence, and the time the wider routes
took. `compare`: two runs of the same questions (e.g. --retry-from 0 and the default),
interleaved by the caller on a quiet machine: answers, sources and confidences that differ, and
the time per question, all and abstentions.

The figures come from dev sets, so a threshold chosen on them is checked on held-out questions
(the lead's check_qa.py run on eval/heldout), never fitted to them.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.retrieval_recall import on_gold  # noqa: E402  (check_qa.py's gold-page rule)

THRESHOLDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4)


def run(setdir: str, index: str, out: str, retry_from: float) -> None:
    import provrag.pipelines.ask as ask

    kept: dict = {}

    def keep(trace: dict, index_path) -> str:   # the trace is read here, not stored
        kept["trace"] = trace
        return ""

    stored, ask.save_trace = ask.save_trace, keep
    try:
        _ask_all(ask, setdir, index, out, retry_from, kept)
    finally:
        ask.save_trace = stored


def _ask_all(ask, setdir: str, index: str, out: str, retry_from: float, kept: dict) -> None:
    from dataclasses import replace

    from provrag.config import load_config

    cfg = load_config(None)
    cfg = replace(cfg, search=replace(cfg.search, retry_from=retry_from))
    folder = Path(setdir)
    with open(out, "w") as f:
        for kind, name in (("answerable", "questions.jsonl"), ("unanswerable", "unanswerable.jsonl")):
            path = folder / name
            for item in ([json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []):
                t0 = time.perf_counter()
                res = ask.run_ask(item["question"], index, cfg, save=True).to_json()
                ms = round(1000 * (time.perf_counter() - t0))
                sources = res.get("sources") or []
                row = {"set": folder.name, "id": item["id"], "kind": kind, "abstained": res["abstained"],
                       "confidence": res["confidence"], "answer": res["answer"], "ms": ms,
                       "sources": [(s.get("document"), s.get("page_start")) for s in sources[:5]],
                       "attempts": [{"route": a.get("route"), "abstained": a.get("abstained"),
                                     "confidence": a.get("confidence"), "ms": a.get("ms")}
                                    for a in kept["trace"].get("attempts") or [] if "skipped" not in a]}
                if kind == "answerable":
                    row["gold_first"] = bool(sources) and not res["abstained"] and on_gold(
                        sources[0], item["document"], item["pages"])
                f.write(json.dumps(row) + "\n")


def _rows(paths: list[str]) -> list[dict]:
    return [json.loads(x) for p in paths for x in open(p) if x.strip()]


def table(paths: list[str]) -> None:
    firsts = []
    for r in _rows(paths):
        whole = [a for a in r["attempts"] if a["route"] != "named"]
        if not whole or not whole[0]["abstained"]:
            continue
        after = r["attempts"][r["attempts"].index(whole[0]) + 1:]
        answered = any(not a["abstained"] for a in after)
        firsts.append({"confidence": whole[0]["confidence"] or 0.0, "answered": answered,
                       "right": answered and r["kind"] == "answerable" and r.get("gold_first", False),
                       "ms_after": sum(a["ms"] or 0 for a in after),
                       "ms": sum(a["ms"] or 0 for a in r["attempts"])})
    rows = _rows(paths)
    print(f"{len(rows)} questions; the first attempt over the whole index abstained on {len(firsts)}\n")
    print("| first attempt's confidence | questions | a wider route answered: rightly | wrongly | "
          "time of the wider routes / of all attempts |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for th in THRESHOLDS:
        low = [x for x in firsts if x["confidence"] < th]
        right = sum(x["right"] for x in low)
        wrong = sum(x["answered"] and not x["right"] for x in low)
        print(f"| below {th:g} | {len(low)} | {right} | {wrong} | {sum(x['ms_after'] for x in low) / 1000:.0f} s / "
              f"{sum(x['ms'] for x in low) / 1000:.0f} s |")
    print("\nanswered by a wider route (first confidence, rightly):",
          sorted((round(x["confidence"], 3), x["right"]) for x in firsts if x["answered"]))


def compare(before: str, after: str) -> None:
    a, b = _rows([before]), _rows([after])
    assert [x["id"] for x in a] == [x["id"] for x in b], "not the same questions in the same order"
    pairs = list(zip(a, b))
    ab = [(x, y) for x, y in pairs if x["abstained"]]

    def differ(field: str) -> int:
        return sum(x[field] != y[field] for x, y in pairs)

    print(f"{len(pairs)} questions: answers differ {differ('answer')}, abstained differs {differ('abstained')}, "
          f"sources differ {differ('sources')}, confidences differ {differ('confidence')}")
    for label, sel in (("all", pairs), ("abstentions", ab)):
        ta, tb = sum(x["ms"] for x, _ in sel), sum(y["ms"] for _, y in sel)
        na, nb = sum(len(x["attempts"]) for x, _ in sel), sum(len(y["attempts"]) for _, y in sel)
        print(f"{label} ({len(sel)}): {ta / 1000:.1f} s -> {tb / 1000:.1f} s ({tb / max(ta, 1):.2f}x), "
              f"attempts {na} -> {nb}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("setdir")
    r.add_argument("index")
    r.add_argument("out")
    r.add_argument("--retry-from", type=float, default=0.0)
    t = sub.add_parser("table")
    t.add_argument("dumps", nargs="+")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args()
    if args.cmd == "run":
        run(args.setdir, args.index, args.out, args.retry_from)
    elif args.cmd == "table":
        table(args.dumps)
    else:
        compare(args.before, args.after)
