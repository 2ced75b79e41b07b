"""The asked-fact rule (provrag/text/asked.py) on labelled data nobody tuned it on: SQuADShifts.

    .venv/bin/python bench/asked_rule.py [--out bench/results/asked-rule-2026-11-27.md]

Why: `ask` now lets only sentences with the asked fact's form answer a question that asks for a
limit, a version or a cost (`asked_facts(question)` non-empty, `states_all(kinds, sentence,
question)`). The rule was written by hand against manuals' near misses; nothing measured how often
it throws away a real answer. SQuADShifts (new_wiki, nyt, reddit, amazon_reviews: free to use, see
../shared/eval/train-exclude/README.md; squaddev_v1.1 is never read) has the answer annotated, so
for every question the rule classifies, it says:

- recall: the share whose answer sentence (the sentence holding the first annotated answer's start,
  contexts split with provrag.text.sentences.split_sentences, as train/prepare.py does) passes
  `states_all`; also the share where some annotator's answer sentence passes, and the recall among
  questions whose annotated answer holds a digit (the numeric answers the rule is built for);
- pass rate of non-answers: the share of the paragraph's other sentences (holding no annotated
  answer of the question) that pass: 1 - pass rate is what the rule filters.

It prints a markdown report (table per source and kind, failure patterns, 15 failing examples)
and writes it to --out. Data: the `bigbench==1.0.0` sdist, fetched by train/fetch.py (through
train/prepare.py: cache $PROVRAG_TRAIN_CACHE/downloads, or a copy in $PROVRAG_TRAIN_DOWNLOADS, else
downloaded from PyPI), checked against its pinned sha256, never installed.

Runs in ~6 s once the archive is in the cache (most of it reading the 358 MB archive). The failure
patterns are heuristic labels of this script (FAILURE_PATTERNS), for reading, not part of the rule.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "asked-rule-2026-11-27.md"
# sha256 of bigbench-1.0.0.tar.gz as PyPI publishes it (https://pypi.org/simple/bigbench/)
SDIST_SHA256 = "1bb398a5512c6d798cdebe0dfa0ac03f67f6033fa6b39c6ef71df978c7cbc5c2"
SEED = 1729
N_EXAMPLES = 15

# heuristic labels for a failing answer sentence, first match wins (reading aid only)
_DURATION = (r"\b(a|an|few|couple|several|many|next|first|last|extra)?\s*"
             r"(second|sec|minute|min|hour|hr|day|night|week|month|year|decade)s?\b")
FAILURE_PATTERNS = {
    "version": [
        ("'release' read as a verb, not a version question",
         lambda q, s, a: bool(re.search(r"\b(do|does|did|will|would|can|could)\b.*\breleases?\b", q, re.I))),
        ("version named, no number (XP, NT, beta, Kindle, older, 'Pet' …)",
         lambda q, s, a: not any(re.search(r"\d", x) for x in a)),
        ("the sentence's only numbers are the question's (x86)", lambda q, s, a: bool(re.search(r"\d", s))),
    ],
    "cost": [
        ("number already in the question", lambda q, s, a: bool(re.search(r"\d", s))),
        ("duration in words ('a month', 'weeks', 'a few days', 'an hour')",
         lambda q, s, a: any(re.search(_DURATION, x, re.I) for x in a)),
        ("amount in words ('a tiny bit', 'extra few bucks', 'a little extra time')", lambda q, s, a: True),
    ],
    "limit": [
        ("'X or more' / 'from X to Y' / 'all the way to' (a bound the rule's words miss)",
         lambda q, s, a: bool(re.search(r"\bor (more|less|fewer)\b|\bfrom [$\d.,/]+\S* to [$\d]|\ball the way to\b"
                                        r"|\batleast\b|\bcap\b|\bonly to\b", s, re.I))),
        ("question asks for a thing, not a quantity (city, names, art …)",
         lambda q, s, a: not any(re.search(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten)\b", x, re.I)
                                 for x in a)),
        ("a quantity stated plainly, no bound word ('holds 13.5 ounces', 'hold 1000 pounds')",
         lambda q, s, a: True),
    ],
}


def load_shifts() -> tuple[dict[str, list], str]:
    """{shift: SQuAD 'data' list} read from the sdist (never squaddev), and the sdist's sha256."""
    import hashlib
    import subprocess
    import tarfile
    sys.path.insert(0, str(ROOT / "train"))
    import prepare  # train/prepare.py: fetch, TASKS, SHIFTS (the sources it trains on)

    try:
        path = prepare.fetch("bigbench")
    except subprocess.CalledProcessError:
        sys.exit("pip download bigbench==1.0.0 failed; see this script's docstring for the older-pip workaround")
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != SDIST_SHA256:
        sys.exit(f"{path}: sha256 {digest.hexdigest()} is not PyPI's {SDIST_SHA256}")
    assert not any("squaddev" in s for s in prepare.SHIFTS)
    check_exclusions()
    want = {prepare.TASKS + f"squad_shifts/{s}_v1.0.json": s for s in prepare.SHIFTS}
    out = {}
    with tarfile.open(path, "r:gz") as tar:
        for m in tar:
            if m.name in want:
                out[want[m.name]] = json.loads(tar.extractfile(m).read())["data"]
                if len(out) == len(want):
                    break
    missing = set(want.values()) - set(out)
    if missing:
        sys.exit(f"missing from the sdist: {sorted(missing)}")
    return {s: out[s] for s in prepare.SHIFTS}, digest.hexdigest()


def check_exclusions() -> None:
    """train-exclude lists nothing of SQuADShifts (only squaddev is evaluation's); stop if that changes."""
    readme = ROOT.parent / "shared" / "eval" / "train-exclude" / "README.md"
    if not readme.is_file():
        sys.exit(f"{readme} not found: not reading training sources without the exclusion list")
    rows = [ln for ln in readme.read_text().splitlines() if ln.startswith("| `")]
    if any(re.search(r"squad|new_wiki|nyt|reddit|amazon", ln, re.I) for ln in rows):
        sys.exit(f"{readme} now lists SQuADShifts items: drop them here before measuring")


def measure(shifts: dict[str, list]) -> tuple[list[dict], Counter]:
    """One record per classified question: kinds, answer sentence, whether it passes, others' passes."""
    from provrag.text.asked import asked_facts, states_all
    from provrag.text.sentences import split_sentences

    records, counts = [], Counter()
    for shift, data in shifts.items():
        for article in data:
            for para in article["paragraphs"]:
                context, spans = para["context"], None
                for qa in para["qas"]:
                    counts[f"{shift} questions"] += 1
                    q = qa["question"].strip()
                    kinds = asked_facts(q)
                    answers = qa.get("answers") or []
                    if not kinds:
                        continue
                    counts[f"{shift} classified"] += 1
                    if not answers:
                        counts[f"{shift} classified, no answer"] += 1
                        continue
                    spans = spans if spans is not None else split_sentences(context)
                    starts = [a["answer_start"] for a in answers]
                    holders = sorted({i for i, (a, b) in enumerate(spans) for s in starts if a <= s < b})
                    first = [i for i, (a, b) in enumerate(spans) if a <= starts[0] < b]
                    if not first:
                        counts[f"{shift} classified, answer outside every sentence"] += 1
                        continue
                    a0, b0 = spans[first[0]]
                    a_end = starts[0] + len(answers[0]["text"])
                    counts[f"{shift} classified, answer crosses a sentence end"] += a_end > b0
                    sentence = context[a0:b0]
                    others = [context[a:b] for i, (a, b) in enumerate(spans) if i not in holders]
                    records.append({
                        "source": shift, "kind": "+".join(kinds), "question": q,
                        "answers": [a["text"] for a in answers], "answer_start": starts[0] - a0,
                        "sentence": sentence, "passes": states_all(kinds, sentence, q),
                        "any_passes": any(states_all(kinds, context[slice(*spans[i])], q) for i in holders),
                        "numeric": any(re.search(r"\d", a["text"]) for a in answers),
                        "others": len(others), "others_pass": sum(states_all(kinds, t, q) for t in others),
                    })
    return records, counts


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if not n:
        return 0.0, 0.0
    p = k / n
    den = 1 + z * z / n
    mid, half = (p + z * z / (2 * n)) / den, z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def pct(k: int, n: int) -> str:
    return f"{100 * k / n:.0f} % ({k}/{n})" if n else "–"


def table(records: list[dict], sources: list[str]) -> list[str]:
    lines = ["| source | kind | questions | answer sentence passes (recall) [95 % CI] | some annotator's answer "
             "sentence passes | recall, answer has a digit | other sentences | others passing (pass rate) |",
             "| --- | --- | ---: | --- | --- | --- | ---: | --- |"]
    kinds = sorted({r["kind"] for r in records})
    groups = [(s, k) for s in sources for k in kinds] + [("all", k) for k in kinds] + [("all", "all")]
    for source, kind in groups:
        rs = [r for r in records if source in ("all", r["source"]) and kind in ("all", r["kind"])]
        if not rs:
            continue
        k, n = sum(r["passes"] for r in rs), len(rs)
        lo, hi = wilson(k, n)
        num = [r for r in rs if r["numeric"]]
        o_n, o_k = sum(r["others"] for r in rs), sum(r["others_pass"] for r in rs)
        bold = "**" if source == "all" else ""
        lines.append(f"| {bold}{source}{bold} | {bold}{kind}{bold} | {n} "
                     f"| {pct(k, n)} [{100 * lo:.0f}–{100 * hi:.0f}] "
                     f"| {pct(sum(r['any_passes'] for r in rs), n)} | {pct(sum(r['passes'] for r in num), len(num))} "
                     f"| {o_n} | {pct(o_k, o_n)} |")
    return lines


def pattern_of(r: dict) -> str:
    kind = r["kind"].split("+")[0]
    for label, test in FAILURE_PATTERNS.get(kind, []):
        if test(r["question"], r["sentence"], r["answers"]):
            return label
    return "other"


def shown(r: dict, width: int = 420) -> str:
    """The sentence, cut around the answer when long, answer in bold."""
    s, a = r["sentence"], r["answer_start"]
    t = r["answers"][0]
    lo = max(0, min(a - width // 2, len(s) - width)) if len(s) > width else 0
    hi = lo + width if len(s) > width else len(s)
    text = s[lo:a] + ("**" + s[a:a + len(t)] + "**" if s[a:a + len(t)] == t else s[a:a + len(t)]) + s[a + len(t):hi]
    text = " ".join(text.split()).replace("|", "\\|")
    return ("…" if lo else "") + text + ("…" if hi < len(s) else "")


def report(records: list[dict], counts: Counter, sha: str, sources: list[str]) -> str:
    out = ["# The asked-fact rule (provrag/text/asked.py) on SQuADShifts: recall and what it filters (2026-11-27)",
           "",
           "`bench/asked_rule.py`. For every SQuADShifts question with `asked_facts(question)` non-empty, the sentence "
           "holding the first annotated answer's start (contexts split with `split_sentences`, as train/prepare.py "
           "does) is checked with `states_all`, and so are the paragraph's other sentences (those holding no "
           "annotated answer of the question). Recall = share of answer sentences that pass (1 - recall is how often "
           "the rule would throw away a real answer); pass rate = share of other sentences that pass (1 - pass rate "
           "is what it filters). Nobody tuned the rule on this data; it is general-domain text (Wikipedia, NYT, "
           "Reddit, Amazon reviews), not manuals, so the counts are small and the question wording differs.",
           "",
           f"Data: `bigbench==1.0.0` sdist, sha256 `{sha}` (matches PyPI's); members "
           + ", ".join(f"`squad_shifts/{s}_v1.0.json`" for s in sources)
           + ". squaddev_v1.1 not read; ../shared/eval/train-exclude lists nothing of SQuADShifts (nothing dropped).",
           "", "| source | questions | classified by asked_facts | measured | notes |",
           "| --- | ---: | ---: | ---: | --- |"]
    for s in sources:
        pre = f"{s} classified, "
        notes = ", ".join(f"{counts[k]} {k[len(pre):]}" for k in sorted(counts) if k.startswith(pre) and counts[k])
        out.append(f"| {s} | {counts[f'{s} questions']} | {counts[f'{s} classified']} "
                   f"| {sum(r['source'] == s for r in records)} | {notes or '–'} |")
    out += ["", "## Recall and pass rate per source and kind", ""] + table(records, sources)
    fails = [r for r in records if not r["passes"]]
    out += ["", f"## Failure patterns ({len(fails)} answer sentences rejected; heuristic labels of the script)", "",
            "| kind | pattern | failures |", "| --- | --- | ---: |"]
    for (kind, label), n in sorted(Counter((r["kind"], pattern_of(r)) for r in fails).items(),
                                   key=lambda x: (x[0][0], -x[1])):
        out.append(f"| {kind} | {label} | {n} |")
    out += ["", f"## {N_EXAMPLES} rejected answer sentences (seeded draw, per kind)", ""]
    by_kind = defaultdict(list)
    for r in fails:
        by_kind[r["kind"]].append(r)
    rng = random.Random(SEED)
    for rs in by_kind.values():
        rng.shuffle(rs)
    picked, i = [], 0
    while len(picked) < N_EXAMPLES and any(len(v) > i for v in by_kind.values()):
        picked += [by_kind[k][i] for k in sorted(by_kind) if len(by_kind[k]) > i][:N_EXAMPLES - len(picked)]
        i += 1
    for n, r in enumerate(sorted(picked, key=lambda r: r["kind"]), 1):
        answers = " / ".join(dict.fromkeys(a.strip() for a in r["answers"]))
        out += [f"{n}. **{r['kind']}**, {r['source']} — Q: {r['question']}  ",
                f"   annotated: {answers}  ", f"   sentence: {shown(r)}  ", f"   pattern: {pattern_of(r)}", ""]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"markdown report (default {OUT.relative_to(ROOT)})")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    shifts, sha = load_shifts()
    records, counts = measure(shifts)
    text = report(records, counts, sha, list(shifts))
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
