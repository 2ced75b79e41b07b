"""Global questions of a written set, answered through the CLI and scored theme by theme (issue #27).

    .venv/bin/python bench/global_quality.py PROVRAG DIR [--index IDX] [--config FILE]
                                             [--method auto] [--max-words 350] [--dump FILE.jsonl]

DIR is a folder bench/qa_sets.py builds (corpus/ and global.jsonl). Each line of global.jsonl:
{"id", "question", "scope": "folder" | a file name in corpus/, "themes": [{"name", "words",
"pages", "document" (folder questions)}]} — "pages" empty for a page-less document; themes written from the documents' own outlines and
chapter headings (eval/README.md). Without --index, corpus/ is indexed into a temp folder first.

Per question, from `PROVRAG ask QUESTION --index IDX --method auto --json`:
- themes covered: a theme counts when one of the answer's first 12 sources is in its document
  (the scope, or the theme's own document for a folder question) on one of its pages, and the
  answer uses one of its words — check_global.py's rule: words compared as 5-letter prefixes of
  their words of 4 letters or more. An answer over --max-words words, or an abstention, covers
  nothing (a list of everything is no answer);
- focus (one-document questions): the share of those 12 sources that are in the scope document;
- documents cited (folder questions): documents among all the answer's sources ÷ the themes' documents.
Prints one table, then the means. Exit 0 when every question got an answer, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# check_global.py's vocabulary rule, repeated here so the two scripts count a theme's words alike
STOP = set("""about also than that this their there these those with from into what when where which while will
would your have using used other under over more most some such only then them they were been being each
does doing done just like make made many much must need very well what whom whose about after again
against before between both during further here itself same should through until upon""".split())
FIRST_SOURCES = 12


def vocab(text: str) -> set[str]:
    """Content words as 5-letter prefixes (so that 'builtins' meets 'builtin')."""
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in STOP}


def source_name(source: dict) -> str:
    return Path(str(source.get("path") or source.get("document") or "")).name


def cites(source: dict, document: str, pages: set[int]) -> bool:
    """The source is in ``document`` on one of ``pages`` (any source of it, when the theme has no pages:
    a DOCX, HTML or TXT file has none, CONTRACT.md)."""
    if source_name(source) != document:
        return False
    p0 = source.get("page_start")
    if not pages:
        return True
    if p0 is None:
        return False
    p1 = source.get("page_end") or p0
    return bool(set(range(int(p0), int(p1) + 1)) & pages)


def score(item: dict, out: dict, max_words: int) -> dict:
    """One question's figures from its `ask --json` output (see the module docstring)."""
    answer = str(out.get("answer") or "")
    sources = out.get("sources") or []
    first = sources[:FIRST_SOURCES]
    words = len(answer.split())
    said = vocab(answer)
    folder = item["scope"] == "folder"
    counted = words <= max_words and not out.get("abstained")
    covered = [t["name"] for t in item["themes"]
               if counted and said & vocab(" ".join(t["words"]))
               and any(cites(s, t.get("document") or item["scope"], set(t["pages"])) for s in first)]
    row = {"id": item["id"], "scope": item["scope"], "themes": len(item["themes"]), "covered": covered,
           "words": words, "method": out.get("method"), "abstained": bool(out.get("abstained"))}
    if folder:
        wanted = {t["document"] for t in item["themes"]}
        row["documents"] = (len(wanted & {source_name(s) for s in sources}), len(wanted))
    else:
        row["focus"] = sum(source_name(s) == item["scope"] for s in first) / len(first) if first else 0.0
    return row


def ask(provrag: str, question: str, index: Path, method: str, config: str | None) -> dict | None:
    cmd = [provrag, "ask", question, "--index", str(index), "--method", method, "--json"]
    try:
        run = subprocess.run(cmd + (["--config", config] if config else []), capture_output=True, text=True,
                             timeout=600)
        return json.loads(run.stdout)
    except (ValueError, subprocess.TimeoutExpired):
        return None


def table(rows: list[dict], max_words: int) -> list[str]:
    lines = ["| id | scope | themes covered | focus on scope | documents cited | words | method |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['id']} | {r['scope']} | unreadable output | | | | |")
            continue
        focus = f"{r['focus']:.0%}" if "focus" in r else "–"
        docs = f"{r['documents'][0]} / {r['documents'][1]}" if "documents" in r else "–"
        over = " (over)" if r["words"] > max_words else ""
        lines.append(f"| {r['id']} | {r['scope']} | {len(r['covered'])} / {r['themes']} | {focus} | {docs} | "
                     f"{r['words']}{over} | {r['method']}{' (abstained)' if r['abstained'] else ''} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("provrag")
    ap.add_argument("dir", type=Path, help="a set folder: corpus/ and global.jsonl")
    ap.add_argument("--index", type=Path, help="an index of DIR/corpus already built (skips indexing)")
    ap.add_argument("--config")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--max-words", type=int, default=350)
    ap.add_argument("--dump", type=Path, help="one JSON line per question: its figures and the answer")
    a = ap.parse_args()
    items = [json.loads(line) for line in (a.dir / "global.jsonl").read_text().splitlines() if line.strip()]
    work = Path(tempfile.mkdtemp(prefix="global-quality-"))
    try:
        index = a.index
        if index is None:
            index = work / "idx"
            run = subprocess.run([a.provrag, "index", str(a.dir / "corpus"), "--out", str(index),
                                  *(["--config", a.config] if a.config else [])], capture_output=True, text=True)
            if run.returncode != 0:
                print("index failed:", (run.stderr.strip().splitlines() or [""])[-1][:200])
                return 1
        rows = []
        for item in items:
            out = ask(a.provrag, item["question"], index, a.method, a.config)
            row = {"id": item["id"], "scope": item["scope"], "error": True} if out is None else score(item, out, a.max_words)
            rows.append(row)
            if a.dump:
                with open(a.dump, "a") as f:
                    f.write(json.dumps(row | {"question": item["question"], "answer": (out or {}).get("answer")}) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(table(rows, a.max_words)))
    ok = [r for r in rows if "error" not in r]
    cover = [len(r["covered"]) / r["themes"] for r in ok]
    focus = [r["focus"] for r in ok if "focus" in r]
    print(f"\n{len(rows)} global questions: themes covered {statistics.mean(cover) if cover else 0:.0%} (mean), "
          f"focus {statistics.mean(focus) if focus else 0:.0%} (mean of one-document questions), "
          f"answers over {a.max_words} words {sum(r['words'] > a.max_words for r in ok)}, "
          f"unreadable outputs {len(rows) - len(ok)}")
    return 0 if len(ok) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
