"""Quality of provrag on an eval folder, one table (issue #7): `make eval [EVAL=path]`.

    .venv/bin/python bench/eval.py [--eval ../shared/eval/dev] [--dulce ../shared/fixtures/graphrag-dulce]
                                   [--only ask,verify,dulce,qa] [--ask-limit N] [--vitaminc N] [--halueval N]
                                   [--manuals DIR]

The eval folder has the layout of ../shared/eval/dev (squad/, vitaminc/, halueval/):

- ask:    bench/ask_quality.py --eval DIR — per search method, the share of SQuAD questions
          whose first source is a gold page (top-1), a gold page among the first 5 sources
          (top-5), and whose answer contains a gold answer string;
- verify: bench/verify_quality.py --split DIR — balanced accuracy of `verify` on VitaminC
          (supported vs not) and HaluEval QA (right vs hallucinated answers);
- dulce:  the real GraphRAG answers of the Dulce fixture through `provrag resolve --json`
          (what ../shared/checks/check_resolve.py checks): of the ids they cite, the share the
          parser finds, the share of ids present in the index that resolve to text with a
          document (coverage), the share of absent ids listed unresolved, and of the
          sentences citing an id the index holds, the share given a source; plus check_dulce.py's two figures: entity recall
          of provrag's offline graph against GraphRAG's LLM graph of the same novella, and the
          v1 answers' (wrongly) cited claims flagged as not supported by their citations;
- qa:     honest answers (issue #15): bench/qa_sets.py builds check_qa.py's folders — SQuAD
          with half the articles indexed (fold A and fold B: the other half's questions are
          unanswerable), the Debian manuals (eval/manuals, dev; --manuals DIR or
          $PROVRAG_MANUALS, else fetched), eval/small and eval/texlive (dev; their documents
          fetched once by bench/eval_docs.py) — never eval/heldout — in a temp folder,
          and ../shared/checks/check_qa.py measures each: gold page first, false abstentions,
          abstention on unanswerable questions, claims' balanced accuracy.

Each part runs in a child process (or the CLI); traces go to a temp XDG_DATA_HOME. Prints one
table and writes bench/results/eval-<date>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
PARTS = ("ask", "verify", "dulce", "qa")
TABLE = {"Reports": ("community_reports", "community"), "Entities": ("entities", "human_readable_id"),
         "Relationships": ("relationships", "human_readable_id"), "Claims": ("covariates", "human_readable_id"),
         "Sources": ("text_units", "human_readable_id")}


def _run(cmd: list[str], env: dict, timeout: float, **kw) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout, **kw)
    return p, round(time.perf_counter() - t0, 1)


def _tail(text: str, n: int = 3) -> str:
    return " | ".join([x for x in text.splitlines() if x.strip()][-n:])[-400:]


# ---- ask ---------------------------------------------------------------------------------------

ASK_ROW = re.compile(r"^(\w+)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(\d+)\s+(\{.*\})\s*$")


def part_ask(a, env) -> dict:
    cmd = [sys.executable, str(BENCH / "ask_quality.py"), "--eval", str(a.eval), "--methods", a.methods]
    if a.ask_limit:
        cmd += ["--limit", str(a.ask_limit)]
    p, secs = _run(cmd, env, a.timeout)
    out = {"seconds": secs, "methods": {}}
    m = re.search(r"^(\d+) questions", p.stdout, flags=re.M)
    out["questions"] = int(m.group(1)) if m else None
    for line in p.stdout.splitlines():
        m = ASK_ROW.match(line.strip())
        if m:
            out["methods"][m.group(1)] = {"top1_page": float(m.group(2)) / 100, "top5_page": float(m.group(3)) / 100,
                                          "answer_contains_gold": float(m.group(4)) / 100,
                                          "median_words": int(m.group(5)), "ms_per_question": int(m.group(6)),
                                          "chosen": m.group(7)}
    if p.returncode != 0 or not out["methods"]:
        out["unavailable"] = f"exit {p.returncode}: {_tail(p.stderr or p.stdout)}"
    return out


# ---- verify ------------------------------------------------------------------------------------

def part_verify(a, env) -> dict:
    cmd = [sys.executable, str(BENCH / "verify_quality.py"), "--split", str(a.eval), "--no-write"]
    if a.vitaminc:
        cmd += ["--vitaminc", str(a.vitaminc)]
    if a.halueval:
        cmd += ["--halueval", str(a.halueval)]
    p, secs = _run(cmd, env, a.timeout)
    out = {"seconds": secs}
    m = re.search(r"VitaminC (\d+) claims: balanced accuracy ([\d.]+) \(3-way accuracy ([\d.]+)\)", p.stdout)
    if m:
        out["vitaminc"] = {"claims": int(m.group(1)), "balanced_accuracy": float(m.group(2)), "accuracy_3way": float(m.group(3))}
    m = re.search(r"HaluEval (\d+) cases: balanced accuracy ([\d.]+) \(right answers supported (\d+)%, "
                  r"hallucinated not supported (\d+)%\)", p.stdout)
    if m:
        out["halueval"] = {"cases": int(m.group(1)), "balanced_accuracy": float(m.group(2)),
                           "right_judged_supported": int(m.group(3)) / 100,
                           "hallucinated_judged_not_supported": int(m.group(4)) / 100}
    if p.returncode != 0 or "vitaminc" not in out or "halueval" not in out:
        out["unavailable"] = f"exit {p.returncode}: {_tail(p.stderr or p.stdout)}"
    return out


# ---- dulce -------------------------------------------------------------------------------------

def _cited(answer: str) -> set[tuple[str, int]]:
    """check_resolve.py's reading of the ids an answer cites (independent of provrag's parser)."""
    pairs = set()
    for block in re.findall(r"\[Data:(.*?)\]", answer, flags=re.S):
        for kind, ids in re.findall(r"(\w+)\s*\(([^)]*)\)", block):
            kind = kind.capitalize()
            for tok in ids.split(","):
                tok = tok.strip().rstrip(".").strip()
                if tok.isdigit() and kind in TABLE:
                    pairs.add((kind, int(tok)))
    return pairs


def _table_file(idx: Path, name: str) -> Path | None:
    for cand in (f"{name}.parquet", f"create_final_{name}.parquet"):
        if (idx / cand).exists():
            return idx / cand
    return None


def _norm(t: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", t.lower()).split())


def part_dulce(a, env) -> dict:
    import duckdb

    provrag = str(Path(sys.executable).parent / "provrag")
    fx = a.dulce
    con = duckdb.connect()
    answers, t0 = [], time.perf_counter()
    tot = {"cited": 0, "parsed": 0, "present": 0, "resolved": 0, "absent": 0, "absent_listed": 0,
           "sentences": 0, "sentences_with_source": 0, "sources": 0, "sources_with_document": 0}
    for f in sorted(fx.glob("index-*/answers/*.json")):
        idx = f.parent.parent
        answer = json.loads(f.read_text())["answer"]
        want = _cited(answer)
        absent = set()
        for kind, i in want:
            t, col = TABLE[kind]
            tf = _table_file(idx, t)
            if tf is None or not con.execute(f"select count(*) from read_parquet('{tf}') where {col} = ?", [i]).fetchall()[0][0]:
                absent.add((kind, i))
        p, _ = _run([provrag, "resolve", "--index", str(idx), "--json", "-"], env, 300, input=answer)
        row = {"answer": f"{idx.name}/{f.name}", "cited": len(want), "absent": len(absent)}
        if p.returncode != 0:
            row["error"] = f"exit {p.returncode}: {_tail(p.stderr)}"
            answers.append(row)
            tot["cited"] += len(want)
            continue
        out = json.loads(p.stdout)
        got = {(str(c.get("kind", "")).capitalize(), int(i)) for c in out.get("citations", []) for i in c.get("ids", [])}
        unres = {(str(u.get("kind", "")).capitalize(), int(u["id"])) for u in out.get("unresolved", [])}
        dead = {(str(u.get("kind", "")).capitalize(), int(u["id"])) for u in out.get("dead_ends", [])}
        present = want - absent
        resolved = present - unres - dead
        # cited sentences with at least one id the index holds (a sentence citing only absent ids has no source)
        cited_sents = {c.get("sentence_index") for c in out.get("citations", [])
                       if any((str(c.get("kind", "")).capitalize(), int(i)) not in unres for i in c.get("ids", []))}
        srcs = out.get("sources", [])
        with_src = {s.get("sentence_index") for s in srcs if s.get("document")}
        row.update({"parsed": len(want & got), "present": len(present), "resolved": len(resolved),
                    "absent_listed": len(absent & unres), "dead_ends": len(dead), "sentences": len(cited_sents),
                    "sentences_with_source": len(cited_sents & with_src), "sources": len(srcs),
                    "sources_with_document": sum(bool(s.get("document")) for s in srcs)})
        answers.append(row)
        for k in tot:
            tot[k] += row.get(k, 0)
    res = {"answers": answers, "totals": tot, "resolve_seconds": round(time.perf_counter() - t0, 1)}

    def share(x, y):
        return round(x / y, 4) if y else None
    res["parsed_share"] = share(tot["parsed"], tot["cited"])
    res["coverage"] = share(tot["resolved"], tot["present"])
    res["absent_listed_share"] = share(tot["absent_listed"], tot["absent"])
    res["sentences_with_source_share"] = share(tot["sentences_with_source"], tot["sentences"])
    res["sources_with_document_share"] = share(tot["sources_with_document"], tot["sources"])

    # check_dulce.py: entity recall of an offline index of the novella; v1's wrongly cited claims
    w = Path(tempfile.mkdtemp(prefix="provrag-eval-dulce-"))
    try:
        (w / "docs").mkdir()
        src = next((fx / "source").glob("*.md"))
        shutil.copy(src, w / "docs" / "operation-dulce.md")
        p, secs = _run([provrag, "index", str(w / "docs"), "--out", str(w / "idx")], env, 900)
        if p.returncode != 0:
            res["entity_recall_error"] = _tail(p.stderr)
        else:
            ours = {_norm(t) for (t,) in con.execute(f"select title from read_parquet('{w / 'idx' / 'entities.parquet'}')").fetchall() if t}
            theirs = {_norm(t) for (t,) in con.execute(
                f"select title from read_parquet('{fx / 'index-2026-v3' / 'entities.parquet'}')").fetchall() if t}

            def found(t):
                return any(t == o or f" {t} " in f" {o} " or f" {o} " in f" {t} " for o in ours)
            hit = sum(found(t) for t in theirs)
            res["entity_recall"] = {"found": hit, "of": len(theirs), "recall": share(hit, len(theirs)),
                                    "provrag_entities": len(ours), "index_seconds": secs}
        flagged = total = 0
        errors = []
        for f in sorted((fx / "index-2025-v1" / "answers").glob("*.json")):
            ans = json.loads(f.read_text())["answer"]
            p, _ = _run([provrag, "verify", "--index", str(fx / "index-2025-v1"), "--answer", ans, "--json"], env, 600)
            try:
                claims = json.loads(p.stdout)["claims"]
            except (ValueError, KeyError):
                errors.append(f.name)
                continue
            for c in claims:
                if c.get("cited"):
                    total += 1
                    flagged += c.get("cited_supports") is False
        res["v1_wrong_citations_flagged"] = {"flagged": flagged, "of": total, "share": share(flagged, total),
                                             "verify_errors": errors}
    finally:
        shutil.rmtree(w, ignore_errors=True)
    if any("error" in r for r in answers):
        res["unavailable"] = "; ".join(f"{r['answer']}: {r['error']}" for r in answers if "error" in r)
    return res


# ---- qa: check_qa.py on the folders bench/qa_sets.py builds ------------------------------------

def part_qa(a, env) -> dict:
    import qa_sets  # bench/ is this script's import root

    provrag = str(Path(sys.executable).parent / "provrag")
    made = qa_sets.build(list(qa_sets.SETS), a.work / "qa", a.eval / "squad",
                         a.manuals, qa_sets.SHARED / "corpora" / "small")
    out = {}
    for name, folder in made.items():
        print(f"[eval] qa {name} …", file=sys.stderr, flush=True)
        out[name] = {"unavailable": folder} if isinstance(folder, str) else qa_sets.measure(provrag, folder, env, a.timeout)
    bad = [f"{n}: {r['unavailable'][:120]}" for n, r in out.items() if "unavailable" in r]
    return {"sets": out, **({"unavailable": "; ".join(bad)} if bad else {})}


# ---- the table ---------------------------------------------------------------------------------

def _pct(x) -> str:
    return "–" if x is None else f"{x:.1%}"


def table(rep: dict) -> str:
    L = [f"# provrag eval — {rep['date']}", "",
         f"Eval folder: {rep['eval']}; Dulce fixture: {rep['dulce']}; machine: {rep['machine']}; "
         f"{rep['total_seconds']:.0f} s.", "",
         "| part | measure | value | target |", "| --- | --- | ---: | ---: |"]
    ask = rep["parts"].get("ask")
    if ask:
        if ask.get("unavailable"):
            L.append(f"| ask | unavailable | {ask['unavailable'][:150]} | |")
        for m, v in ask.get("methods", {}).items():
            n = ask.get("questions")
            L.append(f"| ask `{m}` ({n} SQuAD questions) | gold page first / in top 5 / answer holds gold | "
                     f"{_pct(v['top1_page'])} / {_pct(v['top5_page'])} / {_pct(v['answer_contains_gold'])} | "
                     f"TF-IDF baseline 78% / 95% / 78% |")
    ver = rep["parts"].get("verify")
    if ver:
        if ver.get("vitaminc"):
            v = ver["vitaminc"]
            L.append(f"| verify VitaminC ({v['claims']} claims) | balanced accuracy (3-way accuracy) | "
                     f"{v['balanced_accuracy']:.3f} ({v['accuracy_3way']:.3f}) | ≥ 0.75 |")
        if ver.get("halueval"):
            v = ver["halueval"]
            L.append(f"| verify HaluEval ({v['cases']} cases) | balanced accuracy (right supported / hallucinated not) | "
                     f"{v['balanced_accuracy']:.3f} ({_pct(v['right_judged_supported'])} / "
                     f"{_pct(v['hallucinated_judged_not_supported'])}) | ≥ 0.80 |")
        if ver.get("unavailable"):
            L.append(f"| verify | unavailable | {ver['unavailable'][:150]} | |")
    du = rep["parts"].get("dulce")
    if du:
        t = du.get("totals", {})
        n = len(du.get("answers", []))
        if t:
            L += [f"| Dulce resolve ({n} real GraphRAG answers) | cited ids found by the parser | "
                  f"{t['parsed']}/{t['cited']} = {_pct(du['parsed_share'])} | 100% |",
                  f"| Dulce resolve | coverage: ids present in the index resolved to text with a document | "
                  f"{t['resolved']}/{t['present']} = {_pct(du['coverage'])} | 100% |",
                  f"| Dulce resolve | ids absent from the index listed unresolved | "
                  f"{t['absent_listed']}/{t['absent']} = {_pct(du['absent_listed_share'])} | 100% |",
                  f"| Dulce resolve | sentences citing an id the index holds given a source | "
                  f"{t['sentences_with_source']}/{t['sentences']} = {_pct(du['sentences_with_source_share'])} | 100% |"]
        er = du.get("entity_recall")
        if er:
            L.append(f"| Dulce graph | entity recall vs GraphRAG's LLM graph (offline) | "
                     f"{er['found']}/{er['of']} = {_pct(er['recall'])} | ≥ 70% |")
        elif du.get("entity_recall_error"):
            L.append(f"| Dulce graph | entity recall | index failed: {du['entity_recall_error'][:100]} | |")
        v1 = du.get("v1_wrong_citations_flagged")
        if v1:
            L.append(f"| Dulce verify | v1 cited claims flagged not supported by their (wrong) citations | "
                     f"{v1['flagged']}/{v1['of']} = {_pct(v1['share'])} | 100% |")
        if du.get("unavailable"):
            L.append(f"| Dulce | unavailable | {du['unavailable'][:150]} | |")
    if rep["parts"].get("qa"):
        from qa_sets import table_rows
        L += table_rows(rep["parts"]["qa"].get("sets", {}))
    return "\n".join(L) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", type=Path, default=SHARED / "eval" / "dev", help="folder laid out as ../shared/eval/dev")
    ap.add_argument("--dulce", type=Path, default=SHARED / "fixtures" / "graphrag-dulce")
    ap.add_argument("--only", default=",".join(PARTS))
    ap.add_argument("--methods", default="auto,basic,local,global", help="ask methods")
    ap.add_argument("--ask-limit", type=int, default=0, help="first N SQuAD questions only")
    ap.add_argument("--vitaminc", type=int, default=0, help="VitaminC claims per label (0 = all)")
    ap.add_argument("--halueval", type=int, default=0, help="HaluEval cases (0 = all)")
    ap.add_argument("--manuals", type=Path, default=os.environ.get("PROVRAG_MANUALS") or None,
                    help="qa: a folder holding the ten Debian manuals (default $PROVRAG_MANUALS, else fetched)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out-dir", type=Path, default=BENCH / "results")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    a.eval, a.dulce = a.eval.resolve(), a.dulce.resolve()
    parts = [p for p in a.only.split(",") if p]
    if [p for p in parts if p not in PARTS]:
        ap.error(f"--only takes {','.join(PARTS)}")
    for sub in ("squad", "vitaminc", "halueval"):
        if ({"squad": "ask"}.get(sub, "verify") in parts) and not (a.eval / sub).is_dir():
            ap.error(f"{a.eval} has no {sub}/ folder (layout of ../shared/eval/dev expected)")
    work = Path(tempfile.mkdtemp(prefix="provrag-eval-"))
    env = dict(os.environ, XDG_DATA_HOME=str(work / "xdg-data"), XDG_CACHE_HOME=str(work / "xdg-cache"))
    a.work = work
    from run_all import machine  # bench/ is this script's import root

    m = machine()
    rep = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "eval": str(a.eval),
           "dulce": str(a.dulce), "machine": f"{m['cores']} cores, {m['cpu_model']}", "parts": {}}
    fns = {"ask": part_ask, "verify": part_verify, "dulce": part_dulce, "qa": part_qa}
    t0 = time.perf_counter()
    try:
        for p in parts:
            print(f"[eval] {p} …", file=sys.stderr, flush=True)
            ts = time.perf_counter()
            try:
                rep["parts"][p] = fns[p](a, env)
            except Exception as e:
                rep["parts"][p] = {"unavailable": f"{type(e).__name__}: {e}"}
            print(f"[eval] {p} done in {time.perf_counter() - ts:.0f} s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rep["total_seconds"] = round(time.perf_counter() - t0, 1)
    md = table(rep)
    print(md)
    if not a.no_write:
        a.out_dir.mkdir(parents=True, exist_ok=True)
        day = dt.date.today().isoformat()
        (a.out_dir / f"eval-{day}.json").write_text(json.dumps(rep, indent=1) + "\n")
        (a.out_dir / f"eval-{day}.md").write_text(md)
        print(f"written: {a.out_dir / f'eval-{day}.json'} and .md", file=sys.stderr)
    return 0 if not any(v.get("unavailable") for v in rep["parts"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
