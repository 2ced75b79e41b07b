"""bench/retry_from.py measures what ask's wider routes change: over ../shared/corpora/small, with
every route tried (--retry-from 0) and with the default, the same answers, fewer attempts, and a
table of the abstentions by their first reading. Five of eval/small's questions keep it short."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import retry_from

pytestmark = pytest.mark.usefixtures("shared")
EVAL_SMALL = Path(retry_from.__file__).resolve().parents[1] / "eval" / "small"


def _subset(folder: Path) -> Path:
    """Two answerable and three unanswerable questions of eval/small (the index is given apart)."""
    folder.mkdir()
    for name, n in (("questions.jsonl", 2), ("unanswerable.jsonl", 3)):
        lines = (EVAL_SMALL / name).read_text().splitlines()[:n]
        (folder / name).write_text("\n".join(lines) + "\n")
    return folder


def test_every_route_against_the_default_same_answers_fewer_attempts(small_index, tmp_path, capsys):
    import provrag.pipelines.ask as ask

    saver = ask.save_trace
    folder = _subset(tmp_path / "small")
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    retry_from.run(str(folder), str(small_index), str(before), 0.0)
    retry_from.run(str(folder), str(small_index), str(after), 0.2)
    assert ask.save_trace is saver   # the trace catcher is put back
    a = [json.loads(x) for x in before.read_text().splitlines()]
    b = [json.loads(x) for x in after.read_text().splitlines()]
    assert [r["id"] for r in a] == [r["id"] for r in b] and len(a) == 5
    assert [r["answer"] for r in a] == [r["answer"] for r in b]
    # the three questions about other subjects abstain: through every route, then after one attempt
    gone = [(x, y) for x, y in zip(a, b) if x["kind"] == "unanswerable"]
    assert all(x["abstained"] and y["abstained"] for x, y in gone)
    assert all(len(x["attempts"]) == 3 and len(y["attempts"]) == 1 for x, y in gone)
    # check_qa.py's gold-page rule, on the two answerable ones ("Why is R called R?", the second, is answered from p. 8)
    assert [r.get("gold_first") for r in a] == [r.get("gold_first") for r in b] == [True, False, None, None, None]

    retry_from.compare(str(before), str(after))
    retry_from.table([str(before)])
    out = capsys.readouterr().out
    assert "5 questions: answers differ 0, abstained differs 0" in out
    assert "attempts 9 -> 3" in out            # the abstentions' attempts
    assert "| below 0.2 | 3 | 0 | 0 |" in out   # all three read below 0.2 first, none answered later
