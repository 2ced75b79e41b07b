"""Questions that ask for a default, over PostgreSQL's settings pages (issue 26, text/asked.py's
preferred kind): the question set written from the documents themselves, and its figures.

    .venv/bin/python bench/default_questions.py PAGES [--index DIR] [--set A|B|AB] [--out FILE]

PAGES: a folder holding PostgreSQL 15's runtime-config-*.html and datatype-*.html pages (e.g.
/usr/share/doc/postgresql-doc-15/html of `apt-get download postgresql-doc-15`, or
`../shared/corpora/fetch-debian-docs.sh DIR html-postgres`). They are indexed into --index
(default: a folder under /tmp) unless it already holds an index.

The questions are not written by hand: every setting whose entry (a term "name ( type )" of the
pages' definition lists) says "The default is X" / "The default value is X" / "The default
setting is X" gives "What is the default value of name?", its gold value X's first word. They are
split by a fixed rule, the sha1 of the setting's name (set A: even, set B: odd), chosen before any
figure was seen; set A is the one the change was built on.

Per question, in this process (run with PYTHONPATH=OTHER_TREE for another tree's figures):
- lead holds: the answer's first sentence says "default" and the gold value (a word of its own);
- anywhere: the gold value is a word of the answer;
- wrong at ≥ 0.9: the lead does not hold it, the answer is given, at confidence ≥ 0.9.
"""
from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import sys
import tempfile
from pathlib import Path

ENTRY = re.compile(r"(\b[a-z_]+ \( (?:integer|boolean|string|enum|floating point) \))")
DEFAULT = re.compile(r"The default(?: value| setting)? is (?:typically )?([^ ,.(]+)")
NOT_A_VALUE = {"the", "a", "an", "empty", "to", "that", "set"}


def page_text(path: Path) -> str:
    """The page's words as one line (tags dropped): enough to find each entry's default sentence."""
    t = re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8", errors="replace"))
    return re.sub(r"\s+", " ", html.unescape(t))


def questions(pages: Path) -> list[dict]:
    out = []
    for page in sorted(pages.glob("runtime-config-*.html")):
        parts = ENTRY.split(page_text(page))
        for i in range(1, len(parts) - 1, 2):
            said = re.search(r"[^.]*\bdefault\b[^.]*\.", parts[i + 1][:2500])
            m = DEFAULT.match(said.group(0).strip()) if said else None
            if not m or m.group(1).lower() in NOT_A_VALUE:
                continue
            name = parts[i].split()[0]
            half = "AB"[int(hashlib.sha1(name.encode()).hexdigest(), 16) % 2]
            out.append({"set": half, "question": f"What is the default value of {name}?", "gold": m.group(1),
                        "page": page.name})
    return out


def word_in(gold: str, text: str) -> bool:
    return bool(re.search(r"(?<![\w.])" + re.escape(gold) + r"(?!\w)", text, re.I))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", type=Path)
    ap.add_argument("--index", type=Path, default=Path(tempfile.gettempdir()) / "provrag-default-questions")
    ap.add_argument("--set", default="AB")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask
    from provrag.pipelines.index import run_index

    cfg = load_config()
    if not (args.index / "text_units.parquet").exists():
        corpus = args.index.with_name(args.index.name + "-pages")
        corpus.mkdir(parents=True, exist_ok=True)
        for p in list(args.pages.glob("runtime-config-*.html")) + list(args.pages.glob("datatype-*.html")):
            (corpus / p.name).write_bytes(p.read_bytes())
        run_index(corpus, args.index, cfg)
    rows = []
    for q in (q for q in questions(args.pages) if q["set"] in args.set):
        res = run_ask(q["question"], args.index, cfg, save=False)
        answer = "" if res.abstained else (res.answer or "")
        lead = answer.split("[Data")[0]
        rows.append({**q, "abstained": res.abstained, "confidence": res.confidence,
                     "lead_holds": word_in(q["gold"], lead) and "default" in lead.lower(),
                     "anywhere": word_in(q["gold"], answer), "lead": lead.strip()[:300]})
    for half in args.set:
        got = [r for r in rows if r["set"] == half]
        wrong = sum(not r["lead_holds"] and not r["abstained"] and r["confidence"] >= 0.9 for r in got)
        print(f"set {half}: {len(got)} questions; lead holds {sum(r['lead_holds'] for r in got)}, "
              f"anywhere {sum(r['anywhere'] for r in got)}, abstained {sum(r['abstained'] for r in got)}, "
              f"wrong at >= 0.9 {wrong}")
    if args.out:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


if __name__ == "__main__":
    sys.exit(main())
