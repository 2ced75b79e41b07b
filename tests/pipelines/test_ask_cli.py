"""`provrag ask`, `provrag trace`, `provrag log` as a user runs them (subprocess, real index)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("shared")


@pytest.fixture(scope="module")
def index(squad_subset_index):
    return squad_subset_index


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = dict(os.environ)
    e["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg"))
    e["COLUMNS"] = "160"
    return e


@pytest.fixture(scope="module")
def fast_cfg(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cfg") / "fast.toml"
    p.write_text('[search]\nrerank = "none"\n')
    return p


@pytest.fixture(scope="module")
def run(provrag_script, repo_root):
    """`provrag ARGS` through the venv's console script, as a user runs it: the CompletedProcess."""
    def run(env, *args, stdin=None):
        return subprocess.run(provrag_script + [str(a) for a in args], input=stdin, capture_output=True, text=True,
                              timeout=180, cwd=repo_root, env=env)
    return run


def test_ask_json_is_contract_shape_and_trace_reads_back(run, index, env, fast_cfg):
    r = run(env, "ask", "When did the 1973 oil crisis begin?", "--index", index, "--json", "--config", fast_cfg)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)  # stdout is one JSON document
    assert list(out) == ["trace_id", "question", "method", "answer", "abstained", "confidence", "index_version",
                         "citations", "sources", "unresolved", "error", "abstained_by", "checked", "removed_sentences",
                         "raw_answer", "route", "attempts"]
    assert out["sources"][0]["path"] == "1973-oil-crisis.pdf"
    assert out["sources"][0]["page_start"] >= 1
    assert out["unresolved"] == []
    stored = list((index / "queries").glob(f"*-{out['trace_id']}.parquet"))
    assert len(stored) == 1

    t = run(env, "trace", out["trace_id"], "--format", "json")
    assert t.returncode == 0, t.stderr
    tr = json.loads(t.stdout)
    assert tr["answer"] == out["answer"] and tr["method"] == out["method"]
    assert [s["name"] for s in tr["stages"]] == ["question", "exploration", "focus", "synthesis", "check",
                                                  "citations"]
    # --json, as ask, log and verify take it, is --format json
    assert json.loads(run(env, "trace", out["trace_id"], "--json").stdout) == tr
    both = run(env, "trace", out["trace_id"], "--json", "--format", "prov")
    assert both.returncode == 2 and "give one" in both.stderr and "Traceback" not in both.stderr

    tree = run(env, "trace", out["trace_id"][:8], "--index", index)
    assert tree.returncode == 0, tree.stderr
    for word in ("Question", "Exploration", "Focus", "Synthesis", "candidates", "sources"):
        assert word in tree.stdout

    prov = run(env, "trace", out["trace_id"], "--format", "prov")
    doc = json.loads(prov.stdout)
    values = [x.get("prov:value") for x in doc["@graph"]]
    assert out["question"] in values and out["answer"] in values
    assert any(x.get("@id", "").startswith("provrag:text_unit/") for x in doc["@graph"])

    lg = run(env, "log", "--json", "-n", "5", "oil crisis")
    rows = json.loads(lg.stdout)
    assert rows and rows[0]["trace_id"] == out["trace_id"]
    lt = run(env, "log", "--index", index)
    assert lt.returncode == 0 and out["trace_id"] in lt.stdout


def test_ask_renders_answer_sources_and_trace_id(run, index, env, fast_cfg):
    r = run(env, "ask", "What is packet switching?", "--index", index, "--method", "basic", "--config", fast_cfg)
    assert r.returncode == 0, r.stderr
    assert "answer · basic search" in r.stdout
    assert "sources (best first)" in r.stdout and "packet-switching.pdf" not in r.stderr
    assert "p. " in r.stdout  # pages shown
    assert "provrag trace " in r.stdout


def test_ask_global_on_graphrag_fixture(run, env, fast_cfg, dulce_v3):
    r = run(env, "ask", "What are the main themes of the story?", "--index", dulce_v3, "--json", "--config", fast_cfg)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["method"] == "global"
    assert out["citations"] and out["unresolved"] == []
    assert not (dulce_v3 / "queries").exists()  # read-only fixture untouched
    assert run(env, "trace", out["trace_id"]).returncode == 0  # found in the user folder


def test_question_from_stdin(run, index, env, fast_cfg):
    r = run(env, "ask", "-", "--index", index, "--json", "--config", fast_cfg, stdin="Who owned Telenet?\n")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["question"] == "Who owned Telenet?"


@pytest.mark.parametrize("args,msg", [
    (["ask", "q", "--index", "/nonexistent/idx"], "no such index folder"),
    (["ask", "q", "--index", "{index}", "--method", "drift"], "unknown --method"),
    (["ask", "  ", "--index", "{index}"], "question is empty"),
    (["trace", "zz!", "--index", "{index}"], "not a trace id"),
    (["trace", "abcdef012345", "--index", "{index}"], "no trace"),
    (["trace", "abcdef012345", "--format", "xml"], "unknown --format"),
    (["log", "-n", "-3"], "-n must be"),
])
def test_bad_input_exits_2_with_one_line(run, index, env, args, msg):
    r = run(env, *[a.replace("{index}", str(index)) for a in args])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert msg in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_log_table_names_verify_runs_on_a_narrow_terminal():
    """Without the kind column (narrow terminal) a verify run must not pass for an ask whose
    method is called "offline"."""
    from rich.console import Console

    from provrag.views.ask import log_table

    rows = [{"trace_id": "aaaaaaaaaaaa", "kind": "ask", "method": "local", "question": "Who?", "n_sources": 2},
            {"trace_id": "bbbbbbbbbbbb", "kind": "verify", "method": "offline", "question": "Who?", "n_sources": 4}]
    for width, verify_cell in ((80, "verify (offline)"), (160, "offline")):
        con = Console(width=width, record=True)
        con.print(log_table(rows, width))
        lines = con.export_text().splitlines()
        ask_line = next(x for x in lines if "aaaaaaaaaaaa" in x)
        verify_line = next(x for x in lines if "bbbbbbbbbbbb" in x)
        assert verify_cell in verify_line and "local" in ask_line and "verify" not in ask_line
        assert ("verify" in verify_line.replace("verify (offline)", "")) == (width >= 110)  # kind column when wide
