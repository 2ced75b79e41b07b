"""The vocabulary's terms as Arrow strings, built from numpy buffers (store/rows.strings_of):
the same strings pyarrow's own conversion gives, without importing pandas into a question."""
from __future__ import annotations

import numpy as np

from provrag.store.rows import strings_of


def test_terms_of_every_length_and_script_come_back_as_written():
    words = ["booktabs", "", "größe", "名前", "x" * 40, "a"]
    fixed = np.asarray([w.encode() for w in words], dtype=bytes)
    assert strings_of(fixed).to_pylist() == words
    assert strings_of(np.zeros(0, "S1")).to_pylist() == []
