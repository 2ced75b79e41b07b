"""Fit ask's abstention model (provrag/query/answerable.py) and choose its threshold, by measurement.

    .venv/bin/python bench/fit_abstain.py [--squad DIR] [--out FILE]

SQuAD-as-PDF (default: ../shared/eval/dev/squad) is split into two halves of its articles
(sorted file names, alternately). For each half in turn, that half is indexed; its own
questions are answerable, the other half's questions are not (nothing indexed is about those
articles). For every question, the passages ask's answerer reads are retrieved (its context,
best first) and the two coverage features of each (query/answerable.py) are kept with the label.

ask is as confident as its best passage, so the model is fitted on the passage it would pick:
a logistic regression (scikit-learn) on each question's picked passage, re-picked with the fitted
weights until the pick is stable. It is fitted on fold A and measured on fold B and the reverse
(so the printed rates are out of fold), then refitted on both folds, for the best of the first 3,
5 and 10 passages: those coefficients, for answerable.PASSAGES, go into answerable.py's
WEIGHTS / LEXICAL_ONLY_WEIGHTS. `--features FILE` refits from a previous run's `--out`. For
thresholds 0.3 … 0.6 it prints, out of fold, the share of unanswerable questions that abstain
and of answerable ones that falsely abstain. The figures are for dev; the holdout split measures the product.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_SQUAD = ROOT.parent / "shared" / "eval" / "dev" / "squad"
MAX_PASSAGES = 10  # the most passages ask might read to decide (each costs a MiniLM pass at ask time)


def halves(squad: Path) -> tuple[list[str], list[str]]:
    names = sorted(p.name for p in (squad / "corpus").glob("*.pdf"))
    return names[0::2], names[1::2]


def features(squad: Path, indexed: list[str], work: Path, cfg) -> list[dict]:
    """Index `indexed`; for every question of the split, the coverage features of each passage
    ask's answerer reads (its retrieved context, best first), with the label."""
    from provrag.pipelines.index import run_index
    from provrag.query.answerable import passage_features
    from provrag.query.retrieve import retrieve_units
    from provrag.store.reader import open_index

    docs = work / "docs"
    docs.mkdir(parents=True)
    for n in indexed:
        shutil.copy(squad / "corpus" / n, docs / n)
    run_index(docs, work / "idx", cfg)
    rows = []
    lines = (squad / "questions.jsonl").read_text().splitlines()
    k = MAX_PASSAGES
    with open_index(work / "idx") as reader:
        for i, line in enumerate(lines):
            if i % 50 == 0:
                print(f"  {work.name}: {i}/{len(lines)} questions", file=sys.stderr, flush=True)
            q = json.loads(line)
            ret = retrieve_units(reader, q["question"], cfg, k=k, pool=cfg.search.candidate_pool)
            bm25 = ret.channels.get("bm25") or {}
            _, lex, sem = passage_features(q["question"], [c["text"] for c in ret.candidates], ret.idf,
                                           int(bm25.get("n_units") or 0), bm25.get("spelling") or {})
            rows.append({"id": q["id"], "answerable": q["document"] in indexed,
                         "lexical": [round(c, 4) for c, _ in lex], "semantic": [round(x, 4) for x in sem or []]})
    return rows


def chosen(rows: list[dict], limit: int, weights: tuple[float, ...] | None, cols: list[str]) -> list[dict]:
    """Per question, the features of the passage the model would pick among the first `limit`
    (the one it is most confident about; with no model yet, the largest sum of the features).
    No passage: zeros (nothing is covered)."""
    out = []
    for r in rows:
        n = min(limit, len(r["lexical"]))
        cands = [[r[c][i] for c in cols] for i in range(n)] or [[0.0] * len(cols)]
        if weights is None:
            best = max(cands, key=sum)
        else:
            best = max(cands, key=lambda f: weights[0] + sum(w * x for w, x in zip(weights[1:], f)))
        out.append(dict(zip(cols, best), answerable=r["answerable"]))
    return out


def fit(rows: list[dict], cols: list[str], limit: int):
    """Logistic regression on the picked passage's features, re-picking with the fitted model
    until the pick is stable (a few rounds): ask takes the passage it is most confident about."""
    from sklearn.linear_model import LogisticRegression

    weights = None
    for _ in range(4):
        picked = chosen(rows, limit, weights, cols)
        m = LogisticRegression(C=10.0, max_iter=1000).fit([[p[c] for c in cols] for p in picked],
                                                         [int(p["answerable"]) for p in picked])
        weights = (float(m.intercept_[0]), *[float(c) for c in m.coef_[0]])
    return weights


def rates(weights, rows: list[dict], cols: list[str], limit: int, threshold: float) -> tuple[float, float]:
    import math

    conf = [1 / (1 + math.exp(-(weights[0] + sum(w * p[c] for w, c in zip(weights[1:], cols)))))
            for p in chosen(rows, limit, weights, cols)]
    ans = [c for c, r in zip(conf, rows) if r["answerable"]]
    una = [c for c, r in zip(conf, rows) if not r["answerable"]]
    return (sum(c < threshold for c in una) / max(len(una), 1), sum(c < threshold for c in ans) / max(len(ans), 1))


def main() -> dict:
    from provrag.config import load_config

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    ap.add_argument("--out", type=Path, help="write the features and the fit as JSON here")
    ap.add_argument("--features", type=Path, help="fit from features a previous run wrote with --out")
    a = ap.parse_args()
    cfg = load_config()
    if a.features:
        rows = json.loads(a.features.read_text())["rows"]
        fold_a = [r for r in rows if r["fold"] == "a"]
        fold_b = [r for r in rows if r["fold"] == "b"]
    else:
        a_docs, b_docs = halves(a.squad)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            fold_a = [r | {"fold": "a"} for r in features(a.squad, a_docs, Path(tmp) / "a", cfg)]
            fold_b = [r | {"fold": "b"} for r in features(a.squad, b_docs, Path(tmp) / "b", cfg)]
        print(f"features of {len(fold_a) + len(fold_b)} questions in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if a.out:
            a.out.write_text(json.dumps({"rows": fold_a + fold_b}))
    result = {}
    for name, cols in (("WEIGHTS", ["lexical", "semantic"]), ("LEXICAL_ONLY_WEIGHTS", ["lexical"])):
        for limit in (3, 5, 10):
            print(f"\n{name} ({' + '.join(cols)}), the best of the first {limit} passages")
            print("threshold  unanswerable abstain (out of fold)  answerable falsely abstain")
            w_a, w_b = fit(fold_a, cols, limit), fit(fold_b, cols, limit)
            for th in (0.3, 0.4, 0.5, 0.6):
                u1, f1 = rates(w_a, fold_b, cols, limit, th)
                u2, f2 = rates(w_b, fold_a, cols, limit, th)
                print(f"  {th:.1f}      {(u1 + u2) / 2:6.1%}                              {(f1 + f2) / 2:6.1%}")
            w = tuple(round(x, 3) for x in fit(fold_a + fold_b, cols, limit))
            print(f"  fitted on both folds: {name} = {w}")
            result[f"{name}@{limit}"] = w
    if a.out:
        a.out.write_text(json.dumps({"fit": result, "rows": fold_a + fold_b}))
    return result


if __name__ == "__main__":
    main()
