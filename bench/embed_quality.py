"""Which embedder should provrag use by default? Retrieval quality and speed on SQuAD-over-PDF.

    .venv/bin/python bench/embed_quality.py [--granularity unit page] [--limit N]

Data: ../shared/eval/dev/squad — 24 Wikipedia articles rendered to PDF (227 pages) and 300
questions with the gold paragraph's page(s). Every question searches the whole corpus.

Units are made by provrag itself: the PDFs go through `provrag.index.load.load_folder` (pypdfium2
backend) and then either `provrag.index.chunk.chunk_text` with config.toml's [chunk] size (300
cl100k tokens, overlap 40) — "unit" — or one unit per page — "page". Pages are ranked by
their best unit's score; a question scores a hit@k when a gold page is among the top k pages.

Methods (scores over all units of the corpus):
- bm25:       Okapi BM25 (k1 1.2, b 0.75) over provrag.store.terms.terms_of — the same terms and
              formula as provrag's SQL BM25 (computed here in numpy for speed);
- tfidf:      provrag.embeddings.tfidf.TfidfEmbedder (TF-IDF + LSA, 256 dims), fitted on the units;
- minilm:     provrag.embeddings.minilm.MiniLMEmbedder, cosine; input truncated at 256 word pieces
              exactly as sentence-transformers does;
- minilm-win: MiniLM over ≤254-piece windows of each unit (stride 192), a unit scoring its
              best window — what truncation loses on long units;
- hybrids:    w · bm25/max(bm25) + (1 − w) · max(cos, 0)/max(cos), provrag.query.retrieve's fusion,
              w = [search] lexical_weight (0.5), plus a sweep of w for MiniLM.

Speed: units embedded per second (fit + embed for tfidf; index build for bm25) and the
per-question query time, measured in this process on this machine (2 cores, shared).

Prints a table and writes bench/results/embed_quality-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
SQUAD = SHARED / "eval" / "dev" / "squad"
KS = (1, 3, 5)
WEIGHTS = (0.3, 0.5, 0.7)


# ---- data -----------------------------------------------------------------------------------

def load_pages(cfg: dict) -> list[dict]:
    """[{document, text, pages: [(page_no, start, end)]}] through provrag's own loader."""
    from provrag.index.load import load_folder

    docs = load_folder(SQUAD / "corpus", cfg)
    out = []
    for d in docs:
        if d.status != "ok" or not d.pages:
            print(f"warning: {d.path} not loaded: {d.error}", file=sys.stderr)
            continue
        out.append({"document": d.path, "text": d.text, "pages": d.pages})
    return out


def make_units(docs: list[dict], granularity: str, cfg: dict) -> list[dict]:
    """Units with text, document and the pages they lie on."""
    units = []
    for d in docs:
        if granularity == "page":
            for page_no, s, e in d["pages"]:
                units.append({"document": d["document"], "text": d["text"][s:e], "pages": [page_no]})
        else:
            from provrag.index.chunk import chunk_text

            for u in chunk_text(d["text"], d["pages"], cfg.chunk.size_tokens, cfg.chunk.overlap_tokens):
                units.append({"document": d["document"], "text": u["text"] if "text" in u else d["text"][u["char_start"]:u["char_end"]],
                              "pages": list(range(int(u["page_start"]), int(u["page_end"]) + 1))})
    return units


# ---- scorers ----------------------------------------------------------------------------------

class BM25:
    """Okapi BM25 over provrag.store.terms.terms_of, as provrag/store/terms.py's SQL computes it.

    Re-done in numpy (a sparse term-unit matrix) because the SQL needs an index folder and
    DuckDB round trips per question; the formula and terms are the same.
    """

    def __init__(self, texts: list[str]):
        from scipy.sparse import csr_matrix

        from provrag.store.terms import B, K1, terms_of

        self.terms_of = terms_of
        self.vocab: dict[str, int] = {}
        rows, cols, tfs, dls = [], [], [], []
        for i, t in enumerate(texts):
            c = Counter(terms_of(t))
            dls.append(sum(c.values()))
            for term, tf in c.items():
                rows.append(i)
                cols.append(self.vocab.setdefault(term, len(self.vocab)))
                tfs.append(tf)
        n = len(texts)
        dl = np.array(dls, np.float64)
        avgdl = dl.mean() if n and dl.sum() else 1.0
        tf = np.array(tfs, np.float64)
        r = np.array(rows, np.int64)
        sat = tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl[r] / avgdl))
        m = csr_matrix((sat, (r, np.array(cols, np.int64))), shape=(n, len(self.vocab)))
        df = np.bincount(np.array(cols, np.int64), minlength=len(self.vocab))
        self.idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        self.m = m.tocsc()

    def scores(self, queries: list[str]) -> np.ndarray:
        q = np.zeros((len(queries), len(self.vocab)), np.float64)
        for i, text in enumerate(queries):
            for term, c in Counter(self.terms_of(text)).items():
                j = self.vocab.get(term)
                if j is not None:
                    q[i, j] += c * self.idf[j]
        return np.asarray((self.m @ q.T).T, dtype=np.float64)


def tfidf_embedder(cfg: dict):
    try:
        from provrag.embeddings.tfidf import TfidfEmbedder

        return TfidfEmbedder(cfg.embeddings.lsa_dimensions)
    except ImportError:  # the lead's module is missing: a plain sklearn baseline
        return _SklearnTfidf(cfg.embeddings.lsa_dimensions)


class _SklearnTfidf:
    name = "tfidf-sklearn"

    def __init__(self, dims: int):
        self.dims = dims

    def fit(self, texts):
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vec = TfidfVectorizer(sublinear_tf=True, stop_words="english", ngram_range=(1, 2), min_df=2)
        x = self.vec.fit_transform(texts)
        self.svd = TruncatedSVD(min(self.dims, x.shape[1] - 1), random_state=0).fit(x)
        return self

    def embed(self, texts):
        v = self.svd.transform(self.vec.transform(texts)).astype(np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def windows(emb, texts: list[str], size: int = 254, stride: int = 192) -> tuple[list[str], list[int]]:
    """Split texts into ≤`size`-piece windows (char spans from the tokenizer's offsets)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(emb.folder / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    out, owner = [], []
    for i, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        offs = enc.offsets
        if len(offs) <= size:
            out.append(texts[i])
            owner.append(i)
            continue
        start = 0
        while True:
            end = min(start + size, len(offs))
            out.append(texts[i][offs[start][0]:offs[end - 1][1]])
            owner.append(i)
            if end == len(offs):
                break
            start += stride
    return out, owner


def fuse(lex: np.ndarray, cos: np.ndarray, w: float) -> np.ndarray:
    """provrag.query.retrieve.fuse over every unit: w·bm25/max + (1−w)·max(cos,0)/max."""
    mb = lex.max(axis=1, keepdims=True)
    den = np.maximum(cos, 0.0)
    md = den.max(axis=1, keepdims=True)
    return w * np.divide(lex, mb, out=np.zeros_like(lex), where=mb > 0) + \
        (1 - w) * np.divide(den, md, out=np.zeros_like(den), where=md > 0)


# ---- evaluation ---------------------------------------------------------------------------------

def evaluate(scores: np.ndarray, units: list[dict], questions: list[dict]) -> dict:
    """hit@k of gold pages (pages ranked by their best unit) and MRR of the first gold page."""
    keys = sorted({(u["document"], p) for u in units for p in u["pages"]})
    index = {k: i for i, k in enumerate(keys)}
    page_scores = np.full((scores.shape[0], len(keys)), -np.inf)
    for j, u in enumerate(units):
        for p in u["pages"]:
            c = index[(u["document"], p)]
            page_scores[:, c] = np.maximum(page_scores[:, c], scores[:, j])
    hits = {k: 0 for k in KS}
    rr = 0.0
    for qi, q in enumerate(questions):
        gold = {index[(q["document"], p)] for p in q["pages"] if (q["document"], p) in index}
        order = np.argsort(-page_scores[qi], kind="stable")
        ranks = [r for r, c in enumerate(order[:50]) if c in gold]
        if ranks:
            rr += 1.0 / (ranks[0] + 1)
            for k in KS:
                hits[k] += ranks[0] < k
    n = max(len(questions), 1)
    out = {f"hit@{k}": round(hits[k] / n, 4) for k in KS}
    out["mrr"] = round(rr / n, 4)
    return out


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t0


def run(granularity: str, docs: list[dict], questions: list[dict], cfg: dict, minilm, with_windows: bool = True) -> dict:
    units = make_units(docs, granularity, cfg)
    texts = [u["text"] for u in units]
    qs = [q["question"] for q in questions]
    n = len(texts)
    print(f"\n[{granularity}] {n} units, {len(qs)} questions", file=sys.stderr)
    res: dict = {"units": n, "methods": {}, "speed": {}}
    scores: dict[str, np.ndarray] = {}

    bm, t = timed(lambda: BM25(texts))
    scores["bm25"], tq = timed(lambda: bm.scores(qs))
    res["speed"]["bm25"] = {"units_per_s": round(n / t, 1), "seconds": round(t, 2), "query_ms": round(1000 * tq / len(qs), 2)}

    tf = tfidf_embedder(cfg)
    tv, t = timed(lambda: tf.fit(texts).embed(texts))
    qv, tq = timed(lambda: tf.embed(qs))
    scores["tfidf"] = qv.astype(np.float64) @ tv.T.astype(np.float64)
    res["speed"]["tfidf"] = {"units_per_s": round(n / t, 1), "seconds": round(t, 2), "query_ms": round(1000 * tq / len(qs), 2)}

    if minilm is not None:
        mv, t = timed(lambda: minilm.embed(texts))
        qv, tq = timed(lambda: minilm.embed(qs))
        pieces = minilm.token_counts(texts)
        scores["minilm"] = qv.astype(np.float64) @ mv.T.astype(np.float64)
        res["speed"]["minilm"] = {"units_per_s": round(n / t, 1), "seconds": round(t, 2), "query_ms": round(1000 * tq / len(qs), 2),
                                  "pieces_per_s": round(sum(pieces) / t), "truncated_units": int(sum(c >= 256 for c in pieces))}
    if minilm is not None and with_windows:
        wtexts, owner = windows(minilm, texts)
        wv, t = timed(lambda: minilm.embed(wtexts))
        ws = qv.astype(np.float64) @ wv.T.astype(np.float64)
        best = np.full((len(qs), n), -np.inf)
        for j, o in enumerate(owner):
            best[:, o] = np.maximum(best[:, o], ws[:, j])
        scores["minilm-win"] = best
        res["speed"]["minilm-win"] = {"units_per_s": round(n / t, 1), "seconds": round(t, 2), "windows": len(wtexts),
                                      "pieces_per_s": round(sum(minilm.token_counts(wtexts)) / t)}

    dense = [m for m in ("tfidf", "minilm", "minilm-win") if m in scores]
    for m in dense:
        for w in WEIGHTS:
            scores[f"bm25+{m} w={w}"] = fuse(scores["bm25"], scores[m], w)
    if "minilm" in scores:
        both = 0.5 * np.maximum(scores["tfidf"], 0) / np.maximum(scores["tfidf"].max(1, keepdims=True), 1e-12) + \
            0.5 * np.maximum(scores["minilm"], 0) / np.maximum(scores["minilm"].max(1, keepdims=True), 1e-12)
        scores["tfidf+minilm"] = both
        scores["bm25+tfidf+minilm"] = fuse(scores["bm25"], both, 0.5)

    for name, s in scores.items():
        res["methods"][name] = evaluate(s, units, questions)
    return res


def table(results: dict) -> str:
    lines = []
    for gran, r in results.items():
        lines.append(f"\n{gran}: {r['units']} units over 227 pages; pages ranked by best unit; gold page in top k")
        lines.append(f"{'method':<28}{'hit@1':>8}{'hit@3':>8}{'hit@5':>8}{'MRR':>8}")
        for m, v in sorted(r["methods"].items(), key=lambda kv: -kv[1]["hit@5"]):
            lines.append(f"{m:<28}{v['hit@1']:>8.3f}{v['hit@3']:>8.3f}{v['hit@5']:>8.3f}{v['mrr']:>8.3f}")
        lines.append(f"{'speed':<28}{'units/s':>10}{'seconds':>10}{'query ms':>10}")
        for m, v in r["speed"].items():
            q = v.get("query_ms")
            lines.append(f"{m:<28}{v['units_per_s']:>10.1f}{v['seconds']:>10.2f}{(q if q is not None else float('nan')):>10.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--granularity", nargs="+", choices=("unit", "page"), default=["unit", "page"])
    ap.add_argument("--limit", type=int, default=0, help="first N questions only (quick runs)")
    ap.add_argument("--no-minilm", action="store_true", help="skip MiniLM (e.g. the package is not installed)")
    ap.add_argument("--no-windows", action="store_true", help="skip the windowed MiniLM variant (halves the run time)")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default bench/results/embed_quality-<date>.json)")
    args = ap.parse_args(argv)
    if not SQUAD.is_dir():
        print(f"error: {SQUAD} not found", file=sys.stderr)
        return 2

    from provrag.config import load_config

    cfg = load_config(None)
    questions = [json.loads(l) for l in (SQUAD / "questions.jsonl").read_text().splitlines() if l.strip()]
    if args.limit:
        questions = questions[:args.limit]
    minilm, load_s = None, None
    if not args.no_minilm:
        from provrag.embeddings.minilm import MiniLMEmbedder, MiniLMUnavailable

        try:
            minilm, load_s = timed(lambda: MiniLMEmbedder(cfg.embeddings.batch_size))
        except MiniLMUnavailable as e:
            print(f"warning: {e}; MiniLM skipped", file=sys.stderr)
    docs, load_docs_s = timed(lambda: load_pages(cfg))
    load_start = os.getloadavg()
    results = {g: run(g, docs, questions, cfg, minilm, not args.no_windows) for g in args.granularity}
    print(table(results))
    out = args.out or ROOT / "bench" / "results" / f"embed_quality-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "bench": "embed_quality", "date": dt.datetime.now().isoformat(timespec="seconds"),
        "data": str(SQUAD.relative_to(SHARED.parent)) if SQUAD.is_relative_to(SHARED.parent) else str(SQUAD),
        "questions": len(questions), "documents": len(docs), "gold": "questions.jsonl pages (gold paragraph's pages)",
        "chunk": cfg.to_dict()["chunk"], "embeddings": cfg.to_dict()["embeddings"], "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                                                  "load_avg_at_start": load_start,
                                                                  "load_avg_at_end": os.getloadavg()},
        "minilm_load_s": round(load_s, 2) if load_s is not None else None, "pdf_load_s": round(load_docs_s, 2),
        "results": results,
    }
    out.write_text(json.dumps(doc, indent=1))
    print(f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
