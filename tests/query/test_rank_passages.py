"""The order of the passages the reader reads from (issue 26, lane recall): the first
`reader_passages` retrieved passages are ordered by reciprocal rank fusion of retrieval's rank
and the reader's passage head (engines/offline/answer/reading.rank_passages), not by the head
alone. Over the real documents of ../shared/corpora/small."""
from __future__ import annotations

import re

import pytest

from provrag.config import load_config
from provrag.pipelines.ask import run_ask

pytestmark = pytest.mark.usefixtures("shared")


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, small_corpus):
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("small-index") / "idx"
    run_index(small_corpus, out, load_config())
    return out


def _extract(res) -> dict:
    """The kept attempt's reading (what the offline engine read, in the trace)."""
    for stage in res.trace.get("stages") or []:
        if stage.get("name") == "synthesis" and (stage.get("data") or {}).get("extract"):
            return stage["data"]["extract"]
    return {}


def test_the_page_retrieval_ranks_first_is_read_though_the_head_ranks_it_lower(small_index):
    """R-FAQ.pdf p. 7 (§2.1): "R was initially written by Ross Ihaka and Robert Gentleman at the
    Department of Statistics of the University of Auckland …". The passage head alone put that
    passage below three others about R's manuals and extensions, so its sentence was never read
    and the answer led with "'Writing R Extensions' … describes the process of creating R add-on
    packages" (p. 11)."""
    res = run_ask("Who originally wrote R, and where?", small_index, load_config(), save=False)
    assert not res.abstained, res.trace.get("attempts")
    assert res.sources[0].path.endswith("R-FAQ.pdf") and res.sources[0].page_start == 7, res.sources[0]
    lead = re.split(r"\s*\[Data:", res.answer, maxsplit=1)[0]
    assert "Ross Ihaka and Robert Gentleman" in lead, res.answer


def test_the_fused_order_keeps_every_passage_and_the_heads_own_order_for_the_closest(small_index):
    """The fusion re-orders what is read, it drops nothing: every retrieved passage is in the read
    order once. The head's own order (its probabilities, best first) stays what an abstention
    lists as its closest passages and what the trace shows as `passages`."""
    cfg = load_config()
    res = run_ask("Who originally wrote R, and where?", small_index, cfg, save=False)
    info = _extract(res)
    read_order, by_head = info.get("read_order") or [], info.get("passage_order") or []
    assert sorted(read_order) == sorted(by_head) == list(range(len(read_order)))
    assert len(read_order) >= cfg.search.reader_passages
    probs = [p["prob"] for p in info.get("passages") or []]
    assert len(probs) == cfg.search.reader_passages and probs == sorted(probs, reverse=True)
    assert [p["record"] for p in info["passages"]] == by_head[:len(probs)]
    assert read_order != by_head, "the fused order equals the head's alone on this question"
