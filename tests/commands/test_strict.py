"""`--strict` on index, ask and verify: model output only. An item the model fails on stays
failed (counted `failed`, nothing stands in) instead of being made by the offline engine; without
the flag the same run falls back. Driven through the CLI against the scripted server playing a
model that copies the extraction template and invents report rows (tests/llm_faults.py), over
the issue's two real documents."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.llm_faults import issue_docs
from tests.real_llm_server import toml_text

KEY_ENV = "PROVRAG_STRICT_TEST_KEY"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, small_corpus, scripted_llm_server, provrag_script):
    w = tmp_path_factory.mktemp("strict")
    docs = issue_docs(small_corpus, w / "docs")
    config = w / "model.toml"
    config.write_text(toml_text({"llm": {"engine": "openai", "base_url": scripted_llm_server.url, "model": "scripted",
                                         "api_key_env": KEY_ENV, "backoff_seconds": 0.01}}))
    env = {**os.environ, KEY_ENV: "sk-strict-test", "NO_COLOR": "1"}

    def run(*args: str) -> dict:
        scripted_llm_server.reset()
        scripted_llm_server.state.always.update({"extract": "placeholder", "report": "invented", "answer": "invented"})
        done = subprocess.run(provrag_script + list(args) + ["--config", str(config), "--json"],
                              capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode in (0, 1), done.stderr[-1500:]
        return json.loads(done.stdout)

    return w, docs, run


def test_index_strict_leaves_failed_items_failed(setup):
    w, docs, run = setup
    lenient_run = run("index", str(docs), "--out", str(w / "lenient"))
    strict_run = run("index", str(docs), "--out", str(w / "strict"), "--strict")
    lenient, strict = lenient_run["llm"]["stages"], strict_run["llm"]["stages"]
    n = lenient["extract"]["fallback"]
    assert n > 0 and lenient["extract"]["failed"] == 0 and lenient_run["entities"] > 0
    assert lenient["report"]["fallback"] == lenient_run["community_reports"] > 0
    # strict: every extraction failed, so the graph is empty: no entity, no community to report on
    assert strict["extract"] == {"by_model": 0, "fallback": 0, "failed": n}
    assert strict_run["entities"] == 0 and strict_run["community_reports"] == 0 and "report" not in strict
    assert any("extract: " in line and "failed" in line for line in strict_run["llm"]["warnings"])


def test_ask_and_verify_strict_never_use_the_offline_engine_for_the_model(setup):
    w, _, run = setup
    idx = str(w / "lenient")
    asked = run("ask", "What was the supplemental treaty with Great Britain for?", "--index", idx, "--strict")
    assert asked["llm"]["stages"]["answer"] == {"by_model": 0, "fallback": 0, "failed": 1}
    lenient = run("ask", "What was the supplemental treaty with Great Britain for?", "--index", idx)
    assert lenient["llm"]["stages"]["answer"]["fallback"] == 1 and lenient["answer"].strip()
    assert asked["error"] and "answer" in asked["error"]  # the reason is said, not an empty box
