"""A held-out set that tests read is no longer held out (issue 29 item 8): eval/small-holdout's
claims and R FAQ had become test inputs, so it was renamed the dev set eval/small and a new
held-out set written (eval/heldout, by the sets lane). This keeps the new one out of the tests.

Which sets are held out is read from bench/qa_sets.py's HELD_OUT_SETS and eval/README.md's
**HELD OUT** marks (the two must agree); the held-out items themselves are never opened here.
A test file may name a held-out folder only if it is the sets' own validity check
(tests/bench/test_qa_sets.py: each item's gold strings are on its pages — checking an item is
not tuning on it, eval/README.md).
"""
from __future__ import annotations

import re
from pathlib import Path

from bench import qa_sets

ROOT = Path(__file__).resolve().parents[1]
VALIDITY_CHECK = Path("tests/bench/test_qa_sets.py")


def marked_held_out() -> set[str]:
    """Folders whose row in eval/README.md's table says **HELD OUT**."""
    rows = [line for line in (ROOT / "eval" / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `")]
    return {re.match(r"\| `([^`/]+)/?`", row).group(1) for row in rows if "**HELD OUT**" in row}


def test_the_held_out_sets_are_named_alike_in_the_bench_and_the_readme():
    assert set(qa_sets.HELD_OUT_SETS) == marked_held_out() and qa_sets.HELD_OUT_SETS
    assert not set(qa_sets.HELD_OUT_SETS) & set(qa_sets.SETS)  # `make eval` never measures one
    assert all((ROOT / "eval" / name).is_dir() for name in qa_sets.HELD_OUT_SETS)


def test_no_test_but_the_sets_validity_check_names_a_held_out_set():
    names = "|".join(map(re.escape, qa_sets.HELD_OUT_SETS))
    named = re.compile(rf"""(?<![\w-])({names})(?![\w-])""")
    readers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
                     if p.relative_to(ROOT) not in (VALIDITY_CHECK, Path(__file__).relative_to(ROOT))
                     and named.search(p.read_text(encoding="utf-8")))
    assert readers == [], f"tests that name a held-out set: {readers}"

