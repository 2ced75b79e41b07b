"""Fit the offline judge's weights and thresholds on ../shared/eval/dev — and on nothing else.

Why a fit at all: the judge's features (provrag/engines/offline/judge/) are fixed by hand, but how much a
missing name weighs against a covered number is an empirical question. Two logistic
regressions (scikit-learn, balanced classes) answer it on the dev split:
- support: supported vs not, on VitaminC claims (each against its page file, as one text unit)
  and HaluEval answers (question + answer → claim, against the knowledge file);
- contradiction: contradicted vs unsupported, on VitaminC's not-supported claims.
The support threshold is the one that maximises the mean of the two datasets' balanced
accuracies on 5-fold cross-validated scores. The result goes to config.toml [verify]
(`--write`), where a user reads and can change it. The held-out split is never read here:
figures printed are cross-validated on dev, and still optimistic for dev.

usage: .venv/bin/python bench/fit_judge.py [--dev ../shared/eval/dev] [--write]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from provrag.config import load_config  # noqa: E402
from provrag.engines.offline.judge.decide import CONTRA_FEATURES, SUPPORT_FEATURES as FEATURES, VETOES  # noqa: E402
from provrag.engines.offline.judge.features import features as text_features  # noqa: E402
from provrag.engines.offline.judge.head import head_readings  # noqa: E402
from provrag.verify.claims import split_claims  # noqa: E402


def load(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def features(claim: str, text: str, window: int, focus: str | None = None) -> dict:
    """The judge's features of a claim against one text, the claim head's reading among them
    (judge/head.py), as verify computes them."""
    from provrag.learned import reader

    return {**text_features(claim, text, window, focus), **head_readings(claim, [text], window, reader.get())[0]}


def _neighbours(queries: list[str], docs: list[str], k: int) -> list[list[int]]:
    """The k most similar documents of each query (TF-IDF cosine): the other pages retrieval
    brings in beside the gold one."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(docs + queries)
    sims = (vec.transform(queries) @ vec.transform(docs).T).toarray()
    return [list(np.argsort(-row)[:k + 1]) for row in sims]


def dev_features(dev: Path, window: int, distractors: int = 2):
    """Feature rows (label, features). Each claim against its gold file (the gold label), and
    against the `distractors` most similar other files of its corpus (label "unsupported"):
    end to end, retrieval puts such pages beside the gold one, and an answer word that merely
    occurs in an unrelated page must not count as support."""
    vc, he = [], []
    claims = load(dev / "vitaminc" / "claims.jsonl")
    files = sorted((dev / "vitaminc" / "corpus").glob("*.md"))
    texts = [f.read_text() for f in files]
    near = _neighbours([c["claim"] for c in claims], texts, distractors)
    for c, nb in zip(claims, near):
        text = (dev / "vitaminc" / "corpus" / c["document"]).read_text()
        vc.append((c["label"], features(c["claim"], text, window), c["id"], c["label"]))
        for j in [j for j in nb if files[j].name != c["document"]][:distractors]:
            vc.append(("unsupported", features(c["claim"], texts[j], window), c["id"], c["label"]))
    cases = load(dev / "halueval" / "cases.jsonl")
    files = sorted((dev / "halueval" / "corpus").glob("*.md"))
    texts = [f.read_text() for f in files]
    rows = []
    for c in cases:
        for label, ans in (("supported", c["right_answer"]), ("unsupported", c["hallucinated_answer"])):
            cl = split_claims(ans, c["question"])
            if len(cl) == 1:  # a label belongs to the whole answer: fit on one-claim answers
                rows.append((c, label, cl[0]))
    near = _neighbours([f"{cl.text} {cl.focus or ''}" for _, _, cl in rows], texts, distractors)
    for (c, label, cl), nb in zip(rows, near):
        text = (dev / "halueval" / "corpus" / c["document"]).read_text()
        gid = f"{c['id']}/{label}"
        he.append((label, features(cl.text, text, window, cl.focus), gid, label))
        for j in [j for j in nb if files[j].name != c["document"]][:distractors]:
            he.append(("unsupported", features(cl.text, texts[j], window, cl.focus), gid, label))
    return vc, he


def fit(vc, he, C: float = 1.0):
    """vc, he: rows (unit label, features, claim id, claim's gold label)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score as bacc
    from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_val_predict

    from provrag.engines.offline.judge.decide import decide

    rows = vc + he
    X = np.array([[f[n] for n in FEATURES] for _, f, _, _ in rows])
    y = np.array([lab == "supported" for lab, _, _, _ in rows])
    groups = np.array([g for _, _, g, _ in rows])
    model = LogisticRegression(C=C, class_weight="balanced", max_iter=5000)
    # folds by claim: a claim's gold and distractor rows are never split between train and test
    cv = cross_val_predict(model, X, y, cv=GroupKFold(5), groups=groups, method="predict_proba")[:, 1]

    def claim_bacc(part, probs, t):
        """RefChecker's rule per claim: supported when any of its units scores ≥ t."""
        best: dict = {}
        for (_, f, g, gold), p in zip(part, probs):
            ok = p >= t and not any(f[n] for n in VETOES)
            best[g] = (best.get(g, (False, gold))[0] or ok, gold)
        pairs = [(gold == "supported", ok) for ok, gold in best.values()]
        return bacc([g for g, _ in pairs], [p for _, p in pairs])

    n_vc = len(vc)
    best = max((0.5 * (claim_bacc(vc, cv[:n_vc], t) + claim_bacc(he, cv[n_vc:], t)), t)
               for t in np.arange(0.30, 0.81, 0.02))
    thr = float(round(best[1], 2))
    model.fit(X, y)
    report = {"cv_vitaminc": claim_bacc(vc, cv[:n_vc], thr), "cv_halueval": claim_bacc(he, cv[n_vc:], thr)}

    seen: set = set()
    gold_vc = []                                   # each claim against its own page (its first row)
    for lab, f, g, _ in vc:
        if g not in seen:
            seen.add(g)
            gold_vc.append((lab, f))
    ns = [(lab, f) for lab, f in gold_vc if lab != "supported"]
    Xc = np.array([[f[n] for n in CONTRA_FEATURES] for _, f in ns])
    yc = np.array([lab == "contradicted" for lab, _ in ns])
    cmodel = LogisticRegression(C=C, class_weight="balanced", max_iter=5000)
    ccv = cross_val_predict(cmodel, Xc, yc, cv=StratifiedKFold(5, shuffle=True, random_state=0))
    report["cv_contradicted_vs_unsupported"] = bacc(yc, ccv)
    cmodel.fit(Xc, yc)
    min_cov = float(round(np.quantile([f["coverage"] for lab, f in gold_vc if lab == "contradicted"], 0.1), 2))
    values = {
        "support_weights": {n: round(float(w), 4) for n, w in zip(FEATURES, model.coef_[0])},
        "support_bias": round(float(model.intercept_[0]), 4),
        "support_threshold": thr,
        "contradict_weights": {n: round(float(w), 4) for n, w in zip(CONTRA_FEATURES, cmodel.coef_[0])},
        "contradict_bias": round(float(cmodel.intercept_[0]), 4),
        "contradict_min_coverage": min_cov,
    }

    def acc3(t):
        """3-way accuracy on VitaminC, units combined by RefChecker's rule as verify does."""
        v = dataclasses.replace(load_config().verify, **{**values, "contradict_threshold": float(t)})
        labels: dict = {}
        for _, f, g, gold in vc:
            labels.setdefault(g, (gold, []))[1].append(decide(f, v)[0])
        ok = 0
        for gold, ls in labels.values():
            got = "supported" if "supported" in ls else ("contradicted" if "contradicted" in ls else "unsupported")
            ok += got == gold
        return ok / len(labels)
    ct = max((acc3(t), -abs(t - 0.5), t) for t in np.arange(0.3, 0.81, 0.05))[2]
    values["contradict_threshold"] = float(round(ct, 2))
    report["vitaminc_3way_accuracy_fitted"] = acc3(ct)
    return values, report


def _set_keys(text: str, table: str, values: dict) -> str:
    """`text` (config.toml) with the values of existing keys of [table] replaced, comments kept."""
    start = text.index(f"[{table}]")
    end = text.find("\n[", start + 1)
    end = len(text) if end == -1 else end
    section = text[start:end]
    for key, value in values.items():
        v = json.dumps(value) if not isinstance(value, float) else repr(value)
        pat = re.compile(rf"^({re.escape(key)}\s*=\s*)([^#\n]*?)(\s*#.*)?$", re.M)
        if not pat.search(section):
            raise SystemExit(f"config.toml [{table}] has no key {key}: add it first")
        section = pat.sub(lambda m: (f"{key} = {v}".ljust(32) + " " + m.group(3).strip()) if m.group(3)
                          else f"{key} = {v}", section, count=1)
    return text[:start] + section + text[end:]


def write_config(values: dict, path: Path = ROOT / "config.toml") -> None:
    """Store the fitted values in config.toml: scalars in [verify], each feature's weight by
    name in [verify.support_weights] and [verify.contradict_weights]."""
    text = path.read_text()
    text = _set_keys(text, "verify", {k: v for k, v in values.items() if not isinstance(v, dict)})
    for table in ("support_weights", "contradict_weights"):
        text = _set_keys(text, f"verify.{table}", values[table])
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", type=Path, default=ROOT.parent / "shared" / "eval" / "dev")
    ap.add_argument("--write", action="store_true", help="store the fitted values in config.toml [verify]")
    args = ap.parse_args()
    if "holdout" in str(args.dev):
        raise SystemExit("fit on dev only: the held-out split measures the product")
    window = load_config().verify.max_window
    vc, he = dev_features(args.dev, window)
    values, report = fit(vc, he)
    print(json.dumps({"features": FEATURES, "contradiction_features": CONTRA_FEATURES, **values,
                      "cross_validated_on_dev": {k: round(v, 3) for k, v in report.items()}}, indent=1))
    if args.write:
        write_config(values)
        print("written to config.toml [verify]", file=sys.stderr)


if __name__ == "__main__":
    main()
