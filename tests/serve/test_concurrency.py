"""Asks side by side in one server: they overlap (a compute slot per core), each takes its share
of the cores, and one question's readings never stand for another's."""
from __future__ import annotations

import os
import threading

import pytest

from provrag.cores import cores_now
from provrag.serve.queue import ComputeQueue
from provrag.serve.service import COMPUTE_SLOTS, MAX_WAIT_S, MAX_WAITING

CORES = os.cpu_count() or 1


@pytest.mark.skipif(CORES < 2, reason="overlap needs two cores")
def test_two_asks_at_once_overlap_each_on_its_share_of_the_cores():
    queue = ComputeQueue(COMPUTE_SLOTS, MAX_WAITING, MAX_WAIT_S)
    both_in = threading.Barrier(2, timeout=10)   # passes only when both hold a slot at once
    alone, shares, errors = [], [], []

    def ask(first: bool):
        try:
            with queue.turn():
                if first:
                    alone.append(cores_now(CORES))
                    started.set()
                both_in.wait()
                shares.append(cores_now(CORES))
                both_in.wait()                     # neither leaves before both have read their share
        except Exception as e:                     # a broken barrier: the asks ran one after the other
            errors.append(e)

    started = threading.Event()
    first = threading.Thread(target=ask, args=(True,))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=ask, args=(False,))
    second.start()
    first.join(30)
    second.join(30)
    assert not errors, f"the second ask waited for the first: {errors}"
    assert alone == [(CORES, True)]                  # alone: every core
    assert shares == [(CORES // 2, True)] * 2        # side by side: half each
    assert cores_now(CORES) == (CORES, False)        # outside a server: nothing limits a CLI call
    assert queue.running == 0 and queue.admitted == 0


def test_one_question_readings_never_stand_for_another_asked_at_the_same_time():
    from provrag.engines.offline.answer.reading import memoised

    sentence = "Debian packages are built with dpkg-buildpackage."
    reads = []

    def read(question: str, prob: float):
        def model(texts):
            reads.append(question)
            return [prob] * len(texts)
        return model

    got = {}
    a_read, b_read = threading.Event(), threading.Event()

    def ask_a():
        got["a1"] = memoised("How is a package built?", "answer", [sentence], read("a", 0.9))
        a_read.set()
        assert b_read.wait(10)                   # the other question was read meanwhile
        got["a2"] = memoised("How is a package built?", "answer", [sentence], read("a", 0.9))

    def ask_b():
        assert a_read.wait(10)
        got["b"] = memoised("Who maintains the FHS?", "answer", [sentence], read("b", 0.1))
        b_read.set()

    threads = [threading.Thread(target=ask_a), threading.Thread(target=ask_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert got == {"a1": [0.9], "b": [0.1], "a2": [0.9]}
    assert reads == ["a", "b"]                   # a's second attempt re-read nothing


def test_a_served_index_reads_each_unit_row_once_for_every_request(dulce_v3):
    from provrag.serve.opened import OpenIndex
    from provrag.store.units import fetch_units

    opened = OpenIndex(dulce_v3)
    try:
        ids = [r[0] for r in opened.reader.con.execute("SELECT id FROM text_units ORDER BY id LIMIT 3").fetchall()]
        first, second = opened.lend(), opened.lend()        # two requests, a cursor each
        rows = fetch_units(first, ids[:2])
        second.con = None                                   # the second request's reads may not touch DuckDB
        again = fetch_units(second, ids[1::-1])
        assert list(again) == [ids[1], ids[0]] and again[ids[0]] is rows[ids[0]]
        second.con = first.con
        more = fetch_units(second, ids)                     # only the row not read yet is fetched
        assert list(more) == ids and more[ids[2]].text and more[ids[2]] is fetch_units(first, [ids[2]])[ids[2]]
        opened.give_back(first, reusable=True)
        opened.give_back(second, reusable=False)
    finally:
        opened.retire()
