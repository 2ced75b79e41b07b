"""bench/retrieval_recall.py: recall@k of retrieval alone, over a real index (the three SQuAD PDFs
of squad_subset_index). The rank it reports must be that of a unit on a gold page by check_qa.py's
rule, and a question about a document the index does not hold has none."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import retrieval_recall

pytestmark = pytest.mark.usefixtures("shared")


def test_each_rank_is_the_first_unit_on_a_gold_page(squad_subset_index, squad, squad_subset, tmp_path):
    from provrag.config import load_config
    from provrag.query.retrieve import retrieve_units
    from provrag.store.reader import open_index

    qs = [json.loads(line) for line in (squad / "questions.jsonl").read_text().splitlines() if line.strip()]
    inside = [q for q in qs if q["document"] in squad_subset][:12]
    outside = [q for q in qs if q["document"] not in squad_subset][:3]
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in inside + outside))
    out = tmp_path / "ranks.json"
    assert retrieval_recall.main(["--set", "subset", str(squad_subset_index), str(qfile), "--out", str(out)]) == 0
    report = json.loads(out.read_text())["subset"]
    by_id = {r["id"]: r for r in report["items"]}
    assert all(by_id[q["id"]]["gold_rank"] is None and by_id[q["id"]]["document_rank"] is None for q in outside)
    reader = open_index(Path(squad_subset_index))
    for q in inside:
        rank = by_id[q["id"]]["gold_rank"]
        found = retrieve_units(reader, q["question"], load_config(), k=retrieval_recall.POOL,
                               pool=retrieval_recall.POOL).candidates
        on = [i for i, c in enumerate(found) if Path(c["path"]).name == q["document"]
              and set(range(c["page_start"], c["page_end"] + 1)) & set(q["pages"])]
        assert rank == (on[0] if on else None), q["id"]
    assert report["questions"] == len(inside) + len(outside)
    assert report["recall@100"] == sum(by_id[q["id"]]["gold_rank"] is not None for q in inside) / report["questions"]
