"""`make test` runs the real-model module in a second pytest beside the rest, and the rest on two
pytest-xdist workers: both runs start, the second's report follows the first's, and the target
fails when either fails. The Makefile runs for real; the two pytest runs are a stand-in `python`
that records its arguments and exits with the status a test gives it (the suite itself is not run
again here)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

REAL_LLM_TESTS = "tests/engines/openai/test_real_llm.py"


def make_test(repo_root, tmp_path, main_rc: int, llm_rc: int) -> tuple[subprocess.CompletedProcess, list[str]]:
    bin_dir = tmp_path / f"bin-{main_rc}-{llm_rc}"
    bin_dir.mkdir()
    calls = tmp_path / f"calls-{main_rc}-{llm_rc}"
    stand_in = bin_dir / "python"
    stand_in.write_text(f"""#!/bin/bash
echo "$*" >> {calls}
case "$*" in
  *--ignore*) echo "main run"; exit {main_rc};;
  *) echo "real-model run"; exit {llm_rc};;
esac
""")
    stand_in.chmod(0o755)
    run = subprocess.run(["make", "-s", "-C", str(repo_root), "test", f"BIN={bin_dir}", "TSTAMP="],
                         capture_output=True, text=True, timeout=60)
    return run, calls.read_text().splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("main_rc, llm_rc", [(0, 0), (1, 0), (0, 1)])
def test_the_real_model_module_runs_beside_the_rest_and_either_failing_fails(repo_root, tmp_path, main_rc, llm_rc):
    run, calls = make_test(repo_root, tmp_path, main_rc, llm_rc)
    main = [c for c in calls if f"--ignore {REAL_LLM_TESTS}" in c]
    beside = [c for c in calls if c.endswith(REAL_LLM_TESTS) and "--ignore" not in c]
    assert len(main) == 1 and len(beside) == 1, calls   # each pytest once: the module in one, the rest in the other
    assert main[0].startswith("-m pytest") and beside[0].startswith("-m pytest")
    # the rest on both cores: two pytest-xdist workers, a test file to a worker
    assert "-n 2 --dist loadfile" in main[0] and "-n" not in beside[0].split(), calls
    out = run.stdout
    # the main run's report, then the header naming the module and its exit status, then its report
    assert out.index("main run") < out.index(f"{REAL_LLM_TESTS}, run beside the rest (exit {llm_rc})") \
        < out.index("real-model run")
    assert (run.returncode == 0) == (main_rc == 0 and llm_rc == 0), (run.returncode, run.stderr)
