"""What Snowball's C stemmer (PyStemmer) buys provrag, against snowballstemmer's pure-Python one, in one run.

usage: python bench/stemmer_speed.py INDEX [INDEX ...] [--reps 7] [--question Q ...] [--out STEM]

snowballstemmer hands its stemmer() over to PyStemmer when it is installed; a process that cannot
import `Stemmer` (here: a wrapper that makes `import Stemmer` fail) stems in pure Python, as
provrag did before PyStemmer was a dependency. Same venv, same code, interleaved runs, so the
ratio is the stemmer's alone. Rows:
- per word: both stemmers over every distinct word of the first index's text units, and whether
  any stem differs;
- the WordNet antonym table's stems (what a cold answer check computes first), in a fresh process;
- `provrag ask` cold per index, median of --reps, each round running both.
Writes bench/results/stemmer-<date>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# `provrag ARGS` (PURE) or a code string (PURE_EXEC) with `import Stemmer` failing: snowballstemmer's pure-Python stemmers
PURE = ["-c", "import runpy, sys; sys.modules['Stemmer'] = None; sys.argv = ['provrag'] + sys.argv[1:]; "
              "runpy.run_module('provrag', run_name='__main__', alter_sys=True)"]
PURE_EXEC = "import sys; sys.modules['Stemmer'] = None; exec(sys.argv[1])"
TABLE = ("import time; t = time.perf_counter(); "
         "from provrag.engines.offline.judge.wordnet import opposite_stems; opposite_stems(); "
         "print(1000 * (time.perf_counter() - t))")


def per_word(index: Path) -> dict:
    import duckdb
    import Stemmer
    from snowballstemmer.english_stemmer import EnglishStemmer

    from provrag.text.words import WORD

    texts = duckdb.connect().execute(f"SELECT text FROM read_parquet('{index / 'text_units.parquet'}')").fetchall()
    words = sorted({w.lower() for (t,) in texts for w in WORD.findall(t or "")})
    out = {"words": len(words)}
    for name, stemmer in (("c", Stemmer.Stemmer("english")), ("python", EnglishStemmer())):
        t = time.perf_counter()
        out[name] = [stemmer.stemWord(w) for w in words]
        out[name + "_us"] = 1e6 * (time.perf_counter() - t) / max(1, len(words))
    out["differ"] = sum(a != b for a, b in zip(out.pop("c"), out.pop("python")))
    return out


def wall(argv: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… failed: {done.stderr[-400:]}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("indexes", nargs="+", type=Path)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--question", action="append", help="one per index (default: a page-margins question)")
    ap.add_argument("--out")
    a = ap.parse_args()
    questions = a.question or ["How do I change the page margins?"] * len(a.indexes)
    res: dict = {"per_word": per_word(a.indexes[0]), "table_ms": {"c": [], "python": []}, "asks": {}}
    for _ in range(3):
        res["table_ms"]["c"].append(float(subprocess.check_output([sys.executable, "-c", TABLE], text=True)))
        res["table_ms"]["python"].append(float(subprocess.check_output([sys.executable, "-c", PURE_EXEC, TABLE],
                                                                       text=True)))
    for index, q in zip(a.indexes, questions):
        argv = ["ask", q, "--index", str(index), "--json"]
        runs = {"c": [], "python": []}
        for _ in range(a.reps):
            runs["c"].append(wall([str(BIN / "provrag"), *argv]))
            runs["python"].append(wall([sys.executable, *PURE, *argv]))
        res["asks"][str(index)] = {k: {"median_s": statistics.median(v), "walls_s": v} for k, v in runs.items()}
    md = ["# Snowball's C stemmer (PyStemmer) against the pure-Python one, one run, interleaved", "",
          "| figure | pure Python | C | C ÷ Python |", "| --- | --- | --- | --- |"]
    w = res["per_word"]
    md.append(f"| a word's stem, {w['words']:,} distinct words of {a.indexes[0].name}'s units ({w['differ']} differ) "
              f"| {w['python_us']:.1f} µs | {w['c_us']:.2f} µs | {w['c_us'] / w['python_us']:.3f}× |")
    tp, tc = (statistics.median(res["table_ms"][k]) for k in ("python", "c"))
    md.append(f"| the WordNet antonym table's stems, fresh process (median of 3) | {tp:.0f} ms | {tc:.0f} ms | {tc / tp:.2f}× |")
    for index, r in res["asks"].items():
        p, c = r["python"]["median_s"], r["c"]["median_s"]
        md.append(f"| `provrag ask` cold, {Path(index).name} (median of {a.reps}) | {p:.2f} s | {c:.2f} s | {c / p:.2f}× |")
    text = "\n".join(md) + "\n"
    print(text)
    out = ROOT / "bench" / "results" / (a.out or f"stemmer-{dt.date.today()}")
    out.with_suffix(".json").write_text(json.dumps(res, indent=1))
    out.with_suffix(".md").write_text(text)
    print(f"wrote {out}.json and .md")


if __name__ == "__main__":
    main()
