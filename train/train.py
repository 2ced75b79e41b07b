"""train: fine-tune all-MiniLM-L6-v2 into a three-headed cross-encoder, export it to ONNX (int8).

    python train/train.py [--answer N --relevance N --claim N --epochs E ...]

Step 2 of 3 (prepare → train → evaluate). Reads $PROVRAG_TRAIN_CACHE/data/{train,test}.jsonl (train/prepare.py),
writes $PROVRAG_TRAIN_CACHE/run/: reader-fp32.onnx, reader.onnx (int8 weights stored as uint8), train.json
(settings, data counts, held-out scores per epoch, seconds).

One encoder, one head per question the product asks, all computed in one pass:
  answer     1 logit  does this sentence state the answer to the question?
  relevance  1 logit  does this passage answer the question (for ranking)?
  claim      3 logits SUPPORTED / CONTRADICTED / UNSUPPORTED
The heads read the mean of the last layer over the pair's word pieces (the pooling all-MiniLM
was trained with, so the heads start from a representation that already means something).
Each batch mixes tasks; each example's loss comes from its own head only.

The encoder is written out here (a dozen lines of BERT) rather than taken from `transformers`:
one fewer heavy dependency, and the module names match the safetensors file, so the official
weights load by name. Fixed seed, fixed thread count, deterministic algorithms: the same data
gives the same weights on the same machine.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from provrag.embeddings.minilm import model_dir  # noqa: E402
from provrag.learned.encode import PairEncoder  # noqa: E402
import unsigned_int8  # noqa: E402  (train/, the script's own folder)
from machine import native_bf16  # noqa: E402

CACHE = Path(os.environ.get("PROVRAG_TRAIN_CACHE", Path.home() / ".cache" / "provrag-train"))
HEADS = {"answer": 1, "relevance": 1, "claim": 3}
CLAIM_LABELS = ["SUPPORTED", "CONTRADICTED", "UNSUPPORTED"]
NOT_SUPPORTED = -1  # a claim label: contradicted or unsupported, not said which (HaluEval)
LISTWISE = ("answer", "relevance")  # heads whose rows come as one question's candidates


# ---- model -----------------------------------------------------------------------------------

class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.attn_out, self.attn_norm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in, self.ffn_out, self.ffn_norm = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden), nn.LayerNorm(hidden, eps=1e-12)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        n, t, h = x.shape
        d = h // self.heads

        def split(y):
            return y.view(n, t, self.heads, d).transpose(1, 2)

        scores = split(self.query(x)) @ split(self.key(x)).transpose(-1, -2) / math.sqrt(d) + bias
        ctx = (self.drop(scores.softmax(-1)) @ split(self.value(x))).transpose(1, 2).reshape(n, t, h)
        x = self.attn_norm(x + self.drop(self.attn_out(ctx)))
        return self.ffn_norm(x + self.drop(self.ffn_out(nn.functional.gelu(self.ffn_in(x)))))


class Reader(nn.Module):
    def __init__(self, vocab=30522, hidden=384, layers=6, heads=12, ffn=1536, positions=512, dropout=0.1):
        super().__init__()
        self.word, self.position, self.token_type = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden), nn.Embedding(2, hidden)
        self.embed_norm, self.drop = nn.LayerNorm(hidden, eps=1e-12), nn.Dropout(dropout)
        self.layers = nn.ModuleList(Layer(hidden, heads, ffn, dropout) for _ in range(layers))
        self.heads = nn.ModuleDict({name: nn.Linear(hidden, k) for name, k in HEADS.items()})

    def forward(self, input_ids, attention_mask, token_type_ids):
        t = input_ids.shape[1]
        x = self.word(input_ids) + self.position(torch.arange(t, device=input_ids.device))[None] + self.token_type(token_type_ids)
        x = self.drop(self.embed_norm(x))
        mask = attention_mask.to(x.dtype)
        bias = (1.0 - mask)[:, None, None, :] * -1e4
        for layer in self.layers:
            x = layer(x, bias)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        pooled = self.drop(pooled)
        return (self.heads["answer"](pooled)[:, 0], self.heads["relevance"](pooled)[:, 0], self.heads["claim"](pooled))

    def load_minilm(self, folder: Path) -> None:
        """The official all-MiniLM-L6-v2 weights, by name (heads stay freshly initialised)."""
        from safetensors.torch import load_file

        w = load_file(str(folder / "model.safetensors"))
        own = {"word.weight": "embeddings.word_embeddings.weight", "position.weight": "embeddings.position_embeddings.weight",
               "token_type.weight": "embeddings.token_type_embeddings.weight",
               "embed_norm.weight": "embeddings.LayerNorm.weight", "embed_norm.bias": "embeddings.LayerNorm.bias"}
        parts = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
                 "attn_out": "attention.output.dense", "attn_norm": "attention.output.LayerNorm",
                 "ffn_in": "intermediate.dense", "ffn_out": "output.dense", "ffn_norm": "output.LayerNorm"}
        for i in range(len(self.layers)):
            for mine, theirs in parts.items():
                for p in ("weight", "bias"):
                    own[f"layers.{i}.{mine}.{p}"] = f"encoder.layer.{i}.{theirs}.{p}"
        state = {k: w[v] for k, v in own.items()}
        missing = self.load_state_dict(state, strict=False).missing_keys
        assert all(k.startswith("heads.") for k in missing), missing


# ---- data ------------------------------------------------------------------------------------

def load_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def sample(rows: list[dict], sizes: dict[str, int], rng: random.Random, mix: dict[str, float] | None = None,
           answer_mix: dict[str, float] | None = None) -> list[dict]:
    """About sizes[task] rows of each task, seeded; answer and relevance rows by whole questions (the list
    loss compares a question's candidates). mix[source] = a source's share of its task's rows (sources not
    named fill the rest by pool size); answer_mix the same for the answer task, by whole questions."""
    mix, answer_mix = mix or {}, answer_mix or {}
    out = []
    for task, n in sizes.items():
        pool = [r for r in rows if r["task"] == task]
        if task in LISTWISE:
            by_q: dict[str, list[dict]] = {}
            for r in pool:
                by_q.setdefault(r["qid"], []).append(r)
            keys = sorted(by_q)
            rng.shuffle(keys)
            shares, picked = (answer_mix if task == "answer" else {}), []
            for src, share in shares.items():  # a named source's questions first, up to its share of n
                mine: list[dict] = []
                for k in (k for k in keys if by_q[k][0]["source"] == src and len(mine) < share * n):
                    mine += by_q[k]
                picked += mine
            for k in (k for k in keys if by_q[k][0]["source"] not in shares):
                if len(picked) >= n:
                    break
                picked += by_q[k]
            out += picked
            continue
        rng.shuffle(pool)
        named = {src: [r for r in pool if r["source"] == src] for src in mix}
        named = {src: part for src, part in named.items() if part}
        picked = [r for src, part in named.items() for r in part[: int(round(mix[src] * n))]]
        rest = [r for r in pool if r["source"] not in named]
        picked += rest[: max(0, n - len(picked))]
        rng.shuffle(picked)
        out += picked
    return out


def encode(encoder: PairEncoder, rows: list[dict], lengths: dict[str, int], rng: random.Random,
           context_rate: float) -> list[tuple]:
    """(ids, types, task, label, question id) per row; an answer row carries its paragraph context at context_rate."""
    out = []
    for task in HEADS:
        part = [r for r in rows if r["task"] == task]
        if not part:
            continue
        contexts = [r.get("c", "") if rng.random() < context_rate else "" for r in part] if task == "answer" else None
        for r, (ids, types) in zip(part, encoder.rows([r["a"] for r in part], [r["b"] for r in part], lengths[task], contexts)):
            out.append((ids, types, task, r["label"], r.get("qid")))
    return out


def batches(items: list[tuple], size: int, rng: random.Random, shuffle: bool) -> list[list[tuple]]:
    """Batches of similar length (little padding): sorted within chunks of 50 batches, then shuffled.
    A question's answer (or relevance) candidates stay together in one batch, for the list loss."""
    units: dict[tuple, list[tuple]] = {}
    for i, x in enumerate(items):
        key = (x[2], x[4]) if x[2] in LISTWISE and x[4] else ("one", i)
        units.setdefault(key, []).append(x)
    groups = list(units.values())
    if shuffle:
        rng.shuffle(groups)
    out = []
    chunk = max(1, size * 50 // 4)
    for i in range(0, len(groups), chunk):
        part = sorted(groups[i:i + chunk], key=lambda g: max(len(x[0]) for x in g))
        batch: list[tuple] = []
        for g in part:
            if batch and len(batch) + len(g) > size:
                out.append(batch)
                batch = []
            batch += g
        if batch:
            out.append(batch)
    if shuffle:
        rng.shuffle(out)
    return out


def tensors(encoder: PairEncoder, batch: list[tuple]) -> dict[str, torch.Tensor]:
    arrays = encoder.batch([(x[0], x[1]) for x in batch])
    return {k: torch.from_numpy(v) for k, v in arrays.items()}


def losses(out, batch: list[tuple], listwise: float) -> torch.Tensor:
    """Per pair: binary cross-entropy (answer, relevance; what calibration starts from) or the claim's
    3-way one; plus, per question, `listwise` × the cross-entropy of picking its answer sentence
    (passage) among its candidates: the comparison that ranking and abstention hinge on."""
    answer, relevance, claim = out
    total, parts = 0.0, 0
    for task, logits in (("answer", answer), ("relevance", relevance)):
        idx = [i for i, b in enumerate(batch) if b[2] == task]
        if idx:
            y = torch.tensor([float(batch[i][3]) for i in idx])
            total = total + nn.functional.binary_cross_entropy_with_logits(logits[idx], y, reduction="sum")
            parts += len(idx)
        if listwise and idx:
            by_q: dict[str, list[int]] = {}
            for i in idx:
                by_q.setdefault(batch[i][4], []).append(i)
            for members in by_q.values():
                pos = [j for j, i in enumerate(members) if batch[i][3] == 1]
                if len(pos) == 1 and len(members) > 1:
                    total = total - listwise * logits[members].log_softmax(0)[pos[0]]
    idx = [i for i, b in enumerate(batch) if b[2] == "claim"]
    if idx:
        z = claim[idx]
        y = torch.tensor([batch[i][3] for i in idx])
        logp = z.log_softmax(-1)
        known = y >= 0
        nll = torch.where(known, -logp.gather(1, y.clamp(min=0)[:, None])[:, 0],
                          -torch.logsumexp(logp[:, 1:], dim=1))  # "not supported": contradicted or unsupported
        total = total + nll.sum()
        parts += len(idx)
    return total / max(parts, 1)


# ---- held-out scores ---------------------------------------------------------------------------

@torch.no_grad()
def predict(model: Reader, encoder: PairEncoder, items: list[tuple], size: int = 64, bf16: bool = True) -> list[tuple]:
    """(task, label, score) per item: answer/relevance logit, claim logits."""
    model.eval()
    out = []
    for batch in batches(items, size, random.Random(0), shuffle=False):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            a, r, c = (o.float() for o in model(**tensors(encoder, batch)))
        for i, (_, _, task, label, _) in enumerate(batch):
            score = a[i].item() if task == "answer" else r[i].item() if task == "relevance" else c[i].tolist()
            out.append((task, label, score))
    model.train()
    return out


def auc(labels: list[int], scores: list[float]) -> float:
    """ROC AUC as the Mann-Whitney statistic (ties count one half)."""
    y, s = np.asarray(labels), np.asarray(scores)
    neg = np.sort(s[y == 0])
    below = np.searchsorted(neg, s[y == 1], side="left")
    equal = np.searchsorted(neg, s[y == 1], side="right") - below
    return float((below + 0.5 * equal).sum() / max((y == 1).sum() * (y == 0).sum(), 1))


def scores(preds: list[tuple]) -> dict:
    out = {}
    for task in ("answer", "relevance"):
        p = [(lab, s) for t, lab, s in preds if t == task]
        if p:
            out[task] = {"pairs": len(p), "auc": round(auc([x for x, _ in p], [s for _, s in p]), 4),
                         "accuracy": round(sum((s > 0) == (lab == 1) for lab, s in p) / len(p), 4)}
    c = [(lab, int(np.argmax(s))) for t, lab, s in preds if t == "claim"]
    three = [(lab, g) for lab, g in c if lab >= 0]
    if c:
        sup = [(lab == 0, g == 0) for lab, g in c]
        rec_pos = sum(p for t, p in sup if t) / max(sum(t for t, _ in sup), 1)
        rec_neg = sum(not p for t, p in sup if not t) / max(sum(not t for t, _ in sup), 1)
        out["claim"] = {"pairs": len(c), "accuracy_3way": round(sum(lab == g for lab, g in three) / max(len(three), 1), 4),
                        "balanced_accuracy_supported": round((rec_pos + rec_neg) / 2, 4)}
    return out


# ---- export --------------------------------------------------------------------------------------

def export(model: Reader, encoder: PairEncoder, run: Path) -> None:
    """reader-fp32.onnx (one graph, all heads, dynamic batch and length), then reader.onnx: int8 weights
    (fp32 is 90 MB, over the 50 MB a wheel may carry)."""
    model.eval()
    dummy = tensors(encoder, [(*encoder.assemble([2054, 2003], [1054, 2003, 1037], [], 16), "answer", 0)] * 2)
    fp32 = run / "reader-fp32.onnx"
    torch.onnx.export(model, (dummy["input_ids"], dummy["attention_mask"], dummy["token_type_ids"]), str(fp32),
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["answer", "relevance", "claim"],
                      dynamic_axes={k: {0: "batch", 1: "tokens"} for k in ("input_ids", "attention_mask", "token_type_ids")}
                      | {"answer": {0: "batch"}, "relevance": {0: "batch"}, "claim": {0: "batch"}},
                      opset_version=17, dynamo=False)
    unsigned_int8.quantise(fp32, run / "reader.onnx")


# ---- main ------------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answer", type=int, default=11000, help="answer pairs per epoch")
    ap.add_argument("--relevance", type=int, default=2200, help="relevance pairs per epoch")
    ap.add_argument("--claim", type=int, default=8500, help="claim pairs per epoch")
    ap.add_argument("--epochs", type=int, default=3, help="passes, each over a fresh draw of the pairs above")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=8e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--len-answer", type=int, default=96)
    ap.add_argument("--len-relevance", type=int, default=128)
    ap.add_argument("--len-claim", type=int, default=128)
    ap.add_argument("--claim-mix", default="vitaminc=0.5,halueval=0.1,squad-claims=0.25,conflicts=0.15",
                    help="share of the claim pairs per source")
    ap.add_argument("--answer-mix", default="", help="share of the answer pairs per named source, e.g. docs=0.08 "
                    "(prepare.py --docs; not shipped: bench/results/train-docs-2026-11-27.md)")
    ap.add_argument("--listwise", type=float, default=1.0,
                    help="weight of the per-question list loss (answer, relevance); 0 = pointwise only")
    ap.add_argument("--context-rate", type=float, default=0.5, help="share of answer pairs shown their paragraph")
    ap.add_argument("--test-per-task", type=int, default=1000, help="held-out pairs scored per task after each epoch")
    ap.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None,
                    help="bfloat16 autocast (weights stay fp32); default: when the CPU has bf16 instructions "
                         "(2.1x faster with them, over 5x slower where torch emulates them: train/machine.py)")
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    args.bf16 = native_bf16() if args.bf16 is None else args.bf16

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    t_start = time.time()

    data, run = CACHE / "data", CACHE / "run"
    run.mkdir(parents=True, exist_ok=True)
    folder = model_dir()
    encoder = PairEncoder(folder / "tokenizer.json")
    lengths = {"answer": args.len_answer, "relevance": args.len_relevance, "claim": args.len_claim}
    rng = random.Random(args.seed)
    train_rows = load_rows(data / "train.jsonl")
    test_rows = sample(load_rows(data / "test.jsonl"), {t: args.test_per_task for t in HEADS}, random.Random(args.seed + 1))
    test_items = encode(encoder, test_rows, lengths, random.Random(args.seed + 2), args.context_rate)

    model = Reader()
    model.load_minilm(folder)
    model.word.weight.requires_grad_(False)  # 30k × 384 rows, most unseen here: frozen (speed, less drift)
    head_params = list(model.heads.parameters())
    body_params = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("heads.")]
    opt = torch.optim.AdamW([{"params": body_params, "lr": args.lr}, {"params": head_params, "lr": args.head_lr}],
                            weight_decay=0.01)
    sizes = {"answer": args.answer, "relevance": args.relevance, "claim": args.claim}
    mix = {k: float(v) for k, v in (x.split("=") for x in args.claim_mix.split(",") if x)}
    answer_mix = {k: float(v) for k, v in (x.split("=") for x in args.answer_mix.split(",") if x)}
    per_epoch = [encode(encoder, sample(train_rows, sizes, rng, mix, answer_mix), lengths, rng, args.context_rate)
                 for _ in range(args.epochs)]
    # batched up front: a question's candidates share a batch, so batches vary in size and only
    # the batches themselves say how many steps the learning-rate schedule spans
    per_epoch_batches = [batches(items, args.batch, rng, shuffle=True) for items in per_epoch]
    steps = sum(len(b) for b in per_epoch_batches)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(steps - warmup, 1))))
    log = {"settings": vars(args), "train_pairs_per_epoch": {}, "epochs": []}
    step = 0
    model.train()
    for epoch, items in enumerate(per_epoch, 1):
        log["train_pairs_per_epoch"][epoch] = {t: sum(1 for x in items if x[2] == t) for t in HEADS}
        t0, seen, running = time.time(), 0, 0.0
        for batch in per_epoch_batches[epoch - 1]:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
                out = model(**tensors(encoder, batch))
            loss = losses(tuple(o.float() for o in out), batch, args.listwise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            seen += len(batch)
            running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
            if step % 50 == 0:
                print(f"epoch {epoch} step {step}/{steps} loss {running:.4f} {seen / (time.time() - t0):.1f} pairs/s",
                      flush=True)
        held = scores(predict(model, encoder, test_items, bf16=args.bf16))
        log["epochs"].append({"epoch": epoch, "seconds": round(time.time() - t0, 1), "loss": round(running, 4),
                              "held_out": held})
        print(f"epoch {epoch}: {json.dumps(held)}", flush=True)

    torch.save(model.state_dict(), run / "reader.pt")
    export(model, encoder, run)
    log["seconds"] = round(time.time() - t_start, 1)
    (run / "train.json").write_text(json.dumps(log, indent=1))
    print(f"done in {log['seconds']} s → {run}")


if __name__ == "__main__":
    main()
