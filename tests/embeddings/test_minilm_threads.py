"""MiniLM's per-process state under requests side by side: the model is loaded once even when
the first requests come at once, and the BLAS thread limit they share is left as it was found.

A server's first asks each make a MiniLMEmbedder (the answer's reranking and the coverage check
do); the model was looked up in a process-wide dict and, when missing, loaded — by every thread
that found it missing: 8 requests at once hashed the 90 MB weights 8 times and built 8 models."""
from __future__ import annotations

import threading

import pytest

from provrag.embeddings import minilm
from tests import components


def test_requests_making_the_embedder_at_once_load_the_model_once(monkeypatch):
    components.minilm_weights()  # no model package: skipped (in CI: fails)
    built = []
    real = minilm._Bert

    def counted(folder):
        built.append(folder)
        return real(folder)

    monkeypatch.setattr(minilm, "_Bert", counted)
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


def test_requests_limiting_blas_side_by_side_leave_it_as_they_found_it():
    """One request's pass (single-threaded BLAS, as every request in a server) starts, a second
    starts, the first ends while the second still runs: the second keeps its one thread, and
    once both have ended BLAS has its threads back."""
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    if not before or max(before) == 1:
        pytest.skip("BLAS runs one thread here: a limit to one cannot be told from none")
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with minilm._blas_threads(1):
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second():
        first_in.wait(10)
        with minilm._blas_threads(1):
            second_in.set()
            first_out.wait(10)
            seen["second, alone"] = blas_threads()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["second, alone"] == [1] * len(before)
    assert blas_threads() == before
