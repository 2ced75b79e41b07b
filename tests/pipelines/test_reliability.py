"""Reliability runs (issue #7): kill -9 mid-index, broken files in a real corpus, fuzzed
citations and answers, and the API key never written anywhere.

- kill -9: `provrag index` (openai engine against tests/llm_server.py) is killed at N random
  moments (PROVRAG_RELIABILITY_KILLS, default 8; 20 for a bench run:
  `PROVRAG_RELIABILITY_KILLS=20 .venv/bin/python -m pytest -q -m slow tests/pipelines/test_reliability.py -k kill`);
  after each kill the index folder still opens and `provrag ask --json` answers with sources,
  and a re-run completes from the cache (zero LLM calls) leaving no temporary folder behind.
- bad files: ../shared/corpora/bad copied flat among real documents of ../shared/corpora/small:
  the run completes and every bad file has a documents.parquet row with a non-ok status and a
  one-line error (tests/pipelines/test_index.py checks bad/ as a subfolder and lets two of them pass as
  ok; this pins every one of them, mixed in at the top level).
- fuzz: hypothesis citation strings and answers through resolve_answer (what `provrag
  resolve` calls) and verify_answer / run_verify (what `provrag verify` calls): no exception.
  A short run is part of the normal suite; the 1,000-example runs are `make fuzz`'s (marked fuzz,
  run only with PROVRAG_FUZZ=full: 76 s of the suite's time for what the short runs already check).
- key: with a distinctive key in the environment variable [llm] api_key_env names, index +
  ask + verify through the CLI, then every file under the work folder (index, its cache and
  queries, stale temp folders, XDG data and cache homes — parquet read back, gzip opened) and
  every output is searched for the key: never found.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.attack.conftest import FULL as FULL_FUZZ   # PROVRAG_FUZZ=full: `make fuzz` (bench/fuzz.py)

pytestmark = pytest.mark.usefixtures("shared")

KEY = "sk-provrag-reliability-7f3Kq9-do-not-store"
KEY_ENV = "PROVRAG_RELIABILITY_KEY"
KILLS = int(os.environ.get("PROVRAG_RELIABILITY_KILLS", "8"))
SEED = int(os.environ.get("PROVRAG_RELIABILITY_SEED", "51425"))
REAL = ("sotu-1863-lincoln.txt", "debian-developers-reference-scope.html", "asymptote-CAD.pdf")
QUESTION = "What did Lincoln say about emancipation?"


def _env(work: Path, **extra) -> dict:
    return dict(os.environ, XDG_DATA_HOME=str(work / "xdg-data"), XDG_CACHE_HOME=str(work / "xdg-cache"), **extra)


@pytest.fixture(scope="module")
def cli(provrag_cli, repo_root):
    """`provrag ARGS` in a subprocess from the repository root: the CompletedProcess."""
    def run(*args, env, timeout=600, **kw):
        return subprocess.run([*provrag_cli, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=repo_root, **kw)
    return run


# ---- the openai-engine index shared by the slow runs --------------------------------------------

@pytest.fixture(scope="module")
def oai(tmp_path_factory, cli, scripted_llm_server, small_corpus, bad_corpus):
    """Scripted server + a baseline openai-engine index of real documents with the bad files mixed in."""

    w = tmp_path_factory.mktemp("reliab")
    docs = w / "docs"
    docs.mkdir()
    for name in REAL:
        shutil.copyfile(small_corpus / name, docs / name)
    for f in sorted(bad_corpus.iterdir()):
        if f.is_file():
            shutil.copyfile(f, docs / f.name)
    srv = scripted_llm_server
    cfg = w / "openai.toml"
    cfg.write_text(f'[llm]\nengine = "openai"\nbase_url = "{srv.url}"\nmodel = "scripted"\n'
                   f'api_key_env = "{KEY_ENV}"\nbackoff_seconds = 0.01\n')
    env = _env(w, **{KEY_ENV: KEY})
    out = w / "index"
    t0 = time.perf_counter()
    r = cli("index", docs, "--out", out, "--config", cfg, "--json", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return {"w": w, "docs": docs, "out": out, "cfg": cfg, "env": env, "srv": srv, "summary": json.loads(r.stdout),
            "counts": json.loads((out / "manifest.json").read_text())["counts"],
            "seconds": time.perf_counter() - t0, "outputs": [r.stdout, r.stderr]}


def _ask_answers(cli, out: Path, env: dict) -> dict:
    """`provrag ask --json` (offline engine) over the index: exit 0, one JSON document, sources."""
    r = cli("ask", QUESTION, "--index", out, "--json", env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-1500:]
    res = json.loads(r.stdout)
    assert res["sources"] and all(s.get("document") for s in res["sources"]), res
    return res


@pytest.mark.slow
def test_bad_files_mixed_into_a_real_corpus_are_each_recorded(oai, bad_corpus):
    import duckdb

    rows = dict((p, (s, e)) for p, s, e in duckdb.sql(
        f"select path, status, error from read_parquet('{oai['out'] / 'documents.parquet'}')").fetchall())
    assert sorted(rows) == sorted(p.name for p in oai["docs"].iterdir())
    for f in bad_corpus.iterdir():
        status, error = rows[f.name]
        assert status in ("failed", "skipped"), (f.name, status)
        assert error and error.strip() and "\n" not in error, f.name
    for name in REAL:
        assert rows[name][0] == "ok", (name, rows[name])
    s = oai["summary"]
    assert s["documents_ok"] == len(REAL)
    assert s["documents_failed"] + s["documents_skipped"] == len(list(bad_corpus.iterdir()))
    assert {p["path"] for p in s["problems"]} == {f.name for f in bad_corpus.iterdir()}


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_an_index_that_answers(oai, cli, provrag_cli, repo_root):
    out, env, cfg, docs = oai["out"], oai["env"], oai["cfg"], oai["docs"]
    _ask_answers(cli, out, env)
    # one cached re-run to time a run: the kill moments are drawn over its length (and a bit past it).
    # Each run is a whole update: a broken file is replaced by another broken one first (a folder
    # with nothing changed would be "up to date" and stop after loading, and kills would only hit that)
    versions = iter(range(10**6))
    _rebreak(docs, next(versions))
    t0 = time.perf_counter()
    r = cli("index", docs, "--out", out, "--config", cfg, env=env)
    span = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr[-1500:]
    assert json.loads((out / "manifest.json").read_text())["llm"]["calls"] == 0
    rng = random.Random(SEED)
    moments = sorted(round(rng.uniform(0.05, 1.1 * span), 2) for _ in range(KILLS))
    log = []
    for at in moments:
        _rebreak(docs, next(versions))
        p = subprocess.Popen([*provrag_cli, "index", str(docs), "--out", str(out), "--config", str(cfg)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=repo_root,
                             start_new_session=True)
        try:
            p.wait(timeout=at)
            finished = True
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)  # kill -9 of `provrag index` itself, not a polite stop
            p.wait()
            finished = False
        try:  # parser workers the killed process leaves behind, as an OOM kill would
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        log.append((at, "finished" if finished else "killed"))
        manifest = json.loads((out / "manifest.json").read_text())  # the folder holds a whole index
        assert manifest["counts"]["text_units"] > 0, at
        _ask_answers(cli, out, env)
        _rebreak(docs, next(versions))
        r = cli("index", docs, "--out", out, "--config", cfg, "--json", env=env)
        assert r.returncode == 0, (at, r.stderr[-1500:])
        assert json.loads(r.stdout)["mode"] == "update", at
        m = json.loads((out / "manifest.json").read_text())
        assert m["llm"]["calls"] == 0 and m["llm"]["cached"] > 0, (at, m["llm"])  # from the cache
        assert m["counts"] == oai["counts"], at  # the same index again
        leftovers = [x.name for x in out.parent.iterdir() if x.name.startswith((".provrag-tmp-", ".provrag-old-"))]
        assert not leftovers, (at, leftovers)
    assert any(what == "killed" for _, what in log), log
    print(f"kill -9 moments (s, run ≈ {span:.1f} s): {log}")


def _rebreak(docs: Path, version: int) -> None:
    """not-a-pdf.pdf gets other bytes that are still not a PDF: the folder changed, the index's content not."""
    (docs / "not-a-pdf.pdf").write_bytes(b"this is still not a PDF, version %d\n" % version)


@pytest.mark.slow
def test_api_key_is_never_written(oai, cli):
    """index (the fixture) + ask + verify with the openai engine; then look everywhere."""
    w, out, env, cfg = oai["w"], oai["out"], oai["env"], oai["cfg"]
    outputs = list(oai["outputs"])
    r = cli("ask", QUESTION, "--index", out, "--config", cfg, "--json", env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-1500:]
    outputs += [r.stdout, r.stderr]
    ans = json.loads(r.stdout)
    assert ans["answer"]
    r = cli("verify", "--trace", "last", "--index", out, "--config", cfg, "--json", env=env, timeout=300)
    assert r.returncode in (0, 1), r.stderr[-1500:]
    outputs += [r.stdout, r.stderr]
    assert json.loads(r.stdout)["claims"] is not None
    # a request with a rejected key: the server echoes it back in its error (401echo). Counted from
    # here: the index and the asks above made requests of their own, which prove nothing of this one
    before = oai["srv"].stats()
    oai["srv"].fail_next("401echo")
    r = cli("ask", "Who wrote the developers reference?", "--index", out, "--config", cfg, "--json", env=env,
            timeout=300)
    outputs += [r.stdout, r.stderr]
    after = oai["srv"].stats()
    assert after["requests"] > before["requests"], "this ask sent no request: the echo was never tested"
    assert after["faults"][len(before["faults"]):][:1] == ["401echo"], "the key was not echoed back to provrag"

    traces = list((out / "queries").glob("*.parquet"))
    assert traces, "ask/verify stored no trace in the index"
    assert (w / "xdg-data" / "provrag").is_dir()
    found, scanned = [], 0
    for p in sorted(w.rglob("*")):
        if not p.is_file() or p.parent == oai["docs"]:
            continue
        scanned += 1
        if KEY.encode() in _readable_bytes(p):
            found.append(str(p.relative_to(w)))
    assert scanned > 10
    assert not found, found
    for text in outputs:
        assert KEY not in text


def _readable_bytes(p: Path) -> bytes:
    """The file's bytes, plus what is inside it when it is compressed (parquet, gzip)."""
    raw = p.read_bytes()
    parts = [raw]
    if raw[:2] == b"\x1f\x8b":
        try:
            parts.append(gzip.decompress(raw))
        except (OSError, EOFError):
            pass
    if raw[:4] == b"PAR1":
        import pyarrow.parquet as pq

        t = pq.read_table(p)
        parts.append(json.dumps(t.to_pylist(), default=str).encode())
        parts.extend(k + b"=" + v for k, v in (t.schema.metadata or {}).items())
    return b"\n".join(parts)


# ---- fuzz: resolve and verify never raise -------------------------------------------------------

KINDS = ["Reports", "Entities", "Relationships", "Claims", "Sources", "reports", "ENTITIES", "Source", "Report",
         "Data", "Covariates", "Nodes", "", "Sources Sources", "Entitiés"]
ID = st.one_of(st.integers(-3, 40), st.integers(-2**70, 2**70), st.sampled_from(["+more", "...", "", " ", "1e9", "0x10",
                                                                                  "٣", "007", "1.5", "-0"]),
               st.text(max_size=5))
SEP = st.sampled_from([", ", ",", " ", "; ", "，", " , "])
OPEN = st.sampled_from(["[Data: ", "[Data:", "[data: ", "[DATA:", "[Data ", "[", "【Data: ", "[Data: Data: "])
CLOSE = st.sampled_from(["]", "]", "]", "", ")]", "]]", " ].", "]\n"])
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
WORDS = st.sampled_from(["Lincoln spoke of emancipation.", "Alex Mercer leads the Dulce team.", "R is free software.",
                         "The base hides technology", "Taylor Cruz did not agree", "CRAN mirrors packages.", "",
                         "It was 1863 and 1,000,000 people", "Dr. Jordan Hayes; e.g. the U.S."])


@st.composite
def citation(draw) -> str:
    groups = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(KINDS))
        ids = draw(st.lists(ID, max_size=7))
        paren = draw(st.sampled_from([("(", ")"), ("(", ""), ("", ""), ("((", "))"), ("(", ")")]))
        groups.append(f"{kind} {paren[0]}{draw(SEP).join(map(str, ids))}{paren[1]}")
    return draw(OPEN) + draw(st.sampled_from(["; ", ";", ", ", " "])).join(groups) + draw(CLOSE)


@st.composite
def answer(draw, most: int = 5) -> str:
    parts = []
    for _ in range(draw(st.integers(1, most))):
        parts.append(draw(st.one_of(WORDS, TEXT)))
        if draw(st.booleans()):
            parts.append(draw(citation()))
    return draw(st.sampled_from([" ", "", "\n", "\n\n- ", " ## "])).join(parts)


@pytest.fixture(scope="module")
def readers(tmp_path_factory, small_corpus, dulce):
    """A small provrag index and two real GraphRAG indexes (v1 names, v3), opened once."""
    from provrag.pipelines.index import run_index
    from provrag.config import load_config
    from provrag.store.reader import open_index

    w = tmp_path_factory.mktemp("fuzz")
    (w / "docs").mkdir()
    for name in REAL[:2]:
        shutil.copyfile(small_corpus / name, w / "docs" / name)
    cfg = load_config()
    run_index(w / "docs", w / "idx", cfg)
    rs = [open_index(w / "idx"), open_index(dulce / "index-2026-v3"), open_index(dulce / "index-2025-v1")]
    # the 1,000-answer run judges fewer evidence units per claim (same code, 4x less time)
    lean = load_config(None, {"verify": {"top_k_retrieved": 1, "top_k_cited": 2}})
    yield {"readers": rs, "cfg": cfg, "lean_cfg": lean, "index": w / "idx"}
    for r in rs:
        r.close()


def _check_resolve(readers, text: str, which: int, top: int) -> None:
    from provrag.query.resolve import resolve_answer

    reader = readers["readers"][which]
    res = resolve_answer(reader, text, top_k=top).to_json()
    json.dumps(res)  # what `resolve --json` prints must serialise
    assert res["answer"] == text
    for s in res["sources"]:
        assert s["text_unit_id"]
    wanted = {(c["kind"], i) for c in res["citations"] for i in c["ids"]}
    for u in res["unresolved"]:
        assert (u["kind"], u["id"]) in wanted


def _check_verify(readers, text: str, which: int, question: str | None, cfg: str = "cfg") -> None:
    from provrag.verify.check import verify_answer

    res = verify_answer(readers["readers"][which], text, readers[cfg], question=question).to_json()
    json.dumps(res)
    assert {c["verdict"] for c in res["claims"]} <= {"supported", "contradicted", "unsupported"}


FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                   HealthCheck.data_too_large])


@settings(max_examples=120, **FUZZ)
@given(text=st.one_of(citation(), answer(), TEXT), which=st.integers(0, 2), top=st.integers(-2, 12))
def test_fuzzed_citations_resolve_without_exception(readers, text, which, top):
    _check_resolve(readers, text, which, top)


@settings(max_examples=15, **FUZZ)
@given(text=answer(), which=st.integers(0, 2), question=st.one_of(st.none(), TEXT, WORDS))
def test_fuzzed_answers_verify_without_exception(readers, text, which, question):
    _check_verify(readers, text, which, question)


@settings(max_examples=10, **FUZZ)
@given(text=st.one_of(answer(), TEXT, st.just(""), st.just("   ")), question=st.one_of(st.none(), TEXT))
def test_fuzzed_answers_through_run_verify(readers, text, question):
    """The pipeline `provrag verify` runs: only its documented VerifyError (exit 2) may come out."""
    from provrag.pipelines.verify import VerifyError, run_verify

    try:
        res = run_verify(readers["index"], readers["cfg"], answer=text, question=question, save=False)
    except VerifyError as e:
        assert str(e) and "\n" not in str(e)
        return
    json.dumps(res.to_json(), default=str)


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.skipif(not FULL_FUZZ, reason="1,000 examples: `make fuzz` (PROVRAG_FUZZ=full); the suite runs the short one")
@settings(max_examples=1000, **FUZZ)
@given(text=st.one_of(citation(), answer(), TEXT), which=st.integers(0, 2), top=st.integers(-2, 12))
def test_1000_fuzzed_citations_resolve_without_exception(readers, text, which, top):
    _check_resolve(readers, text, which, top)


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.skipif(not FULL_FUZZ, reason="1,000 examples: `make fuzz` (PROVRAG_FUZZ=full); the suite runs the short one")
@settings(max_examples=1000, **FUZZ)
@given(text=answer(most=3), which=st.integers(0, 2), question=st.one_of(st.none(), TEXT, WORDS))
def test_1000_fuzzed_answers_verify_without_exception(readers, text, which, question):
    _check_verify(readers, text, which, question, cfg="lean_cfg")
