"""An answer never says one thing twice, over the ten Debian manuals.

Text units overlap (`[chunk] overlap_tokens`), so a sentence near a unit's end stands in the next
unit too, cut differently ("… was the piggy bank,." / "… was the piggy bank, CHAPTER 6."). The
learned reader's answer added every further sentence the reader read as answering, and quoted such
a sentence from both units, taking the place of the one that answered."""
from __future__ import annotations

import itertools

import pytest

from provrag.config import load_config
from provrag.engines.offline.answer.wording import said_already
from provrag.pipelines.ask import run_ask

pytestmark = pytest.mark.usefixtures("shared")


def test_a_sentence_two_overlapping_units_hold_is_quoted_once(manuals_index):
    """man-q06 (eval/manuals): debian-faq.en.pdf lists the release names across two units."""
    res = run_ask("Which Toy Story character was Debian 10 named after?", manuals_index, load_config(), save=False)
    assert not res.abstained
    said = [c.sentence for c in res.citations]
    assert len(said) >= 2
    for a, b in itertools.combinations(said, 2):
        assert not said_already(a, [b]), f"said twice:\n{a}\n{b}"
    assert "Andy’s pet dog" in res.answer, res.answer


def test_said_already_is_equal_inside_or_nearly_the_same():
    first = "So far they have been characters taken from the Toy Story movies by Pixar. • hamm (Debian 2.0) was the piggy bank,."
    assert said_already(first.replace(",.", ", CHAPTER 6."), [first])       # the same sentence, cut at another place
    assert said_already("They have been characters taken from the Toy Story movies by Pixar.", [first])   # inside it
    assert not said_already("buster (Debian 10) was Andy’s pet dog.", [first])
