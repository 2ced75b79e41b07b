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
from simplemma.strategies.dictionaries import LOW_MEMORY_DICTIONARY_FACTORY
from simplemma.strategies.dictionaries.dictionary_factory import DEFAULT_DICTIONARY_FACTORY
print(json.dumps({"modules": sorted(m for m in sys.modules if "." not in m),
                  "decoded_dictionaries": DEFAULT_DICTIONARY_FACTORY._get_dictionary.cache_info().currsize,
                  "streamed_dictionaries": LOW_MEMORY_DICTIONARY_FACTORY._get_dictionary.cache_info().currsize}))
"""


def test_a_cold_ask_imports_only_what_a_question_uses(sample_index, tmp_path):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)   # ask stores its trace in the index: a copy of the shared one
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    done = subprocess.run([sys.executable, "-c", ASK_AND_REPORT, "Who leads the Halcyon commissioning team?",
                           str(index)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    answer, seen = json.loads("\n".join(lines[:-1])), json.loads(lines[-1])
    assert answer["sources"] and "Halcyon" in answer["question"]      # a real answer was made and stored
    assert list((index / "queries" / "retrievals").glob("*.parquet"))  # its provenance rows were written
    assert [m for m in NOT_FOR_A_QUESTION if m in seen["modules"]] == []
    # the question's words were lemmatised from simplemma's stream, its dictionary never decoded whole
    assert seen["streamed_dictionaries"] == 1
    assert seen["decoded_dictionaries"] == 0
