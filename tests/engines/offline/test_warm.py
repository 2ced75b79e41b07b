"""A one-shot ask or verify loads the models it will read on a thread of its own, while retrieval
runs (engines/offline/warm.py, issue 30): each model is loaded once, on that thread, and the
answer and verdicts are the ones made without it. Checked in fresh processes (nothing loaded
before), never by timing (bench/question_speed.py measures that)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace

import pytest

from provrag.config import load_config
from provrag.engines.offline.warm import loads

QUESTION = "Who leads the Halcyon commissioning team?"

# In a fresh process: record the thread each model is loaded on, run one ask (or verify) as the CLI
# does, with warming on or off (argv[3]), and print the result with where each load happened.
ONE_SHOT = """
import json, sys, threading
import provrag.engines.offline.warm as warm
import provrag.embeddings.minilm as minilm
import provrag.learned.reader as learned
seen = []
def spy(module, name):
    real = getattr(module, name)
    def wrapped(*a, **k):
        seen.append((name, threading.current_thread().name))
        return real(*a, **k)
    setattr(module, name, wrapped)
spy(learned, "Reader"); spy(minilm, "_loaded")
import provrag.embeddings.minilm_onnx as minilm_onnx
real_encoder = minilm_onnx.encoder
def encoder(bert, threads, int8=False):   # where the int8 encoder is made (once: under a lock)
    if int8:
        seen.append(("int8_encoder", threading.current_thread().name))
    return real_encoder(bert, threads, int8)
minilm_onnx.encoder = encoder
if sys.argv[3] == "off":
    warm.loads = lambda cfg, task: []
from provrag.config import load_config
cfg = load_config(None)
if sys.argv[1] == "serve":   # a server: started, then one question asked through it
    from provrag.serve.service import IndexService
    service = IndexService(sys.argv[4], cfg)
    service.warm_up.close()                      # the start-up loads done
    started = list(seen)
    out = service.ask(sys.argv[2]).to_json()
    out["loads_at_start"] = started
    service.close()
elif sys.argv[1] in ("ask", "global"):
    from provrag.pipelines.ask import run_ask
    method = "global" if sys.argv[1] == "global" else None
    out = run_ask(sys.argv[2], sys.argv[4], cfg, method=method, save=False).to_json()
else:
    from provrag.pipelines.verify import run_verify
    out = run_verify(sys.argv[4], cfg, answer=sys.argv[2], save=False).to_json()
out.pop("trace_id", None)
out.pop("trace", None)
print(json.dumps({"result": out, "loads": seen, "threads": [t.name for t in threading.enumerate()]}))
"""


def _one_shot(task, text, index, warming, tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), PROVRAG_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", ONE_SHOT, task, text, warming, str(index)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["loads"] = [tuple(x) for x in out["loads"]]
    return out


@pytest.fixture()
def index(sample_index, tmp_path):
    copy = tmp_path / "idx"
    shutil.copytree(sample_index, copy)
    return copy


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="with one core nothing is loaded ahead")
def test_a_cold_ask_loads_its_models_on_the_warm_up_thread_and_answers_the_same(index, tmp_path):
    warmed = _one_shot("ask", QUESTION, index, "on", tmp_path)
    plain = _one_shot("ask", QUESTION, index, "off", tmp_path)
    # each model once, on the warm-up thread; without it, on the main thread when first read
    assert sorted(warmed["loads"]) == [("Reader", "provrag-warm-up"), ("_loaded", "provrag-warm-up"),
                                       ("int8_encoder", "provrag-warm-up")]
    assert sorted(plain["loads"]) == [("Reader", "MainThread"), ("_loaded", "MainThread"),
                                      ("int8_encoder", "MainThread")]
    assert "provrag-warm-up" not in warmed["threads"]          # joined before the ask returned
    assert "Imogen Vale" in warmed["result"]["answer"]
    assert warmed["result"] == plain["result"]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="with one core nothing is loaded ahead")
def test_a_cold_verify_loads_the_claim_head_ahead_and_gives_the_same_verdicts(index, tmp_path):
    answer = "The commissioning team is led by Dr. Imogen Vale. [Data: Sources (3)]"
    warmed = _one_shot("verify", answer, index, "on", tmp_path)
    plain = _one_shot("verify", answer, index, "off", tmp_path)
    assert ("Reader", "provrag-warm-up") in warmed["loads"] and ("Reader", "MainThread") in plain["loads"]
    assert [n for n, _ in warmed["loads"]].count("Reader") == 1
    assert warmed["result"]["claims"] == plain["result"]["claims"]
    assert warmed["result"]["summary"]["supported"] == 1


def test_a_global_ask_loads_nothing_ahead(index, tmp_path):
    """A global answer (map-reduce over the community reports) reads neither model: nothing is
    loaded on the warm-up thread for it."""
    out = _one_shot("global", "What are the main themes of these documents?", index, "on", tmp_path)
    assert out["result"]["method"] == "global"
    assert [t for _, t in out["loads"] if t == "provrag-warm-up"] == []


def test_only_what_the_settings_read_is_loaded():
    cfg = load_config(None)
    assert loads(cfg, "ask") == ["reader", "minilm int8"]
    assert loads(cfg, "verify") == ["reader"]          # the fitted judge reads with the claim head
    assert loads(replace(cfg, search=replace(cfg.search, meaning_int8=False)), "ask") == ["reader", "minilm"]
    assert loads(replace(cfg, search=replace(cfg.search, reader="features", rerank="none")), "ask") == []
    assert loads(replace(cfg, verify=replace(cfg.verify, judge="features", support_weights={},
                                             contradict_weights={})), "verify") == []


def test_a_reader_that_cannot_load_leaves_the_ask_to_answer_without_it(index, tmp_path, monkeypatch):
    """The warm-up meets the broken weights first, says nothing and goes on to MiniLM; the reading
    meets them again and answers with the hand-set features, as without the warm-up."""
    broken = tmp_path / "weights"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")
    monkeypatch.setenv("PROVRAG_READER_DIR", str(broken))
    out = _one_shot("ask", QUESTION, index, "on", tmp_path)
    assert [n for n, _ in out["loads"] if n == "Reader"] == []
    # MiniLM is still loaded ahead: a reader that cannot load does not stop the next model's load
    assert sorted(out["loads"]) == [("_loaded", "provrag-warm-up"), ("int8_encoder", "provrag-warm-up")]
    assert "Imogen Vale" in out["result"]["answer"]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="with one core nothing is loaded ahead")
def test_a_server_loads_its_models_as_it_starts_and_its_first_question_loads_nothing(index, tmp_path):
    out = _one_shot("serve", QUESTION, index, "on", tmp_path)
    at_start = sorted(tuple(x) for x in out["result"]["loads_at_start"])
    assert at_start == [("Reader", "provrag-warm-up"), ("_loaded", "provrag-warm-up"),
                        ("int8_encoder", "provrag-warm-up")]
    assert sorted(out["loads"]) == at_start               # the question found every model loaded
    assert "Imogen Vale" in out["result"]["answer"]
    assert "provrag-warm-up" not in out["threads"]



def test_the_warm_up_makes_what_the_passes_will_run_and_no_more(monkeypatch):
    """int8 passes (the default): the int8 encoder, quantised from the file, and neither the float
    layers (42 MB) nor their session; `meaning_int8 = false`: the float layers and session."""
    from provrag.embeddings import minilm
    from provrag.engines.offline.warm import _load
    from tests import components

    components.minilm_weights()
    monkeypatch.setattr(minilm, "_MODELS", {})          # a fresh process's model
    _load(["minilm int8"])
    ((bert, *_),) = minilm._MODELS.values()
    assert bert._int8 and bert._int8[0] is not None
    assert bert._layers == [] and bert._onnx == []
    _load(["minilm"])
    assert bert._layers and bert._onnx and bert._onnx[0] is not None


LOADED_RSS = """
import json, sys
from provrag.serve.memory import settle_one_question
settle_one_question()                       # as `provrag ask` starts
import provrag.engines.offline.warm as warm
if sys.argv[1] == "kept":
    import provrag.serve.memory as memory
    memory.trim = lambda: False             # the loads' freed temporaries left in the heap
warm._load(["reader", "minilm int8"])
print(json.dumps({l.split(":")[0]: int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon")}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_the_warm_up_gives_back_what_its_loads_freed(tmp_path):
    """The loads' temporaries (MiniLM's float layers read and quantised one at a time, the
    reader's graph) are freed into the heap, where they stayed resident under the passes that
    follow: the peak of a cold ask. The warm-up trims the heap after each load: ~20 MB less
    resident once the models are loaded (measured in fresh processes, glibc only)."""
    from provrag.serve.memory import glibc
    from tests import components

    if glibc() is None:
        pytest.skip("malloc_trim is glibc's")
    components.minilm_weights()
    env = dict(os.environ, PROVRAG_CACHE_DIR=str(tmp_path / "cache"))
    anon = {}
    for how in ("trimmed", "kept"):
        done = subprocess.run([sys.executable, "-c", LOADED_RSS, how], capture_output=True, text=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        anon[how] = json.loads(done.stdout.strip().splitlines()[-1])["RssAnon"] / 1024
    assert anon["trimmed"] < anon["kept"] - 10, anon
