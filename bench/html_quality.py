"""HTML manuals read as their pages show them (provrag/index/html_content.py), measured on real pages:
how the index stage read them before (docling on the page as it came) beside how it reads them now.

    .venv/bin/python bench/html_quality.py [--pages DIR …] [--qa] [--work DIR] [--out STEM]

--pages: folders of HTML pages, e.g. ../shared/corpora/fetch-debian-docs.sh DIR html-python (Sphinx)
and … html-postgres (DocBook XSL); fetched into --work when none is given.
1. Every page: the words of its main content missing from the text the index keeps, and the share
   of the kept words that are not main content (site chrome). The main content is what the page
   marks as main (<main> or role="main", else its body), without permalink anchors and DocBook's
   Prev / Up / Next tables, its inline runs joined as rendered.
2. --qa: the pages bench/html_pages.json lists (46 of the Python manual, 243 of PostgreSQL's)
   indexed twice, then the questions of bench/html_questions.jsonl asked over each index in this
   process: the gold document first, the answer holding a gold string verbatim (a quote the user
   can find on the page) and with whitespace ignored (the same words, spaced otherwise), false
   abstentions, and unanswerable questions abstained. The questions were written for this bench
   while reading the answers of the tree before the change: figures on them are dev figures.
Writes bench/results/<stem>.json.
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FETCH = ROOT.parent / "shared" / "corpora" / "fetch-debian-docs.sh"
WORD = re.compile(r"[^\W_]+")


def words(text: str) -> collections.Counter:
    return collections.Counter(WORD.findall(text))


def main_content_words(data: bytes) -> collections.Counter | None:
    import lxml.etree
    import lxml.html

    from provrag.index.html_content import INLINE

    root = lxml.html.document_fromstring(data)
    marks = root.xpath("//main | //*[@role='main']")
    main = marks[0] if len(marks) == 1 else root.find("body")
    if main is None:
        return None
    for el in main.xpath(".//*[contains(@class, 'headerlink') or contains(@class, 'navheader') "
                         "or contains(@class, 'navfooter')]"):
        el.drop_tree()
    lxml.etree.strip_tags(main, *INLINE)
    return words(" ".join(main.itertext()))


def page_figures(pages: list[Path]) -> dict:
    """Part 1: per tree, the main content's words missing and the kept words that are chrome."""
    from provrag.index.html_content import page_content
    from provrag.index.parse import _docling

    out = {"pages": 0, "main_words": 0}
    for tree in ("before", "after"):
        out[tree] = {"missing_words": 0, "pages_missing_words": 0, "kept_words": 0, "chrome_words": 0}
    for path in pages:
        data = path.read_bytes()
        ref = main_content_words(data)
        if not ref:
            continue
        out["pages"] += 1
        out["main_words"] += sum(ref.values())
        for tree, html in (("before", data), ("after", page_content(data))):
            kept = words(_docling(html, "html", path.name).export_to_text())
            missing = sum((ref - kept).values())
            f = out[tree]
            f["missing_words"] += missing
            f["pages_missing_words"] += missing > 0
            f["kept_words"] += sum(kept.values())
            f["chrome_words"] += sum((kept - ref).values())
    return out


def build(corpus: Path, out: Path, as_it_came: bool) -> None:
    """Index the corpus, the HTML read as it came (before) or through html_content (after);
    parsed in this process ([load] workers = 1) so the switch reaches the parser."""
    from provrag.config import load_config
    from provrag.index import html_content
    from provrag.pipelines.index import run_index

    keep = html_content.page_content
    if as_it_came:
        # as the tree before read pages: whole, a page without body text still refused
        html_content.page_content = lambda data: None if keep(data) is None else data
    try:
        run_index(corpus, out, load_config(overrides={"load": {"workers": 1}}))
    finally:
        html_content.page_content = keep


def qa_figures(index: Path, items: list[dict]) -> dict:
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask

    cfg = load_config()
    squash = lambda s: re.sub(r"\s+", "", s)   # noqa: E731
    f = collections.Counter()
    rows = []
    for it in items:
        r = run_ask(it["question"], index, cfg, save=False)
        first = Path(r.sources[0].path or "").name if r.sources else None
        if it["document"] is None:
            f["unanswerable"] += 1
            f["unanswerable_abstained"] += bool(r.abstained)
        else:
            f["answerable"] += 1
            f["document_first"] += bool(first == it["document"] and not r.abstained)
            f["holds_verbatim"] += any(g in (r.answer or "") for g in it["answers"])
            f["holds_ignoring_spaces"] += any(squash(g) in squash(r.answer or "") for g in it["answers"])
            f["false_abstentions"] += bool(r.abstained)
        rows.append({"id": it["id"], "abstained": r.abstained, "first": first, "answer": (r.answer or "")[:300]})
    return {"figures": dict(f), "rows": rows}


def fetched(work: Path) -> list[Path]:
    dirs = []
    for name in ("html-python", "html-postgres"):
        dest = work / name
        if not dest.is_dir():
            subprocess.run(["bash", str(FETCH), str(dest), name], check=True, capture_output=True, timeout=900)
        dirs.append(dest)
    return dirs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=Path, nargs="*", help="folders of HTML pages (default: fetched into --work)")
    ap.add_argument("--qa", action="store_true", help="also index the listed pages twice and ask the questions")
    ap.add_argument("--work", type=Path, default=Path("/tmp/provrag-html-quality"))
    ap.add_argument("--out", default=f"html_quality-{dt.date.today().isoformat()}")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    folders = args.pages or fetched(args.work)
    result = {"date": dt.date.today().isoformat(), "folders": [str(f) for f in folders], "by_folder": {}}
    for folder in folders:
        pages = sorted(p for p in folder.iterdir() if p.suffix == ".html")
        result["by_folder"][folder.name] = page_figures(pages)
        print(folder.name, json.dumps(result["by_folder"][folder.name]), flush=True)
    if args.qa:
        listed = json.loads((ROOT / "bench" / "html_pages.json").read_text())
        corpus = args.work / "corpus"
        shutil.rmtree(corpus, ignore_errors=True)
        corpus.mkdir()
        for source, folder in zip(listed["sources"], fetched(args.work) if not args.pages else folders):
            for name in source["files"]:
                shutil.copy(folder / name, corpus / name)
        items = [json.loads(x) for x in (ROOT / "bench" / "html_questions.jsonl").read_text().splitlines() if x.strip()]
        result["qa"] = {}
        for tree in ("before", "after"):
            index = args.work / f"index-{tree}"
            shutil.rmtree(index, ignore_errors=True)
            build(corpus, index, as_it_came=tree == "before")
            result["qa"][tree] = qa_figures(index, items)
            print(tree, json.dumps(result["qa"][tree]["figures"]), flush=True)
    out = ROOT / "bench" / "results" / args.out
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
