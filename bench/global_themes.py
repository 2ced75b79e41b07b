"""Global questions answered in themes: ../shared/checks/check_global.py on three folders, one table.

usage: python bench/global_themes.py [--provrag .venv/bin/provrag] [--manuals DIR] [--texlive DIR]
                                     [--small DIR] [--sample 25] [--json OUT]

Folders (each skipped when missing):
- the ten Debian/R manuals (../shared/corpora/fetch-debian-docs.sh DIR pdf-manuals; default
  /work/cache/corpora/pdf-manuals);
- a TeX Live sample, chosen by a rule fixed before anything was measured on it: the PDFs of
  --texlive in file-name order, keeping the first --sample (25) that check_global.py would ask
  about — at least 4 top-level outline themes by the checker's own reading (top-level bookmarks
  with a page, not named index/licence/bibliography/…, spanning at least one page);
- ../shared/corpora/small (four PDFs and a text file, a DOCX and an HTML page).

For each: check_global.py's figure (themes covered, focus, words, documents cited by the whole-
folder question) and the per-document table from its --dump. Offline engine, default config.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT.parent / "shared" / "checks" / "check_global.py"
# the checker's reading of an outline (check_global.py), restated: a sample rule must not depend
# on provrag's own parsing
SKIP = re.compile(r"\b(index|licen[cs]e|bibliograph|references|acknowledg|copying|colophon|contents|"
                  r"preface|about this|history of changes|changelog|glossary)", re.I)


def outline_themes(path: Path) -> int:
    """How many top-level outline themes check_global.py would count for this PDF (0 if unreadable)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception:
        return 0
    try:
        n, tops = len(pdf), []
        for b in pdf.get_toc():
            dest = b.get_dest()
            idx = dest.get_index() if dest is not None else None
            if idx is not None and b.level == 0:
                tops.append((b.get_title().strip(), idx + 1))
    except Exception:
        return 0
    finally:
        pdf.close()
    tops.sort(key=lambda t: t[1])
    return sum(1 for i, (name, p0) in enumerate(tops)
               if not SKIP.search(name) and ((tops[i + 1][1] - 1) if i + 1 < len(tops) else n) >= p0)


def texlive_sample(folder: Path, size: int) -> list[Path]:
    """The first `size` PDFs by file name with at least 4 outline themes (the rule above)."""
    out = []
    for p in sorted(folder.glob("*.pdf")):
        if outline_themes(p) >= 4:
            out.append(p)
            if len(out) == size:
                break
    return out


def run_check(provrag: str, folder: Path, dump: Path) -> tuple[str, int]:
    r = subprocess.run([sys.executable, str(CHECK), provrag, str(folder), "--dump", str(dump)],
                       capture_output=True, text=True, timeout=7200)
    return (r.stdout.strip().splitlines() or [r.stderr.strip()[-300:]])[-1], r.returncode


def table(dump: Path) -> list[dict]:
    rows = [json.loads(line) for line in dump.read_text().splitlines() if line.strip()]
    return [{"document": r["document"], "themes": len(r["themes"]), "covered": len(r["covered"]),
             "coverage": round(r["coverage"], 3), "focus": round(r["focus"], 3), "words": r["words"],
             "method": r["method"]} if "document" in r else
            {"collection": True, "cited": r["cited"], "method": r["method"]} for r in rows]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--provrag", default=str(ROOT / ".venv" / "bin" / "provrag"))
    ap.add_argument("--manuals", default="/work/cache/corpora/pdf-manuals")
    ap.add_argument("--texlive", default="/work/cache/corpora/pdf-texlive")
    ap.add_argument("--small", default=str(ROOT.parent / "shared" / "corpora" / "small"))
    ap.add_argument("--sample", type=int, default=25)
    ap.add_argument("--json")
    a = ap.parse_args()
    results, failed = {}, False
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        if Path(a.manuals).is_dir():
            folders["manuals"] = Path(a.manuals)
        if Path(a.texlive).is_dir():
            sample = Path(tmp) / "texlive-sample"
            sample.mkdir()
            for p in texlive_sample(Path(a.texlive), a.sample):
                shutil.copyfile(p, sample / p.name)  # provrag never follows links
            folders["texlive"] = sample
        if Path(a.small).is_dir():
            folders["small"] = Path(a.small)
        for name, folder in folders.items():
            dump = Path(tmp) / f"{name}.jsonl"
            figure, code = run_check(a.provrag, folder, dump)
            failed |= code != 0
            rows = table(dump) if dump.is_file() else []
            results[name] = {"figure": figure, "holds": code == 0, "rows": rows}
            print(f"\n## {name}: {figure}")
            print("| document | themes | covered | coverage | focus | words | method |")
            print("| --- | --- | --- | --- | --- | --- | --- |")
            for r in rows:
                if "document" in r:
                    print(f"| {r['document']} | {r['themes']} | {r['covered']} | {r['coverage']:.0%} | "
                          f"{r['focus']:.0%} | {r['words']} | {r['method']} |")
                else:
                    print(f"| (whole folder) | | {len(r['cited'])} documents cited | | | | {r['method']} |")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
