"""MiniLM's weights read by hand from the safetensors file (provrag/embeddings/tensors.py): the
same tensors as safetensors' own reader, without mapping the file (its touched pages counted in
a cold ask's peak RSS, issue 30)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from provrag.embeddings import minilm
from provrag.embeddings.tensors import TensorFile, mapped_tensor

try:
    WEIGHTS = minilm.model_dir() / "model.safetensors"
except minilm.MiniLMUnavailable:  # pragma: no cover - `make install` installs the model
    pytest.skip("MiniLM model files not installed", allow_module_level=True)


def test_every_tensor_is_the_one_safetensors_reads():
    from safetensors import safe_open

    ours = TensorFile(WEIGHTS)
    try:
        with safe_open(str(WEIGHTS), framework="numpy") as theirs:
            names = list(theirs.keys())
            for name in names:
                a, b = theirs.get_tensor(name), ours[name]
                assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
        assert len(names) > 100
        word = mapped_tensor(WEIGHTS, "embeddings.word_embeddings.weight")
        assert np.array_equal(word, ours["embeddings.word_embeddings.weight"])
    finally:
        ours.close()


def _mappings_of_the_weights() -> int:
    with open("/proc/self/maps") as f:
        return sum(str(WEIGHTS.resolve()) in line for line in f)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc/self/maps")
def test_reading_tensors_maps_nothing_of_the_file():
    before = _mappings_of_the_weights()   # a MiniLM loaded earlier maps its word table, no more
    ours = TensorFile(WEIGHTS)
    try:
        got = [ours[name] for name in ours.header if name != "__metadata__"]
        assert len(got) > 100 and _mappings_of_the_weights() == before
    finally:
        ours.close()
