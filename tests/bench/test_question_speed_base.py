"""bench/question_speed.py runs the commit before with the libraries that commit pinned: a C
accelerator this venv has (PyStemmer, which snowballstemmer picks up by itself) is hidden from a
base tree whose pyproject.toml does not pin it, so a ratio new ÷ base counts what adding it bought."""
from __future__ import annotations

import subprocess
import sys

from bench import question_speed


def test_a_base_tree_without_the_pin_runs_without_the_accelerator(repo_root, tmp_path):
    before = tmp_path / "before"
    before.mkdir()
    pins = (repo_root / "pyproject.toml").read_text()
    (before / "pyproject.toml").write_text("\n".join(l for l in pins.splitlines() if '"PyStemmer==' not in l))
    assert question_speed.hidden_from(repo_root) == []
    assert question_speed.hidden_from(before) == ["Stemmer"]
    # the wrapper's preamble, run: snowballstemmer then stems in pure Python
    script = question_speed.wrapper(before, tmp_path).read_text()
    preamble = script.split('-c "', 1)[1].split("sys.meta_path", 1)[0]
    probe = preamble + "import snowballstemmer; print(type(snowballstemmer.stemmer('english')).__module__)"
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert got == "snowballstemmer.english_stemmer"
