"""The learned reader's answer decision, measured in one process on check_qa.py's folders (dev sets).

    .venv/bin/python bench/reader_dev.py DIR [DIR …] [--index-root SCRATCH] [--limit N] [--dump FILE.jsonl] [--ask]

Each DIR has check_qa.py's layout (corpus/, questions.jsonl, unanswerable.jsonl; bench/qa_sets.py
builds them: squad-half-A/B, manuals). Its corpus is indexed once under --index-root (reused
when there). For every question, basic search's context is taken exactly as ask takes it
(query/basic_search.py, with a stand-in engine that keeps the context), and read twice:

- features: the hand-set path — the coverage gate (query/answerable.py) and the lexical +
  MiniLM selection with its focus rules (answer/selection.py, focus.py);
- learned:  the reader's path (answer/reading.py): passage re-ranking (reciprocal rank fusion,
  rank_passages), candidates, P(answers) with each pair read alone — the features read() weighs,
  its gate (`gate`: the coverage ask passes it) included.
Per candidate the dump keeps the reader's probability, the passage's, the lexical score, and
whether the sentence holds a gold answer string and stands on a gold page, so thresholds and
combinations can be compared without re-reading. Printed per set and path: gold page first,
answer holds gold, false abstentions, unanswerable abstained — check_qa.py's figures, computed
in-process for the lead sentence (check_qa.py itself measures the full ask through the CLI).

--ask: each question is asked as ask asks it (pipelines/ask.run_ask: its route, local search
for most, and its wider retries), and every reading it makes is dumped, one row per attempt,
with the features read() weighed (ReadCapture) — what bench/fit_reader.py should be fitted on.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class KeepContext:
    """A stand-in engine for basic_search: keeps the context it is given, answers nothing."""

    name = "offline"
    reads = True

    def __init__(self):
        self.context: list[dict] = []

    def answer(self, question, context, terms=None):
        from provrag.engines.base import EngineAnswer

        self.context, self.terms = context, terms
        return EngineAnswer("", abstained=True)


def norm(s: str) -> str:
    return " ".join("".join(ch.lower() if ch.isalnum() else " " for ch in s).split())


def read_question(reader, q: dict, cfg, r, with_features: bool = True) -> dict:
    from provrag.engines.offline.answer.focus import focus
    from provrag.engines.offline.answer.reading import candidates, rank_passages
    from provrag.engines.offline.answer.scoring import rank_sentences
    from provrag.engines.offline.answer.selection import minilm_meaning, select
    from provrag.query.answerable import assess
    from provrag.query.basic_search import basic_search
    from provrag.query.trace import Trace
    from provrag.store.units import fetch_units

    question = q["question"]
    eng = KeepContext()
    trace = Trace("ask", question)
    basic_search(reader, question, cfg, eng, trace)
    ctx, terms = eng.context, eng.terms
    rows = fetch_units(reader, [c["text_unit_id"] for c in ctx])
    gold_doc, gold_pages, answers = q.get("document"), set(q.get("pages") or []), [norm(a) for a in q.get("answers") or []]

    def on_gold(ri: int) -> bool:
        u = rows.get(ctx[ri]["text_unit_id"])
        if u is None or gold_doc is None or Path(str(u.path)).name != gold_doc or u.page_start is None:
            return False
        return bool(set(range(int(u.page_start), int(u.page_end or u.page_start) + 1)) & gold_pages)

    def holds(text: str) -> bool:
        t = norm(text)
        return any(a and a in t for a in answers)

    idf, qterms = (terms.idf or None), (list(terms.terms) or None)
    bm25 = {}
    for s in trace.data["stages"]:
        if s["name"] == "exploration":
            bm25 = s["data"]["retrieval"]["channels"].get("bm25") or {}
    t0 = time.perf_counter()
    lexical = assess(question, [c["text"] for c in ctx], idf or {}, int(bm25.get("n_units") or 0),
                     bm25.get("spelling") or {}, semantic=False)
    found, old = lexical, []
    if with_features:  # the hand-set path whole: MiniLM's semantic coverage and reranking (slow)
        found = assess(question, [c["text"] for c in ctx], idf or {}, int(bm25.get("n_units") or 0),
                       bm25.get("spelling") or {})
        n = int(cfg.search.answer_sentences)
        old = focus(question, select(question, ctx, n, idf, qterms=qterms, cfg=cfg), ctx, idf or {}, n) if ctx else []
    t_old = time.perf_counter() - t0
    t0 = time.perf_counter()
    order, pscores = rank_passages(r, question, ctx, int(cfg.search.reader_passages))
    ranked = rank_sentences(question, ctx, idf, qterms=qterms) if ctx else []
    cands = candidates(ranked, order, int(cfg.search.reader_sentences))
    probs = r.answer_probs(question, [c["sentence"] for c in cands], contexts=[c.get("paragraph") or c["sentence"]
                                                                                for c in cands]) if cands else []
    s = cfg.search
    meaning = minilm_meaning(question, cands, s.rerank_weight, s.rerank_maxsim_weight,
                             s.rerank_paragraph_weight) if cands else []
    t_new = time.perf_counter() - t0
    rank_of = {ri: k for k, ri in enumerate(order)}
    return {"id": q.get("id"), "answerable": gold_doc is not None, "question": question,
            "coverage_confidence": found.confidence if with_features else None,
            # what ask passes the reader as its gate (query/context.engine_answer: None when the
            # question has no content word the index could hold)
            "gate": terms.coverage,
            "lexical_coverage": lexical.lexical, "lexical_confidence": lexical.confidence, "ms_features": round(t_old * 1000), "ms_learned": round(t_new * 1000),
            "features_lead": ({"on_gold": on_gold(old[0]["record"]), "holds": holds(" ".join(p["sentence"] for p in old)),
                               "sentence": old[0]["sentence"][:200]} if old else None),
            "candidates": [{"prob": round(float(p), 4), "lexical": c["score"], "coverage": c.get("coverage", 0.0),
                            "meaning": round(m, 4), "record": c["record"],
                            "passage_rank": rank_of.get(c["record"]),
                            "passage_prob": None if pscores is None or pscores[c["record"]] is None else round(pscores[c["record"]], 4),
                            "retrieval_rank": c["record"], "on_gold": on_gold(c["record"]), "holds": holds(c["sentence"]),
                            "sentence": c["sentence"][:200]} for c, p, m in zip(cands, probs, meaning)]}


class ReadCapture:
    """Every reading a live ask makes (answer/reading.read, once per attempt: local → basic → wide
    → section, query/escalate.py), with each candidate's features exactly as read() weighed them.
    Why: most questions are answered on the local route, whose passages basic search (the path
    read_question replays) never sees; a refit on basic search's readings alone would be fitted
    on contexts ask mostly does not read. Used as `with ReadCapture() as cap: run_ask(…)`; then
    `cap.rows(index_reader, q)` gives one dump row per attempt."""

    def __enter__(self):
        from provrag.engines.offline.answer import reading

        self.module, self.reads, self.last = reading, [], []
        self.originals = (reading.read, reading.candidates)
        read, candidates = self.originals

        def keep_candidates(*args, **kwargs):
            self.last = candidates(*args, **kwargs)
            return self.last

        def keep_read(question, context, *args, **kwargs):
            self.last = []
            out = read(question, context, *args, **kwargs)
            self.reads.append((context, self.last))   # read() set each candidate's features in place
            return out

        reading.read, reading.candidates = keep_read, keep_candidates
        return self

    def __exit__(self, *exc):
        self.module.read, self.module.candidates = self.originals

    def rows(self, index_reader, q: dict) -> list[dict]:
        from provrag.store.units import fetch_units

        gold_doc, gold_pages = q.get("document"), set(q.get("pages") or [])
        answers = [norm(a) for a in q.get("answers") or []]
        out = []
        for attempt, (ctx, cands) in enumerate(self.reads):
            units = fetch_units(index_reader, [c["text_unit_id"] for c in ctx])

            def on_gold(ri: int) -> bool:
                u = units.get(ctx[ri]["text_unit_id"])
                if u is None or gold_doc is None or Path(str(u.path)).name != gold_doc or u.page_start is None:
                    return False
                return bool(set(range(int(u.page_start), int(u.page_end or u.page_start) + 1)) & gold_pages)

            out.append({"id": q.get("id"), "answerable": gold_doc is not None, "question": q["question"],
                        "attempt": attempt,
                        "candidates": [{"prob": c["reader_prob"], "lexical": c["lexical_score"],
                                        "coverage": c.get("coverage", 0.0), "meaning": c["features"]["meaning"],
                                        "passage_prob": c["passage_prob"], "record": c["record"],
                                        "features": c["features"], "on_gold": on_gold(c["record"]),
                                        "holds": any(a and a in norm(c["sentence"]) for a in answers),
                                        "sentence": c["sentence"][:200]} for c in cands if "features" in c]})
        self.reads = []
        return out


def ask_dump(questions: list[dict], idx: Path, cfg, dump, name: str) -> None:
    """Every reading of the live ask of each question (ReadCapture), one dump row per attempt."""
    from provrag.pipelines.ask import run_ask
    from provrag.store.reader import open_index

    reader, n = open_index(idx), 0
    for q in questions:
        with ReadCapture() as cap:
            run_ask(q["question"], idx, cfg, save=False, reader=reader)
        for row in cap.rows(reader, q):
            row["set"] = name
            n += 1
            if dump:
                dump.write(json.dumps(row) + "\n")
    print(f"{name}: {len(questions)} questions asked, {n} readings dumped", flush=True)


def summary(rows: list[dict], threshold: float, gate: float) -> dict:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]

    def learned_lead(r):
        c = sorted(r["candidates"], key=lambda c: (-c["prob"], c["passage_rank"] if c["passage_rank"] is not None else 99))
        return c[0] if c and c[0]["prob"] >= threshold else None

    def features_lead(r):
        return r["features_lead"] if (r["coverage_confidence"] or 0.0) >= gate else None

    out = {}
    for name, lead in (("features", features_lead), ("learned", learned_lead)):
        leads = [lead(r) for r in ans]
        out[name] = {"gold_first": sum(bool(x and x["on_gold"]) for x in leads) / max(len(ans), 1),
                     "holds": sum(bool(x and x["holds"]) for x in leads) / max(len(ans), 1),
                     "false_abstain": sum(x is None for x in leads) / max(len(ans), 1),
                     "abstained": sum(lead(r) is None for r in una) / max(len(una), 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--index-root", type=Path, default=Path("/tmp/provrag-reader-dev"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--no-features", action="store_true", help="skip the hand-set path's MiniLM passes (faster)")
    ap.add_argument("--ask", action="store_true", help="dump every reading of the live ask, per attempt (ReadCapture)")
    a = ap.parse_args()

    from provrag.config import load_config
    from provrag.engines.offline.learned import reader as learned_reader
    from provrag.pipelines.index import run_index
    from provrag.store.reader import reading

    cfg = load_config()
    r = learned_reader(cfg, "answer")
    if r is None:
        raise SystemExit("no learned reader (set PROVRAG_READER_DIR)")
    threshold = a.threshold if a.threshold is not None else float(cfg.search.answer_min_prob)
    dump = open(a.dump, "w") if a.dump else None
    for d in a.dirs:
        idx = a.index_root / d.name
        if not (idx / "manifest.json").exists():
            run_index(d / "corpus", idx, cfg)
        load = lambda n: [json.loads(x) for x in (d / n).read_text().splitlines() if x.strip()] if (d / n).exists() else []
        qs = load("questions.jsonl")
        us = [{"id": u["id"], "question": u["question"]} for u in load("unanswerable.jsonl")]
        if a.limit:
            qs, us = qs[:a.limit], us[:a.limit]
        rows = []
        if a.ask:
            ask_dump(qs + us, idx, cfg, dump, d.name)
            continue
        with reading(idx, None) as reader:
            for q in qs + us:
                row = read_question(reader, q, cfg, r, not a.no_features)
                row["set"] = d.name
                rows.append(row)
                if dump:
                    dump.write(json.dumps(row) + "\n")
                    dump.flush()
        s = summary(rows, threshold, float(cfg.search.abstain_below))
        ms_f = sum(x["ms_features"] for x in rows) / max(len(rows), 1)
        ms_l = sum(x["ms_learned"] for x in rows) / max(len(rows), 1)
        print(f"{d.name}: {len(qs)} answerable, {len(us)} unanswerable; mean ms features {ms_f:.0f}, learned {ms_l:.0f}")
        for name, v in s.items():
            print(f"  {name:9} gold first {v['gold_first']:.1%}  holds {v['holds']:.1%}  false abstain "
                  f"{v['false_abstain']:.1%}  unanswerable abstained {v['abstained']:.1%}", flush=True)


if __name__ == "__main__":
    main()
