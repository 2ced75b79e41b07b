"""OCR speed and word accuracy on real pages (provrag/index/ocr.py through parse_pdf).

    .venv/bin/python bench/ocr_quality.py [--manuals DIR] [--scan-dpi 200]

Each of the 10 Debian manuals (../shared/corpora/fetch-debian-docs.sh; DIR defaults to
$PROVRAG_MANUALS) gives two pages, at a third and two thirds of its length: each is rendered
at --scan-dpi like an office scanner and saved as one image-only PDF (Pillow), which
provrag parses with OCR. Accuracy is the share of each page's own text-layer words (with
their counts) found in its OCR text; speed is wall seconds per page and tesseract's CPU
seconds per page (the load of the machine does not change the latter). Prints one line per
measure and writes bench/results/ocr_quality-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import re
import resource
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from provrag.index import ocr  # noqa: E402
from provrag.index.pdf import clean_page_text, parse_pdf  # noqa: E402


def words(text: str) -> Counter:
    return Counter(re.findall(r"[a-z0-9]+", text.lower()))


def main() -> None:
    import pypdfium2 as pdfium

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manuals", default=os.environ.get("PROVRAG_MANUALS"), help="folder of the Debian manuals")
    ap.add_argument("--scan-dpi", type=int, default=200)
    args = ap.parse_args()
    if not args.manuals or ocr.tesseract() is None:
        sys.exit("needs --manuals DIR (or $PROVRAG_MANUALS) and tesseract (make ocr)")
    refs, images = [], []
    for f in sorted(Path(args.manuals).glob("*.pdf")):
        pdf = pdfium.PdfDocument(f)
        for k in sorted({len(pdf) // 3, 2 * len(pdf) // 3}):
            refs.append((f.name, k + 1, clean_page_text(pdf[k].get_textpage().get_text_range())))
            images.append(pdf[k].render(scale=args.scan_dpi / 72, grayscale=True).to_pil())
        pdf.close()
    scan = io.BytesIO()
    images[0].save(scan, "PDF", resolution=args.scan_dpi, save_all=True, append_images=images[1:])
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = parse_pdf(scan.getvalue(), "pypdfium2")
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    per_page = []
    for (name, page, ref), got in zip(refs, out["pages"]):
        want, have = words(ref), words(got)
        per_page.append({"file": name, "page": page, "words": sum(want.values()),
                         "found": sum(min(c, have[w]) for w, c in want.items())})
    n = len(per_page)
    found, total = sum(p["found"] for p in per_page), sum(p["words"] for p in per_page)
    result = {"date": dt.date.today().isoformat(), "engine": ocr.engine(), "scan_dpi": args.scan_dpi,
              "parallel_pages": ocr.PARALLEL_PAGES, "pages": n, "ocr_pages": len(out["ocr_pages"]),
              "seconds_per_page": round(wall / n, 3),
              "tesseract_cpu_seconds_per_page": round((cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / n, 3),
              "word_recall": round(found / total, 4), "worst_page_recall": round(min(p["found"] / p["words"] for p in per_page), 4),
              "per_page": per_page}
    for k, v in result.items():
        if k != "per_page":
            print(f"{k:32} {v}")
    dest = Path(__file__).parent / "results" / f"ocr_quality-{result['date']}.json"
    dest.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
