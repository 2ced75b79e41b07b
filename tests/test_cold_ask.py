"""What one `provrag ask` process loads (issue #30): only what a question uses, each once.

A cold CLI call pays for every import and every table it loads; these tests check the process
itself (a subprocess, its sys.modules and its caches), never its timings (bench/question_speed.py
measures those, beside the commit before)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

# libraries no question uses: pyarrow's list conversion imported pandas (~0.3 s, ~40 MB) when ask
# wrote its trace; the others are indexing's (polars, docling, networkx) or nobody's at run time
NOT_FOR_A_QUESTION = ("pandas", "sklearn", "scipy", "torch", "polars", "docling", "networkx")

ASK_AND_REPORT = """
import sys, json
from provrag.cli import main
sys.argv = ["provrag", "ask", sys.argv[1], "--index", sys.argv[2], "--json"]
try:
    main()
except SystemExit as e:
    assert not e.code, e.code
modules = sorted(m for m in sys.modules if "." not in m)
decoded = streamed = 0
if "simplemma" in modules:
    from simplemma.strategies.dictionaries import LOW_MEMORY_DICTIONARY_FACTORY
    from simplemma.strategies.dictionaries.dictionary_factory import DEFAULT_DICTIONARY_FACTORY
    decoded = DEFAULT_DICTIONARY_FACTORY._get_dictionary.cache_info().currsize
    streamed = LOW_MEMORY_DICTIONARY_FACTORY._get_dictionary.cache_info().currsize
print(json.dumps({"modules": modules, "decoded_dictionaries": decoded, "streamed_dictionaries": streamed,
                  "pyarrow_compute": "pyarrow.compute" in sys.modules}))
"""


def _ask(question, index, env, cwd):
    done = subprocess.run([sys.executable, "-c", ASK_AND_REPORT, question, str(index)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    return json.loads("\n".join(lines[:-1])), json.loads(lines[-1])


def test_a_cold_ask_imports_only_what_a_question_uses(sample_index, tmp_path):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)   # ask stores its trace in the index: a copy of the shared one
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), PROVRAG_CACHE_DIR=str(tmp_path / "cache"))
    answer, seen = _ask("Who leads the Halcyon commissioning team?", index, env, tmp_path)
    assert answer["sources"] and "Halcyon" in answer["question"]      # a real answer was made and stored
    assert list((index / "queries" / "retrievals").glob("*.parquet"))  # its provenance rows were written
    assert [m for m in NOT_FOR_A_QUESTION if m in seen["modules"]] == []
    # ~50 ms of its own (its docstrings parsed through pydoc): Table.take imported it for the
    # retrieved units' rows (store/units.read_rows), which slices take instead
    assert seen["pyarrow_compute"] is False
    # the question's words were lemmatised from simplemma's stream, its dictionary never decoded whole
    assert seen["streamed_dictionaries"] == 1
    assert seen["decoded_dictionaries"] == 0


def test_a_cold_ask_after_another_loads_no_word_library_and_answers_the_same(sample_index, tmp_path):
    """The words of a question asked before come from the user cache (provrag/usercache.py):
    neither simplemma nor wordfreq is imported (~0.6 s of a cold ask), the answer is the same."""
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), PROVRAG_CACHE_DIR=str(tmp_path / "cache"))
    question = "Who leads the Halcyon commissioning team?"
    first, seen_first = _ask(question, index, env, tmp_path)
    again, seen_again = _ask(question, index, env, tmp_path)
    assert "simplemma" in seen_first["modules"]      # an empty cache: the lemmatiser answers
    # wordfreq gives the judge its words' rarity: ask's answer check asks no judge about its quotes
    assert "wordfreq" not in seen_first["modules"]
    assert {"simplemma", "wordfreq"} & set(seen_again["modules"]) == set()
    drop = ("trace_id",)
    assert {k: v for k, v in again.items() if k not in drop} == {k: v for k, v in first.items() if k not in drop}
    assert again["sources"] and "Vale" in again["answer"]
