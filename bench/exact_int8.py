"""The reader with its weights as shipped (uint8, exact integer matmuls on every CPU) against the
same weights as int8 (how they shipped until 2026-12-01): agreement and time, one run.

usage: python bench/exact_int8.py [--rounds 3] [--out STEM]

Why: onnxruntime multiplies int8 weights by uint8 activations with a kernel that, on a CPU
without VNNI, adds pairs of products in 16 bits and saturates (train/unsigned_int8.py). On such a
CPU the two forms disagree; on a CPU with VNNI they agree bit for bit. This prints which this CPU
is, how far the logits move (largest, mean), how many of the pairs' answer probabilities fall on
the other side of 0.5, and the time of each form's passes (alternately, --rounds times, median).
The pairs: eight questions over the first 120 sentences of Lincoln's 1863 message (../shared),
each sentence read in its paragraph, as ask reads them.
Writes bench/results/exact-int8-<date>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SPEECH = ROOT.parent / "shared" / "corpora" / "small" / "sotu-1863-lincoln.txt"
QUESTIONS = ["What did the President say about the foreign relations of the country?",
             "How much did the receipts of the Treasury amount to?", "What happened with Japan?",
             "Who was pardoned by the proclamation?", "What is said about the Pacific railroad?",
             "How many vessels were captured?", "What did Congress do about the currency?",
             "What did the President say about the Emancipation Proclamation?"]


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def signed_twin(weights: Path) -> bytes:
    """The shipped graph with its uint8 weights back as the int8 numbers they store (- 128)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(weights))
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "MatMulInteger":
            for name in (node.input[1], node.input[3]):
                values = numpy_helper.to_array(inits[name])
                if values.dtype == np.uint8:
                    inits[name].CopyFrom(numpy_helper.from_array((values.astype(np.int16) - 128).astype(np.int8), name))
    return model.SerializeToString()


def pairs() -> list[tuple[str, str, str]]:
    from provrag.text.sentences import split_sentences

    paragraphs = [" ".join(p.split()) for p in SPEECH.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    out: list[tuple[str, str]] = []
    for para in paragraphs:
        out += [(para[a:b], para) for a, b in split_sentences(para)]
        if len(out) >= 120:
            break
    return [(q, s, p) for q in QUESTIONS for s, p in out[:120]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=f"bench/results/exact-int8-{dt.date.today()}")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    import onnxruntime as ort

    from provrag.learned import reader

    if not SPEECH.is_file():
        print(f"bench/exact_int8.py: {SPEECH} not found (../shared beside the project)", file=sys.stderr)
        return 2
    r = reader.get()
    shipped = r.session
    twin = ort.InferenceSession(signed_twin(reader.folder() / r.manifest["weights"]), reader.session_options(),
                                providers=["CPUExecutionProvider"])
    work = pairs()
    by_q: dict[str, list] = {}
    for q, s, p in work:
        by_q.setdefault(q, []).append((s, p))

    def read_all(session) -> tuple[np.ndarray, float]:
        r.session = session
        start = time.perf_counter()
        probs = [r.answer_probs(q, [s for s, _ in sp], [p for _, p in sp]) for q, sp in by_q.items()]
        return np.concatenate(probs), time.perf_counter() - start

    times: dict[str, list[float]] = {"uint8": [], "int8": []}
    for _ in range(args.rounds):
        p_u8, t = read_all(shipped)
        times["uint8"].append(t)
        p_s8, t = read_all(twin)
        times["int8"].append(t)
    r.session = shipped
    logit = lambda p: np.log(np.clip(p, 1e-9, 1 - 1e-9) / np.clip(1 - p, 1e-9, 1))   # noqa: E731
    moved = np.abs(logit(p_u8) - logit(p_s8))
    flags = cpu_flags()
    vnni = sorted(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})
    result = {
        "date": str(dt.date.today()), "pairs": len(work), "rounds": args.rounds,
        "cpu_vnni": vnni, "cpu_avx2": "avx2" in flags, "onnxruntime": ort.__version__,
        "reader_sha256": r.manifest["sha256"],
        "logit_moved_max": round(float(moved.max()), 4), "logit_moved_mean": round(float(moved.mean()), 4),
        "prob_moved_max": round(float(np.abs(p_u8 - p_s8).max()), 4),
        "crossed_0.5": int(((p_u8 >= 0.5) != (p_s8 >= 0.5)).sum()),
        "seconds_uint8": round(statistics.median(times["uint8"]), 3),
        "seconds_int8": round(statistics.median(times["int8"]), 3),
    }
    result["time_ratio_uint8_over_int8"] = round(result["seconds_uint8"] / result["seconds_int8"], 3)
    out = ROOT / args.out if not Path(args.out).is_absolute() else Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# The reader's weights as uint8 (shipped) against int8, {result['date']}", "",
             f"CPU: VNNI {', '.join(vnni) or 'none'}, AVX2 {'yes' if result['cpu_avx2'] else 'no'}; "
             f"onnxruntime {result['onnxruntime']}; {result['pairs']} (question, sentence) pairs, "
             f"{args.rounds} rounds, median.", "",
             "| figure | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in result.items() if k not in ("date", "cpu_vnni", "cpu_avx2", "onnxruntime")]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
