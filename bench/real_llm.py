"""A real model beside the offline engine, in one run: what the `openai` engine costs and gives.

    .venv/bin/python bench/real_llm.py [--config FILE] [--squad N] [--squad-docs N] [--vitaminc N]
                                       [--seed S] [--no-write]

Without --config it starts llama.cpp's server from .venv-llm (`make llm`) with SmolLM2-135M-Instruct
as chat and embedding model (tests/real_llm_server.py); with --config it uses the [llm] and
[embeddings] of that TOML file, so the same harness measures any server a user points it at
(Ollama, vLLM, OpenAI). For each engine, on the same inputs:

- index of ../shared/corpora/small's sotu-1863-lincoln.txt + debian-developers-reference-scope.html:
  seconds per stage, model calls and tokens, and per model stage the fallback rate (items the
  offline engine did after the model failed them; "-" where the engine does not count them);
- SQuAD (dev split, --squad questions of --squad-docs articles): gold page first, gold page in the
  first 5 sources, answer holds a gold string — bench/ask_quality.py's scoring, `make eval`'s figure;
- VitaminC (dev split, --vitaminc claims per label): balanced accuracy of supported vs not and
  3-way accuracy — bench/verify_quality.py's rule, `make eval`'s figure.

A 135M model is expected to do worse than the offline engine; the point is that the figures exist,
are honestly labelled (model, server, sample size) and come from the product's own code paths.
Writes bench/results/real_llm-<date>.json and .md.
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

from bench.ask_quality import score  # noqa: E402
from bench.verify_quality import LABELS, answer_verdict, bacc, load  # noqa: E402

SHARED = ROOT.parent / "shared"
SMALL_DOCS = ("sotu-1863-lincoln.txt", "debian-developers-reference-scope.html")
MODEL_STAGES = ("extract", "summarize", "report", "map", "reduce", "answer", "judge", "embed")


def usage_figures(usage: dict) -> dict:
    """Calls, tokens and, per model stage, the share of items that fell back to the offline engine."""
    rates = {}
    for name, st in usage.get("by_stage", {}).items():
        if name in MODEL_STAGES and "fallback" in st:
            items = st.get("by_model", 0) + st["fallback"] + st.get("failed", 0)
            rates[name] = round(st["fallback"] / items, 3) if items else None
    return {"calls": usage.get("calls", 0), "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0), "failed": usage.get("failed", 0),
            "fallback_rate": rates, "errors": usage.get("errors", [])[:5]}


def add_usage(total: dict, usage: dict) -> None:
    for k in ("calls", "input_tokens", "output_tokens", "failed"):
        total[k] = total.get(k, 0) + usage.get(k, 0)
    for name, st in usage.get("by_stage", {}).items():
        into = total.setdefault("by_stage", {}).setdefault(name, {})
        for k, v in st.items():
            into[k] = into.get(k, 0) + v
    total.setdefault("errors", []).extend(usage.get("errors", [])[:5])


def index_docs(files: list[Path], work: Path, cfg) -> tuple[Path, dict]:
    from provrag.pipelines.index import run_index

    docs = work / "docs"
    docs.mkdir(parents=True)
    for f in files:
        shutil.copy(f, docs / f.name)
    t0 = time.perf_counter()
    run_index(docs, work / "idx", cfg)
    seconds = round(time.perf_counter() - t0, 1)
    manifest = json.loads((work / "idx" / "manifest.json").read_text())
    return work / "idx", {"seconds": seconds, "stage_seconds": manifest.get("timings", {}),
                          "counts": manifest.get("counts", {}), **usage_figures(manifest.get("llm", {}))}


def part_small(cfg, work: Path) -> dict:
    _, fig = index_docs([SHARED / "corpora" / "small" / n for n in SMALL_DOCS], work, cfg)
    return fig


def squad_sample(split: Path, n_docs: int, n_questions: int, rng: random.Random) -> list[dict]:
    qs = load(split / "squad" / "questions.jsonl")
    docs = sorted({q["document"] for q in qs})
    rng.shuffle(docs)
    chosen = [q for q in qs if q["document"] in set(docs[:n_docs])]
    rng.shuffle(chosen)
    return chosen[:n_questions]


def part_squad(cfg, sample: list[dict], split: Path, work: Path) -> dict:
    from provrag.pipelines.ask import run_ask

    idx, fig = index_docs(sorted({split / "squad" / "corpus" / q["document"] for q in sample}), work, cfg)
    hits, usage, abstained = [0, 0, 0], {}, 0
    t0 = time.perf_counter()
    for q in sample:
        out = run_ask(q["question"], idx, cfg, save=False)
        hits = [h + bool(x) for h, x in zip(hits, score(q, out))]
        abstained += bool(out.abstained)
        add_usage(usage, (out.trace or {}).get("usage", {}))
    n = max(1, len(sample))
    return {"questions": len(sample), "top1_page": round(hits[0] / n, 3), "top5_page": round(hits[1] / n, 3),
            "answer_contains": round(hits[2] / n, 3), "abstained": abstained,
            "seconds_per_question": round((time.perf_counter() - t0) / n, 1), "index": fig,
            "ask": usage_figures(usage)}


def part_vitaminc(cfg, split: Path, per_label: int, rng: random.Random, work: Path) -> dict:
    from provrag.engines import get_engine
    from provrag.store.reader import open_index
    from provrag.verify.check import verify_answer

    claims = load(split / "vitaminc" / "claims.jsonl")
    sample = []
    for label in LABELS:
        of_label = [c for c in claims if c["label"] == label]
        rng.shuffle(of_label)
        sample += of_label[:per_label]
    idx, fig = index_docs(sorted({split / "vitaminc" / "corpus" / c["document"] for c in sample}), work, cfg)
    engine = get_engine(cfg)  # one engine for every claim: its usage is the whole verify bill
    reader = open_index(idx)
    t0 = time.perf_counter()
    try:
        res = [(c["label"], answer_verdict(verify_answer(reader, c["claim"], cfg, engine=engine))) for c in sample]
    finally:
        reader.close()
    n = max(1, len(res))
    return {"claims": len(res), "balanced_accuracy": round(bacc([(g == "supported", p == "supported") for g, p in res]), 3),
            "accuracy_3way": round(sum(g == p for g, p in res) / n, 3),
            "seconds_per_claim": round((time.perf_counter() - t0) / n, 1), "index": fig,
            "verify": usage_figures(engine.usage.to_dict())}


def run_engine(cfg, args, work: Path) -> dict:
    out = {}
    for name, part in (("small", lambda w: part_small(cfg, w)),
                       ("squad", lambda w: part_squad(cfg, squad_sample(args.split, args.squad_docs, args.squad,
                                                                        random.Random(args.seed)), args.split, w)),
                       ("vitaminc", lambda w: part_vitaminc(cfg, args.split, args.vitaminc, random.Random(args.seed), w))):
        t0 = time.perf_counter()
        out[name] = part(work / name)
        out[name]["wall_seconds"] = round(time.perf_counter() - t0, 1)
        print(f"  {name}: {json.dumps({k: v for k, v in out[name].items() if not isinstance(v, dict)})}",
              file=sys.stderr, flush=True)
    return out


def table(results: dict) -> str:
    rows = [("index small: seconds", lambda r: r["small"]["seconds"]),
            ("index small: calls", lambda r: r["small"]["calls"]),
            ("index small: tokens in/out", lambda r: f"{r['small']['input_tokens']}/{r['small']['output_tokens']}"),
            ("index small: entities", lambda r: r["small"]["counts"].get("entities")),
            ("index small: reports", lambda r: r["small"]["counts"].get("community_reports")),
            ("index small: fell back", lambda r: ", ".join(f"{k} {v:.0%}" for k, v in r["small"]["fallback_rate"].items()
                                                           if v is not None) or "-"),
            ("squad: gold page first", lambda r: r["squad"]["top1_page"]),
            ("squad: gold page in top 5", lambda r: r["squad"]["top5_page"]),
            ("squad: answer holds gold", lambda r: r["squad"]["answer_contains"]),
            ("squad: s / question", lambda r: r["squad"]["seconds_per_question"]),
            ("squad: ask calls", lambda r: r["squad"]["ask"]["calls"]),
            ("vitaminc: balanced accuracy", lambda r: r["vitaminc"]["balanced_accuracy"]),
            ("vitaminc: 3-way accuracy", lambda r: r["vitaminc"]["accuracy_3way"]),
            ("vitaminc: s / claim", lambda r: r["vitaminc"]["seconds_per_claim"]),
            ("vitaminc: verify calls", lambda r: r["vitaminc"]["verify"]["calls"])]
    names = list(results)
    lines = ["| figure | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, get in rows:
        cells = []
        for n in names:
            try:
                cells.append(str(get(results[n])))
            except (KeyError, TypeError):
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, help="TOML file naming the server ([llm], [embeddings]); default: "
                                                "llama.cpp's server with SmolLM2-135M from .venv-llm")
    ap.add_argument("--split", type=Path, default=SHARED / "eval" / "dev")
    ap.add_argument("--squad", type=int, default=5, help="SQuAD questions")
    ap.add_argument("--squad-docs", type=int, default=1, help="SQuAD articles they come from (all are indexed)")
    ap.add_argument("--vitaminc", type=int, default=1, help="VitaminC claims per label")
    ap.add_argument("--seed", type=int, default=51425)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from provrag.config import load_config
    from tests.real_llm_server import LlamaCppServer

    work = Path(tempfile.mkdtemp(prefix="provrag-real-llm-"))
    server = None
    try:
        if args.config:
            model_cfg, server_stats = load_config(args.config), None
        else:
            server = LlamaCppServer(work / "server").start()
            model_cfg = load_config(None, server.provrag_overrides())
        label = f"{model_cfg.llm.engine}:{model_cfg.llm.model}"
        results, started = {}, time.perf_counter()
        for name, cfg in (("offline", load_config()), (label, model_cfg)):
            print(f"{name} …", file=sys.stderr, flush=True)
            results[name] = run_engine(cfg, args, work / name.replace(":", "-").replace("/", "-"))
        server_stats = server.stats() if server else None
    finally:
        if server:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    report = {"date": dt.datetime.now().isoformat(timespec="seconds"), "seconds": round(time.perf_counter() - started, 1),
              "model": label, "base_url": model_cfg.llm.base_url or "OpenAI", "embeddings": model_cfg.embeddings.engine,
              "sample": {"squad_questions": args.squad, "squad_docs": args.squad_docs,
                         "vitaminc_per_label": args.vitaminc, "seed": args.seed, "split": str(args.split)},
              "server": server_stats, "results": results}
    md = table(results)
    if server_stats:
        md += (f"\n\nServer: {server_stats['requests']} requests, {server_stats['completion_tokens']} tokens generated "
               f"at {server_stats['tokens_per_second']} tokens/s.")
    print(md)
    if not args.no_write:
        out = ROOT / "bench" / "results" / f"real_llm-{dt.date.today().isoformat()}"
        out.with_suffix(".json").write_text(json.dumps(report, indent=2))
        out.with_suffix(".md").write_text(f"# {label} beside the offline engine ({report['date']})\n\n{md}\n")
        print(f"wrote {out}.json and .md", file=sys.stderr)


if __name__ == "__main__":
    main()
