"""MiniLM's weights read by hand from the safetensors file (provrag/embeddings/tensors.py): the
same tensors as safetensors' own reader, without mapping the file (its touched pages counted in
a cold ask's peak RSS, issue 30)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from provrag.embeddings import minilm
from provrag.embeddings.tensors import TableRows, TensorFile

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
        table = ours["embeddings.word_embeddings.weight"]
        word = TableRows(WEIGHTS, "embeddings.word_embeddings.weight")
        ids = np.array([[101, 7592, 102, 0], [101, 30521, 2023, 102]])
        assert word[ids].shape == (2, 4, 384) and np.array_equal(word[ids], table[ids])
        assert word.have.sum() == 6                    # the distinct rows asked for, read once
        word.WHOLE_TABLE_AT = 10                       # an index's passes: the table read at once
        many = np.arange(0, len(table), 97)
        assert np.array_equal(word[many], table[many]) and word.have.all()
        assert np.array_equal(word[ids], table[ids])
        with pytest.raises(IndexError):
            word[np.array([len(table)])]
    finally:
        ours.close()


def _mappings_of_the_weights() -> int:
    with open("/proc/self/maps") as f:
        return sum(str(WEIGHTS.resolve()) in line for line in f)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc/self/maps")
def test_reading_tensors_maps_nothing_of_the_file():
    before = _mappings_of_the_weights()
    ours = TensorFile(WEIGHTS)
    try:
        got = [ours[name] for name in ours.header if name != "__metadata__"]
        assert len(got) > 100 and _mappings_of_the_weights() == before
    finally:
        ours.close()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc/self/maps")
def test_minilm_reads_its_word_rows_and_maps_nothing_of_the_file():
    """The vocabulary table's rows a pass uses are read from the file (tensors.TableRows): mapped,
    each row's page and the cached pages around it stood in the process's memory (~20 MB after a
    question's paragraphs). The vectors are those of the whole table's rows."""
    emb = minilm.MiniLMEmbedder(int8=True)
    texts = ["Who leads the Halcyon commissioning team?",
             " ".join(f"valve {n} of circuit {n * 7} passed its pressure test" for n in range(40))]
    got = emb.embed(texts)
    assert _mappings_of_the_weights() == 0
    ours = TensorFile(WEIGHTS)
    try:
        table = ours["embeddings.word_embeddings.weight"]
    finally:
        ours.close()
    ids = np.array([seq for seq, _ in emb.pieces(texts[:1])])
    assert np.array_equal(emb._bert.word[ids], table[ids])
    assert got.shape == (2, 384) and np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
