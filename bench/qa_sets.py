"""Build the folders ../shared/checks/check_qa.py measures (issue #15), and measure them.

    .venv/bin/python bench/qa_sets.py OUT [--sets squad-half,manuals,small,texlive]
                                          [--squad DIR] [--manuals DIR] [--small DIR]
                                          [--texlive DIR] [--heldout DIR] [--options DIR] [--no-fetch]
                                          [--measure PROVRAG]

check_qa.py wants a folder holding corpus/ and questions.jsonl, unanswerable.jsonl and
claims.jsonl. Abstention can only be measured on questions we *know* the corpus does not
answer, so every set pairs what is indexed with questions about what is not:

- ``squad-half``: the SQuAD-as-PDF articles (``--squad``, default ../shared/eval/dev/squad; the
  holdout split has the same shape) in two halves by a fixed rule — sorted file names,
  alternately (even positions = half A). ``squad-half-A`` indexes half A: its questions are
  answerable, half B's are unanswerable (nothing indexed is about those articles);
  ``squad-half-B`` is the reverse, so a figure found on one fold is checked on the other.
- ``manuals``: the ten Debian manuals (``--manuals`` DIR, e.g. /work/manuals, else fetched with
  ../shared/corpora/fetch-debian-docs.sh) with the questions and claims written over them in
  eval/manuals/ (dev: looked at while building).
- ``small``: ../shared/corpora/small with eval/small/ (dev: tests read it, so it is no longer held out).
- ``texlive``: 28 TeX Live package manuals with eval/texlive/ (dev), and ``heldout``: seven other
  Debian-shipped manuals with eval/heldout/ (HELD OUT: built only when named in --sets; nobody
  tunes on it). Their documents are listed, pinned and checksummed in eval/<set>/corpus.json;
  bench/eval_docs.py fetches them once into a cache folder (or --texlive / --heldout DIR, or
  $PROVRAG_TEXLIVE / $PROVRAG_HELDOUT, name a folder that holds them) and only the listed files
  and their packages' copyright files are copied into the set's corpus/.
- ``options``: command-line option questions over 16 Graphviz manual pages and six other
  programs' manual pages printed to PDF by groff, with eval/options/ (dev, written blind; built
  only when named in --sets, like heldout, see OPT_IN_SETS). Fetched the same way (or --options
  DIR / $PROVRAG_OPTIONS); fetching needs groff's PDF device.

Every written set's folder also gets its global.jsonl when it has one (bench/global_quality.py reads it;
eval/options has none: each of its items asks about one option).

OUT is created; nothing is ever written under ../shared. With ``--measure PROVRAG`` each folder
is then run through check_qa.py and its one-line figure printed (see ``measure``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

try:
    from bench import eval_docs  # imported as bench.qa_sets (the tests)
except ImportError:
    import eval_docs  # run as a script, or imported by bench/eval.py: bench/ is the import root

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
EVAL_DATA = ROOT / "eval"
SETS = ("squad-half", "manuals", "small", "texlive")      # dev sets: what `make eval` measures
HELD_OUT_SETS = ("heldout",)                              # measured by the lead at the end only
# dev sets built only when named: eval/options needs groff's PDF device (Debian's groff, not the
# groff-base every system has) to fetch, and `make eval`'s figures stay comparable run to run
OPT_IN_SETS = ("options",)
WRITTEN_FILES = ("questions.jsonl", "unanswerable.jsonl", "claims.jsonl", "global.jsonl")
FOLDS = ("A", "B")
CHECK_QA = SHARED / "checks" / "check_qa.py"
FETCH = SHARED / "corpora" / "fetch-debian-docs.sh"


class SetError(Exception):
    """A set cannot be built here (material missing, a fetch failed, OUT inside ../shared)."""


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def copy_corpus(src: Path, dest: Path, names: list[str] | None = None) -> None:
    """Copy documents (not symlinks: the index must not depend on where ../shared is mounted).
    Without ``names``, the whole folder, its licenses/ included, as a user would index it."""
    dest.mkdir(parents=True, exist_ok=True)
    if names is None:
        shutil.copytree(src, dest, dirs_exist_ok=True)
        return
    for name in names:
        shutil.copy2(src / name, dest / name)


def squad_halves(squad: Path) -> tuple[list[str], list[str]]:
    """The fixed split: sorted PDF names, alternately (bench/fit_abstain.py uses the same rule)."""
    names = sorted(p.name for p in (squad / "corpus").glob("*.pdf"))
    if len(names) < 2:
        raise SetError(f"{squad}/corpus holds {len(names)} PDFs; a split needs at least two")
    return names[0::2], names[1::2]


def build_squad_half(squad: Path, out: Path) -> list[Path]:
    """squad-half-A and squad-half-B under ``out``: one half indexed and answerable, the other
    half's questions unanswerable. Question fields are check_qa's; ``pages`` are the gold
    paragraph's physical pages from the split's questions.jsonl."""
    halves = dict(zip(FOLDS, squad_halves(squad)))
    questions = read_jsonl(squad / "questions.jsonl")
    made = []
    for fold, other in (("A", "B"), ("B", "A")):
        d = out / f"squad-half-{fold}"
        copy_corpus(squad / "corpus", d / "corpus", halves[fold])
        indexed, absent = set(halves[fold]), set(halves[other])
        write_jsonl(d / "questions.jsonl", [
            {"id": q["id"], "question": q["question"], "document": q["document"], "pages": q["pages"],
             "answers": q["answers"]} for q in questions if q["document"] in indexed])
        write_jsonl(d / "unanswerable.jsonl", [
            {"id": q["id"], "question": q["question"], "document_not_indexed": q["document"]}
            for q in questions if q["document"] in absent])
        made.append(d)
    return made


def copy_written_set(name: str, out: Path) -> Path:
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    for f in WRITTEN_FILES:
        if (EVAL_DATA / name / f).exists():
            shutil.copy2(EVAL_DATA / name / f, d / f)
    return d


def build_manuals(out: Path, manuals: Path | None) -> Path:
    """The Debian manuals: copied from ``manuals`` when given, else fetched (apt-get download)."""
    d = copy_written_set("manuals", out)
    if manuals is not None:
        if not any(manuals.glob("*.pdf")):
            raise SetError(f"{manuals} holds no PDF (expected the ten Debian manuals)")
        copy_corpus(manuals, d / "corpus")
        return d
    run = subprocess.run(["bash", str(FETCH), str(d / "corpus"), "pdf-manuals"], capture_output=True, text=True,
                         timeout=900)
    if run.returncode != 0:
        raise SetError(f"fetching the Debian manuals failed: {(run.stderr.strip().splitlines() or [''])[-1][:200]}")
    return d


def build_small(out: Path, small: Path) -> Path:
    if not small.is_dir():
        raise SetError(f"{small} is not a folder (expected ../shared/corpora/small)")
    d = copy_written_set("small", out)
    copy_corpus(small, d / "corpus")
    return d


def build_listed(name: str, out: Path, docs: Path | None, fetch: bool = True) -> Path:
    """texlive, heldout or options: the documents eval/<name>/corpus.json lists, checked by sha256, with their
    packages' copyright files under corpus/licenses/. Without ``docs`` they come from the cache
    folder, fetched there first when missing (unless ``fetch`` is false)."""
    folder = docs or eval_docs.documents_dir(name)
    try:
        wrong = eval_docs.problems(name, folder)
        if wrong and fetch and docs is None:
            eval_docs.fetch(name, folder)
            wrong = eval_docs.problems(name, folder)
    except eval_docs.DocsError as e:
        raise SetError(str(e)) from e
    if wrong:
        raise SetError(f"{name}: {folder} does not hold the listed documents ({'; '.join(wrong[:3])}"
                       f"{'; …' if len(wrong) > 3 else ''}); fetch them with bench/eval_docs.py fetch {name}")
    d = copy_written_set(name, out)
    meta = eval_docs.listing(name)
    copy_corpus(folder, d / "corpus", [doc["name"] for doc in meta["documents"]])
    (d / "corpus" / "licenses").mkdir(exist_ok=True)
    for pkg in meta["packages"]:
        shutil.copy2(folder / "licenses" / f"{pkg}.copyright", d / "corpus" / "licenses" / f"{pkg}.copyright")
    return d


def build(sets: list[str], out: Path, squad: Path, manuals: Path | None, small: Path,
          texlive: Path | None = None, heldout: Path | None = None, fetch: bool = True,
          options: Path | None = None) -> dict[str, Path | str]:
    """Every requested folder by name (squad-half gives two), or the reason it could not be built."""
    out = out.resolve()
    if out == SHARED.resolve() or SHARED.resolve() in out.parents:
        raise SetError(f"{out} is inside {SHARED}, which is read-only evidence")
    made: dict[str, Path | str] = {}
    for name in sets:
        try:
            if name == "squad-half":
                for d in build_squad_half(squad, out):
                    made[d.name] = d
            elif name == "manuals":
                made[name] = build_manuals(out, manuals)
            elif name == "small":
                made[name] = build_small(out, small)
            elif name in eval_docs.LISTED_SETS:
                docs = {"texlive": texlive, "heldout": heldout, "options": options}[name]
                made[name] = build_listed(name, out, docs, fetch)
            else:
                raise SetError(f"unknown set {name!r} (sets: {', '.join(SETS + HELD_OUT_SETS + OPT_IN_SETS)})")
        except (SetError, OSError, subprocess.TimeoutExpired) as e:
            made[name] = f"{type(e).__name__}: {e}"
    return made


# ---- measuring: check_qa.py's one-line figure, parsed -------------------------------------------

FIGURE = {
    "questions": re.compile(r"(\d+) questions: gold page first (\d+)%, top-5 (\d+)%, answer holds gold (\d+)%, "
                            r"false abstentions (\d+)%"),
    "unanswerable": re.compile(r"(\d+) unanswerable: abstained (\d+)%"),
    "claims": re.compile(r"(\d+) claims: balanced acc ([\d.]+), 3-way (\d+)%, supported with a gold-page evidence (\d+)%"),
    "index": re.compile(r"index (\d+) s, (\d+) unreadable outputs"),
}


def parse_figure(line: str) -> dict:
    """check_qa.py's last line as numbers (shares 0–1); the parts it did not print are absent."""
    out: dict = {"holds": line.startswith("holds: ")}
    if m := FIGURE["questions"].search(line):
        out["questions"] = {"n": int(m[1]), "gold_page_first": int(m[2]) / 100, "gold_page_top5": int(m[3]) / 100,
                            "answer_holds_gold": int(m[4]) / 100, "false_abstentions": int(m[5]) / 100}
    if m := FIGURE["unanswerable"].search(line):
        out["unanswerable"] = {"n": int(m[1]), "abstained": int(m[2]) / 100}
    if m := FIGURE["claims"].search(line):
        out["claims"] = {"n": int(m[1]), "balanced_accuracy": float(m[2]), "accuracy_3way": int(m[3]) / 100,
                         "supported_with_gold_evidence": int(m[4]) / 100}
    if m := FIGURE["index"].search(line):
        out["index_seconds"], out["unreadable_outputs"] = int(m[1]), int(m[2])
    return out


def measure(provrag: str, folder: Path, env: dict | None = None, timeout: float = 7200) -> dict:
    """Run check_qa.py on one folder. Its exit code only says whether its default thresholds
    hold (a baseline is expected to fail them), so a parsed figure is a result either way;
    only a run that prints no figure is ``unavailable``."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(CHECK_QA), provrag, str(folder)], capture_output=True, text=True,
                       env=env, timeout=timeout)
    lines = [x for x in p.stdout.splitlines() if x.strip()]
    res = parse_figure(lines[-1]) if lines else {}
    res.update(line=lines[-1] if lines else "", seconds=round(time.perf_counter() - t0, 1))
    if not any(k in res for k in ("questions", "unanswerable", "claims")):
        res["unavailable"] = f"exit {p.returncode}: {(lines or (p.stderr.strip().splitlines() or ['']))[-1][:300]}"
    return res


def _pct(x) -> str:
    return "–" if x is None else f"{x:.0%}"


def table_rows(sets: dict[str, dict]) -> list[str]:
    """bench/eval.py's table rows for the qa part: one row per folder and measure, with the
    issue's targets (SQuAD half-indexed: ≥ 80 % abstain, ≤ 10 % false abstentions, gold page
    first ≥ 85 %; check_qa.py's defaults elsewhere)."""
    rows = []
    for name, r in sets.items():
        if "unavailable" in r:
            rows.append(f"| qa `{name}` | unavailable | {r['unavailable'][:150]} | |")
            continue
        q, u, c = r.get("questions"), r.get("unanswerable"), r.get("claims")
        page_target = "≥ 85%" if name.startswith("squad") else "≥ 75%"
        if q:
            rows.append(f"| qa `{name}` ({q['n']} answerable) | gold page first / top 5 / answer holds gold / "
                        f"false abstentions | {_pct(q['gold_page_first'])} / {_pct(q['gold_page_top5'])} / "
                        f"{_pct(q['answer_holds_gold'])} / {_pct(q['false_abstentions'])} | {page_target} / – / – / ≤ 10% |")
        if u:
            rows.append(f"| qa `{name}` ({u['n']} unanswerable) | abstained | {_pct(u['abstained'])} | ≥ 80% |")
        if c:
            rows.append(f"| qa `{name}` ({c['n']} claims) | balanced accuracy (3-way; supported with gold-page "
                        f"evidence) | {c['balanced_accuracy']:.2f} ({_pct(c['accuracy_3way'])}; "
                        f"{_pct(c['supported_with_gold_evidence'])}) | ≥ 0.80 |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder to build the sets in (created; never under ../shared)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--squad", type=Path, default=SHARED / "eval" / "dev" / "squad",
                    help="a SQuAD-as-PDF split (corpus/, questions.jsonl), dev or holdout")
    ap.add_argument("--manuals", type=Path, default=os.environ.get("PROVRAG_MANUALS") or None,
                    help="a folder already holding the Debian manuals (default: $PROVRAG_MANUALS, else fetch)")
    ap.add_argument("--small", type=Path, default=SHARED / "corpora" / "small")
    ap.add_argument("--texlive", type=Path, help="a folder holding eval/texlive's documents (default: the cache)")
    ap.add_argument("--heldout", type=Path, help="a folder holding eval/heldout's documents (default: the cache)")
    ap.add_argument("--options", type=Path, help="a folder holding eval/options' documents (default: the cache)")
    ap.add_argument("--no-fetch", action="store_true", help="never download: a set whose documents are missing is not built")
    ap.add_argument("--measure", metavar="PROVRAG", help="then run check_qa.py with this provrag on each folder")
    a = ap.parse_args()
    try:
        made = build([s for s in a.sets.split(",") if s], a.out, a.squad, a.manuals, a.small,
                     a.texlive, a.heldout, fetch=not a.no_fetch, options=a.options)
    except SetError as e:
        print(e, file=sys.stderr)
        return 2
    failed = 0
    for name, d in made.items():
        if isinstance(d, str):
            print(f"{name}: not built — {d}")
            failed += 1
            continue
        print(f"{name}: {d}", flush=True)
        if a.measure:
            res = measure(a.measure, d)
            print(f"  {res['line'] or res.get('unavailable')}  ({res['seconds']:.0f} s)", flush=True)
            failed += "unavailable" in res
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
