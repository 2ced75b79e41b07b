"""Fit [search.reader_weights]: how the offline answer combines the learned reader's readings with
word overlap to decide which sentence answers (answer/reading.py), from bench/reader_dev.py dumps.

    .venv/bin/python bench/fit_reader.py FIT.jsonl [FIT.jsonl …] [--check CHECK.jsonl …]
        [--threshold 0.5] [--folds 5] [--calibrate-only] [--C 1.0]

Dumps from `reader_dev.py --ask` hold every reading a live ask made (one row per attempt,
local → basic → wide → section), with the features exactly as read() weighed them; older
dumps (basic search replayed) have their features recomputed. A candidate is labelled 1 when it
holds a gold answer string and stands on a gold page of an answerable question; every candidate
of an unanswerable question is 0. A logistic regression (scikit-learn) over reading.FEATURES
ranks the candidates; a second one calibrates a reading's best score (and the gate) into
P(the index answers). The figures replay ask's decision: the first attempt whose best candidate
reaches the threshold answers with it (an attempt the dump lacks, because the dumped run had
answered before it, counts as an abstention: for weights that abstain more than the dumped
run's, false abstentions and abstained unanswerables are both over-counted; an end-to-end run,
ask per question, measures them). On the fitted dumps they are out of fold (folds by question);
--check dumps are never fitted on, beside today's [search.reader_weights] and the reader alone.
A refit is kept only where it measurably does better on the check sets. The dumps come from
dev sets (check_qa folders, bench/qa_sets.py), so every figure here is optimistic; the
held-out sets measure the product. Prints the weights fitted on all FIT dumps as TOML.
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


def gate_of(r: dict) -> float | None:
    """The gate ask gives the reader (a dump's `gate`); older dumps: their lexical confidence."""
    return r["gate"] if "gate" in r else r.get("lexical_confidence")


def load(paths: list[Path]) -> list[dict]:
    rows = []
    for p in paths:
        rows += [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
    for r in rows:
        top = max((c["lexical"] for c in r["candidates"]), default=0.0)
        for c in r["candidates"]:
            if "features" in c:   # read by a live ask (reader_dev.ReadCapture): exactly what read() weighed
                c["feat"] = c["features"]
                c["label"] = int(r["answerable"] and c["holds"] and c["on_gold"])
                continue
            c["feat"] = features(c["prob"], c["passage_prob"], c["lexical"], top, c.get("coverage", 0.0),
                                 c.get("meaning", 0.0), gate_of(r))
            c["label"] = int(r["answerable"] and c["holds"] and c["on_gold"])
    return rows


def lead_of(r: dict, weights: dict, threshold: float):
    """The candidate read() would lead with (the highest combined probability; ties: the passage
    read first), or None (below the threshold: this attempt abstains)."""
    scored = [(answer_probability(c["feat"], weights), -k, c) for k, c in enumerate(r["candidates"])]
    if not scored:
        return None
    p, _, c = max(scored, key=lambda x: x[:2])
    return c if p >= threshold else None


def questions(rows: list[dict]) -> list[list[dict]]:
    """Rows grouped by question (a live ask's dump has one row per attempt), attempts in order."""
    by: dict = {}
    for r in rows:
        by.setdefault((r.get("set"), r["id"], r["answerable"]), []).append(r)
    return [sorted(v, key=lambda r: r.get("attempt", 0)) for v in by.values()]


def ask_lead(attempts: list[dict], weights: dict, threshold: float):
    """As ask decides (query/escalate.py): the first attempt that answers gives the lead. An
    attempt the dump lacks (the dumped run answered before it) counts as an abstention.
    weights None: each row's own (`weights`, set out of fold)."""
    for r in attempts:
        c = lead_of(r, weights if weights is not None else r["weights"], threshold)   # None: out of fold
        if c is not None:
            return c
    return None


def figures(rows: list[dict], weights: dict, threshold: float) -> dict:
    qs = questions(rows)
    ans = [q for q in qs if q[0]["answerable"]]
    una = [q for q in qs if not q[0]["answerable"]]
    la = [ask_lead(q, weights, threshold) for q in ans]
    return {"gold_first": sum(bool(c and c["on_gold"]) for c in la) / max(len(ans), 1),
            "holds": sum(bool(c and c["holds"]) for c in la) / max(len(ans), 1),
            "false_abstain": sum(c is None for c in la) / max(len(ans), 1),
            "abstained": sum(ask_lead(q, weights, threshold) is None for q in una) / max(len(una), 1),
            "answerable": len(ans), "unanswerable": len(una)}


def _gate(r: dict) -> float:
    from provrag.engines.offline.answer.reading import features as f

    if r["candidates"] and "features" in r["candidates"][0]:
        return r["candidates"][0]["features"]["gate"]
    return f(0.5, 0.5, 0.0, 0.0, 0.0, 0.0, gate_of(r))["gate"]


def fit(rows: list[dict], C: float = 1.0, step1: dict | None = None, names: tuple = FEATURES) -> dict:
    """Step 1: the candidates' linear score (label: holds the gold answer on a gold page); given
    (`step1`: bias and FEATURES' weights), only step 2 is refitted. `names`: the features fitted
    (the others weigh 0).
    Step 2: the best candidate's score calibrated into P(the question is answerable)."""
    from sklearn.linear_model import LogisticRegression

    if step1 is None:
        X = np.array([[c["feat"][k] for k in names] for r in rows for c in r["candidates"]])
        y = np.array([c["label"] for r in rows for c in r["candidates"]])
        m = LogisticRegression(C=C, max_iter=2000).fit(X, y)
        fitted = dict(zip(names, m.coef_[0]))
        w = {"bias": float(m.intercept_[0]), **{k: float(fitted.get(k, 0.0)) for k in FEATURES}}
    else:
        w = {k: float(step1[k]) for k in ("bias",) + FEATURES}
    best = np.array([[max((w["bias"] + sum(w[k] * c["feat"][k] for k in FEATURES) for c in r["candidates"]),
                          default=-10.0), _gate(r)] for r in rows])
    cal = LogisticRegression(C=C, max_iter=2000).fit(best, np.array([int(r["answerable"]) for r in rows]))
    w.update(offset=float(cal.intercept_[0]), scale=float(cal.coef_[0][0]), gate=float(cal.coef_[0][1]))
    return {k: round(v, 4) for k, v in w.items()}


def show(name: str, fig: dict) -> None:
    print(f"  {name:28} gold first {fig['gold_first']:.1%}  holds {fig['holds']:.1%}  false abstain "
          f"{fig['false_abstain']:.1%}  unanswerable abstained {fig['abstained']:.1%}"
          f"  ({fig['answerable']}+{fig['unanswerable']})")


def main() -> None:
    from provrag.config import load_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dumps", nargs="+", type=Path, help="the dumps fitted on")
    ap.add_argument("--check", nargs="*", type=Path, default=[], help="dumps only measured (never fitted on)")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--calibrate-only", action="store_true",
                    help="keep today's step 1 (which sentence leads); refit only its calibration (when to abstain)")
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of both regressions")
    ap.add_argument("--without", nargs="*", default=[], choices=FEATURES, metavar="FEATURE",
                    help=f"features the refit leaves out (weight 0), to measure what one earns: {', '.join(FEATURES)}")
    a = ap.parse_args()
    names = tuple(k for k in FEATURES if k not in a.without)
    rows = load(a.dumps)
    own = {"bias": 0.0, "answer": 1.0, "passage": 0.0, "lexical": 0.0, "coverage": 0.0, "meaning": 0.0, "gate": 0.0,
           "offset": 0.0, "scale": 1.0}
    now = dict(load_config().search.reader_weights)
    step1 = now if a.calibrate_only else None
    # folds by question: every attempt of a question is scored by weights fitted without it
    qs = questions(rows)
    fold = np.random.default_rng(1729).integers(0, a.folds, len(qs))
    for k in range(a.folds):
        w = fit([r for q, f in zip(qs, fold) if f != k for r in q], a.C, step1, names)
        for q, f in zip(qs, fold):
            if f == k:
                for r in q:
                    r["weights"] = w
    w = fit(rows, a.C, step1, names)
    sets = sorted({r.get("set") for r in rows}, key=str)
    print(f"fitted on {', '.join(map(str, sets))}: {len(qs)} questions, {len(rows)} readings; threshold {a.threshold}")
    for s in sets:
        part = [r for r in rows if r.get("set") == s]
        print(f" {s}")
        show("today's weights", figures(part, now, a.threshold))
        show("reader alone", figures(part, own, a.threshold))
        show("refit, out of fold", figures(part, None, a.threshold))
    check = load(a.check) if a.check else []
    for s in sorted({r.get("set") for r in check}, key=str):
        part = [r for r in check if r.get("set") == s]
        print(f" {s} (check: not fitted on)")
        show("today's weights", figures(part, now, a.threshold))
        show("reader alone", figures(part, own, a.threshold))
        show("refit", figures(part, w, a.threshold))
    print("[search.reader_weights]\n" + "\n".join(f"{k} = {v}" for k, v in w.items()))


if __name__ == "__main__":
    main()
