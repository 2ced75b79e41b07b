"""The literal channel (query/literal.literal_channel) with its key word and without, in one
process over the same index, with the same units and scores required of both (issue 30).

usage: python bench/literal_channel.py INDEX [INDEX …] [--reps 3]

A question with one word of its own ("What is zsh?") is read for its phrase, its one-letter names
and the sentence that defines its subject, by a scan of every unit's whitespace-collapsed lower
case. literal.literal_key names a word that every unit able to match holds; the scan makes the
collapsed copy of only those units. For each question below, whole index and restricted to 50
units, the median of --reps calls each way. Prints ms per call and exits 1 if any result differs.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = ["What is zsh?", "What is R?", "What is debconf?", "What are conffiles?", "What is aptitude?",
             "What is fontspec?", "What is the booktabs?", "What is S-PLUS?", "what is  CRAN ?", "What is X.?",
             "Halcyon", "What is Halcyon?", "What is node.js?", "What is OVWA?", "C and R?", "What is an example?"]


def main() -> int:
    from provrag.query import literal
    from provrag.store.reader import open_index

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", type=Path, nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    keyed_word = literal.literal_key
    bad = 0
    for index in a.index:
        with open_index(index) as r:
            some = [i for (i,) in r.con.execute("SELECT id FROM text_units LIMIT 50").fetchall()]
            ms = {"scan": [], "key": []}
            differ = 0
            for q in QUESTIONS:
                for ids in (None, some):
                    out = {}
                    for way in ("scan", "key"):
                        literal.literal_key = keyed_word if way == "key" else (lambda phrase, subject: None)
                        times = []
                        for _ in range(a.reps):
                            t = time.perf_counter()
                            out[way] = literal.literal_channel(r.con, q, 1, 100, ids)
                            times.append(1000 * (time.perf_counter() - t))
                        ms[way].append(statistics.median(times))
                    differ += out["scan"] != out["key"]
            literal.literal_key = keyed_word
        bad += differ
        scan, key = statistics.mean(ms["scan"]), statistics.mean(ms["key"])
        print(f"{index}: {len(ms['key'])} calls, results the same: {'yes' if not differ else f'no, {differ} differ'}; "
              f"mean {scan:.0f} ms without the key, {key:.0f} ms with it ({key / scan:.2f}×); whole-index "
              f"\"What is zsh?\" {ms['scan'][0]:.0f} → {ms['key'][0]:.0f} ms")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
