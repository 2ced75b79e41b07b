"""The MiniLM model is loaded once per process even when the first requests come at once.

A server's first asks each make a MiniLMEmbedder (the answer's reranking and the coverage check
do); the model was looked up in a process-wide dict and, when missing, loaded — by every thread
that found it missing: 8 requests at once hashed the 90 MB weights 8 times and built 8 models."""
from __future__ import annotations

import threading

from provrag.embeddings import minilm
from tests import components


def test_requests_making_the_embedder_at_once_load_the_model_once(monkeypatch):
    components.minilm_weights()  # no model package: skipped (in CI: fails)
    built = []
    real = minilm.Bert

    def counted(folder):
        built.append(folder)
        return real(folder)

    monkeypatch.setattr(minilm, "Bert", counted)
    monkeypatch.setattr(minilm, "_MODELS", {})
    start = threading.Barrier(8)
    made, errors = [], []

    def make():
        start.wait()
        try:
            made.append(minilm.MiniLMEmbedder())
        except Exception as e:   # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(built) == 1, f"the model was loaded {len(built)} times"
    assert len({id(e._bert) for e in made}) == 1
    text = "The reactor's coolant pump was replaced in 2019."
    assert (made[0].embed([text]) == made[-1].embed([text])).all()
