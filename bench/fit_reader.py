"""Fit [search.reader_weights]: how the offline answer combines the learned reader's readings with
word overlap to decide which sentence answers (answer/reading.py), from bench/reader_dev.py dumps.

    .venv/bin/python bench/fit_reader.py DUMP.jsonl [DUMP.jsonl …] [--threshold 0.5] [--folds 5]

A candidate is labelled 1 when it holds a gold answer string and stands on a gold page of an
answerable question; every candidate of an unanswerable question is 0. A logistic regression
(scikit-learn) over reading.FEATURES is fitted; figures are out of fold (folds by question, so
no question is scored by weights fitted on it), beside the reader's own probability alone
(bias 0, answer 1) — a refit is kept only where it measurably does better. The dumps come
from dev sets (check_qa folders built by bench/qa_sets.py: squad-half, manuals), so the
figures are optimistic; the held-out sets measure the product. Prints the weights as TOML.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from provrag.engines.offline.answer.reading import FEATURES, answer_probability, features  # noqa: E402


def load(paths: list[Path]) -> list[dict]:
    rows = []
    for p in paths:
        rows += [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
    for r in rows:
        top = max((c["lexical"] for c in r["candidates"]), default=0.0)
        for c in r["candidates"]:
            c["feat"] = features(c["prob"], c["passage_prob"], c["lexical"], top, c.get("coverage", 0.0),
                                 c.get("meaning", 0.0), r.get("lexical_confidence"))
            c["label"] = int(r["answerable"] and c["holds"] and c["on_gold"])
    return rows


def figures(rows: list[dict], weights: dict, threshold: float) -> dict:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]

    def lead(r):
        scored = [(answer_probability(c["feat"], weights), c) for c in r["candidates"]]
        if not scored:
            return None
        p, c = max(scored, key=lambda x: x[0])
        return c if p >= threshold else None

    la = [lead(r) for r in ans]
    return {"gold_first": sum(bool(c and c["on_gold"]) for c in la) / max(len(ans), 1),
            "holds": sum(bool(c and c["holds"]) for c in la) / max(len(ans), 1),
            "false_abstain": sum(c is None for c in la) / max(len(ans), 1),
            "abstained": sum(lead(r) is None for r in una) / max(len(una), 1),
            "answerable": len(ans), "unanswerable": len(una)}


def _gate(r: dict) -> float:
    from provrag.engines.offline.answer.reading import features as f

    return f(0.5, 0.5, 0.0, 0.0, 0.0, 0.0, r.get("lexical_confidence"))["gate"]


def fit(rows: list[dict]) -> dict:
    """Step 1: the candidates' linear score (label: holds the gold answer on a gold page).
    Step 2: the best candidate's score calibrated into P(the question is answerable)."""
    from sklearn.linear_model import LogisticRegression

    X = np.array([[c["feat"][k] for k in FEATURES] for r in rows for c in r["candidates"]])
    y = np.array([c["label"] for r in rows for c in r["candidates"]])
    m = LogisticRegression(C=1.0, max_iter=2000).fit(X, y)
    w = {"bias": float(m.intercept_[0]), **{k: float(v) for k, v in zip(FEATURES, m.coef_[0])}}
    best = np.array([[max((w["bias"] + sum(w[k] * c["feat"][k] for k in FEATURES) for c in r["candidates"]),
                          default=-10.0), _gate(r)] for r in rows])
    cal = LogisticRegression(C=1.0, max_iter=2000).fit(best, np.array([int(r["answerable"]) for r in rows]))
    w.update(offset=float(cal.intercept_[0]), scale=float(cal.coef_[0][0]), gate=float(cal.coef_[0][1]))
    return {k: round(v, 4) for k, v in w.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dumps", nargs="+", type=Path)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--folds", type=int, default=5)
    a = ap.parse_args()
    rows = load(a.dumps)
    own = {"bias": 0.0, "answer": 1.0, "passage": 0.0, "lexical": 0.0, "coverage": 0.0, "meaning": 0.0, "gate": 0.0,
           "offset": 0.0, "scale": 1.0}
    rng = np.random.default_rng(1729)
    fold = rng.integers(0, a.folds, len(rows))
    oof: list[dict] = []
    for k in range(a.folds):
        w = fit([r for r, f in zip(rows, fold) if f != k])
        test = [r for r, f in zip(rows, fold) if f == k]
        for r in test:
            r["weights"] = w
        oof += test
    # out of fold: each question scored with the weights fitted without it
    per = {"answerable": [], "unanswerable": []}
    for r in oof:
        f = figures([r], r["weights"], a.threshold)
        per["answerable" if r["answerable"] else "unanswerable"].append(f)
    ans, una = per["answerable"], per["unanswerable"]
    oof_fig = {"gold_first": np.mean([f["gold_first"] for f in ans]) if ans else 0.0,
               "holds": np.mean([f["holds"] for f in ans]) if ans else 0.0,
               "false_abstain": np.mean([f["false_abstain"] for f in ans]) if ans else 0.0,
               "abstained": np.mean([f["abstained"] for f in una]) if una else 0.0}
    print(f"{len(rows)} questions ({len(ans)} answerable, {len(una)} unanswerable), threshold {a.threshold}")
    for name, fig in (("reader alone", figures(rows, own, a.threshold)), ("refit, out of fold", oof_fig)):
        print(f"  {name:20} gold first {fig['gold_first']:.1%}  holds {fig['holds']:.1%}  false abstain "
              f"{fig['false_abstain']:.1%}  unanswerable abstained {fig['abstained']:.1%}")
    w = fit(rows)
    print("[search.reader_weights]\n" + "\n".join(f"{k} = {v}" for k, v in w.items()))


if __name__ == "__main__":
    main()
