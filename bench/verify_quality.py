"""How well does `provrag verify` judge claims? VitaminC and HaluEval, end to end.

End to end means the product path, not the judge alone: the corpus files are indexed with
`provrag index` (pipelines/index.py, default config), and every claim is checked by
provrag/verify/check.py exactly as `provrag verify --index … --answer … [--question …]` does it —
evidence retrieved from the whole index, one verdict per unit, RefChecker's rule. It runs in
one process (the CLI's per-call start-up would dominate), and the answer-level verdict is
check_verify.py's: supported when all of an answer's claims are, contradicted when one is.

- VitaminC: 3-way confusion matrix, 3-way accuracy, balanced accuracy of supported vs not.
- HaluEval QA: each case's right and hallucinated answer with `--question`; balanced accuracy
  (right answers judged supported, hallucinated ones not).
Target (issue #5): ≥ 0.75 and ≥ 0.80 offline. The judge was fitted on ../shared/eval/dev
(bench/fit_judge.py), so figures on dev are optimistic; the held-out split measures the product.

usage: .venv/bin/python bench/verify_quality.py [--split ../shared/eval/dev] [--vitaminc N_PER_LABEL]
                                                [--halueval N_CASES] [--seed S] [--no-write]
Writes bench/results/verify_quality-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LABELS = ("supported", "contradicted", "unsupported")


def load(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def answer_verdict(result) -> str:
    """The answer's verdict from a VerifyResult: supported when all claims are, contradicted when one is."""
    vs = [c.verdict for c in result.claims]
    if not vs:
        return "error"
    return "supported" if all(v == "supported" for v in vs) else ("contradicted" if "contradicted" in vs else "unsupported")


def bacc(pairs) -> float:
    pos = [p for g, p in pairs if g]
    neg = [not p for g, p in pairs if not g]
    return (sum(pos) / max(1, len(pos)) + sum(neg) / max(1, len(neg))) / 2


def build_index(files: list[Path], work: Path, cfg: dict) -> Path:
    from provrag.pipelines.index import run_index

    docs = work / "docs"
    docs.mkdir()
    for f in files:
        shutil.copy(f, docs / f.name)
    run_index(docs, work / "idx", cfg)
    return work / "idx"


def run_vitaminc(split: Path, n_per_label: int | None, rng: random.Random, cfg: dict) -> dict:
    from provrag.store.reader import open_index
    from provrag.verify.check import verify_answer

    claims = load(split / "vitaminc" / "claims.jsonl")
    sample = []
    for lab in LABELS:
        xs = [c for c in claims if c["label"] == lab]
        rng.shuffle(xs)
        sample += xs[:n_per_label] if n_per_label else xs
    work = Path(tempfile.mkdtemp(prefix="provrag-vq-"))
    try:
        t0 = time.perf_counter()
        idx = build_index(sorted({split / "vitaminc" / "corpus" / c["document"] for c in sample}), work, cfg)
        t_index = time.perf_counter() - t0
        reader = open_index(idx)
        out_by = {}
        for name, vcfg in variants(cfg).items():
            t0 = time.perf_counter()
            res, gold_page = [], 0
            for c in sample:
                out = verify_answer(reader, c["claim"], vcfg)
                res.append((c["label"], answer_verdict(out)))
                best = [e for cl in out.claims for e in cl.evidence[:1]]
                gold_page += bool(best) and (best[0].path or "") == c["document"]
            out_by[name] = (res, gold_page, time.perf_counter() - t0)
        reader.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found = {name: _vitaminc_figures(res, gold_page, t_index, t_verify) for name, (res, gold_page, t_verify) in out_by.items()}
    return (found.get("default") or next(iter(found.values()))) | {"variants": found}


def _vitaminc_figures(res, gold_page, t_index, t_verify) -> dict:
    matrix = {g: {p: sum(1 for a, b in res if a == g and b == p) for p in LABELS + ("error",)} for g in LABELS}
    return {
        "claims": len(res),
        "balanced_accuracy": round(bacc([(g == "supported", p == "supported") for g, p in res]), 4),
        "accuracy_3way": round(sum(g == p for g, p in res) / len(res), 4),
        "confusion_matrix": matrix,
        "best_evidence_in_gold_file": round(gold_page / len(res), 4),
        "seconds": {"index": round(t_index, 1), "verify": round(t_verify, 1),
                    "per_claim": round(t_verify / len(res), 3)},
    }


def run_halueval(split: Path, n_cases: int | None, rng: random.Random, cfg: dict) -> dict:
    from provrag.store.reader import open_index
    from provrag.verify.check import verify_answer

    cases = load(split / "halueval" / "cases.jsonl")
    rng.shuffle(cases)
    cases = cases[:n_cases] if n_cases else cases
    work = Path(tempfile.mkdtemp(prefix="provrag-vq-"))
    try:
        t0 = time.perf_counter()
        idx = build_index([split / "halueval" / "corpus" / c["document"] for c in cases], work, cfg)
        t_index = time.perf_counter() - t0
        reader = open_index(idx)
        out_by = {}
        for name, vcfg in variants(cfg).items():
            t0 = time.perf_counter()
            pairs, matrix = [], {"right": {}, "hallucinated": {}}
            for c in cases:
                for gold, key, ans in ((True, "right", c["right_answer"]), (False, "hallucinated", c["hallucinated_answer"])):
                    v = answer_verdict(verify_answer(reader, ans, vcfg, question=c["question"]))
                    pairs.append((gold, v == "supported"))
                    matrix[key][v] = matrix[key].get(v, 0) + 1
            out_by[name] = (pairs, matrix, time.perf_counter() - t0)
        reader.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found = {name: _halueval_figures(cases, pairs, matrix, t_index, t_verify)
             for name, (pairs, matrix, t_verify) in out_by.items()}
    return (found.get("default") or next(iter(found.values()))) | {"variants": found}


def _halueval_figures(cases, pairs, matrix, t_index, t_verify) -> dict:
    return {
        "cases": len(cases),
        "balanced_accuracy": round(bacc(pairs), 4),
        "right_judged_supported": round(sum(p for g, p in pairs if g) / len(cases), 4),
        "hallucinated_judged_not_supported": round(sum(not p for g, p in pairs if not g) / len(cases), 4),
        "verdicts": matrix,
        "seconds": {"index": round(t_index, 1), "verify": round(t_verify, 1),
                    "per_answer": round(t_verify / (2 * len(cases)), 3)},
    }


VARIANTS: dict[str, dict] = {"default": {}}


def variants(cfg) -> dict:
    """The configurations compared on one index (--variant NAME:section.key=value,…): each a copy
    of `cfg` with its overrides; "default" is `cfg` itself."""
    from provrag.config import load_config

    return {name: (cfg if not over else load_config(overrides=over)) for name, over in VARIANTS.items()}


def _variant(spec: str) -> tuple[str, dict]:
    name, _, sets = spec.partition(":")
    over: dict = {}
    for kv in filter(None, sets.split(",")):
        key, _, value = kv.partition("=")
        section, _, k = key.partition(".")
        try:
            over.setdefault(section, {})[k] = json.loads(value)
        except ValueError:  # a bare word: a string setting ("learned")
            over.setdefault(section, {})[k] = value
    return name, over


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", type=Path, default=ROOT.parent / "shared" / "eval" / "dev")
    ap.add_argument("--vitaminc", type=int, default=0, help="claims per label (0 = all)")
    ap.add_argument("--halueval", type=int, default=0, help="cases (0 = all)")
    ap.add_argument("--seed", type=int, default=51425)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME:section.key=value,… — also measure this configuration on the same index (repeatable)")
    args = ap.parse_args()
    if args.variant:
        VARIANTS.clear()
        VARIANTS.update(dict(_variant(v) for v in args.variant))

    from provrag.config import load_config

    cfg = load_config()
    rng = random.Random(args.seed)
    vc = run_vitaminc(args.split, args.vitaminc or None, rng, cfg)
    he = run_halueval(args.split, args.halueval or None, rng, cfg)
    result = {
        "date": dt.date.today().isoformat(),
        "split": str(args.split),
        "judge": "offline",
        "note": ("the offline judge's weights were fitted on eval/dev (bench/fit_judge.py): figures on dev are "
                 "optimistic; the held-out split measures the product"),
        "targets": {"vitaminc_balanced_accuracy": 0.75, "halueval_balanced_accuracy": 0.80},
        "vitaminc": vc,
        "halueval": he,
    }
    print(f"VitaminC {vc['claims']} claims: balanced accuracy {vc['balanced_accuracy']:.3f} "
          f"(3-way accuracy {vc['accuracy_3way']:.3f}); best evidence in the gold file {vc['best_evidence_in_gold_file']:.0%}")
    print("  confusion (rows gold, columns verdict):  " + "  ".join(f"{p[:5]:>5}" for p in LABELS))
    for g in LABELS:
        print(f"  {g:>39}:  " + "  ".join(f"{vc['confusion_matrix'][g][p]:>5}" for p in LABELS)
              + (f"  (errors {vc['confusion_matrix'][g]['error']})" if vc['confusion_matrix'][g]['error'] else ""))
    print(f"HaluEval {he['cases']} cases: balanced accuracy {he['balanced_accuracy']:.3f} "
          f"(right answers supported {he['right_judged_supported']:.0%}, "
          f"hallucinated not supported {he['hallucinated_judged_not_supported']:.0%})")
    print(f"  verdicts: {json.dumps(he['verdicts'])}")
    for name in vc.get("variants") or {}:
        v, h = vc["variants"][name], he["variants"][name]
        print(f"  variant {name}: VitaminC {v['balanced_accuracy']:.3f} (3-way {v['accuracy_3way']:.3f}, "
              f"{v['seconds']['per_claim']:.3f} s/claim); HaluEval {h['balanced_accuracy']:.3f}")
    if not args.no_write:
        out = ROOT / "bench" / "results" / f"verify_quality-{result['date']}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"written {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
