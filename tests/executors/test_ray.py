"""The `ray` executor on a local Ray cluster (ray.init(num_cpus=2), started and stopped here):
the index it builds is the local executor's, table for table and row for row, and a Ray task
that raises or dies costs only its item, as with the local executor; model calls stay in the
driver."""
from __future__ import annotations

import os
import time
from pathlib import Path

import polars as pl
import pytest

try:
    import ray
except ImportError:  # the `ray` extra (`make test` installs it): the fixture below says so
    ray = None

from pipelines.index import run_index
from provrag.config import load_config
from provrag.engines.offline import OfflineEngine
from provrag.executors import ExecutorError, make_executor
from provrag.executors.base import CRASHED
from provrag.index import load as load_module
from provrag.index.chunk import chunk_text
from provrag.index.extract import extract_stage
from provrag.index.tables import frame
from provrag.store import schema
from tests import components
from tests.executors.test_local import add, die_on_three, fail_on_three, failed, pid_of, slow_square


@pytest.fixture(autouse=True)
def _ray_installed():
    components.ray()  # skipped without it; in CI a failure naming it


def test_no_cluster_at_auto_is_a_one_line_error(monkeypatch):
    """`address = "auto"` joins a running cluster; where none runs, one line says how to get one."""
    if ray.is_initialized():
        pytest.skip("a Ray is running in this process")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ExecutorError) as error:
        make_executor(load_config(overrides={"executor": {"kind": "ray", "address": "auto"}}))
    assert "\n" not in str(error.value) and "ray start --head" in str(error.value)
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
    assert not ray.is_initialized()


@pytest.fixture()
def executor(cluster):
    ex = make_executor(load_config(overrides={"executor": {"kind": "ray"}}))
    yield ex
    ex.close()
    assert ray.is_initialized()  # a Ray the caller started is the caller's to stop


def test_ray_results_come_in_input_order_from_worker_processes(executor):
    assert executor.name == "ray" and executor.workers == 2
    assert list(executor.map(slow_square, range(8), kind="cpu")) == [n * n for n in range(8)]
    assert os.getpid() not in set(executor.map(pid_of, range(4), kind="isolated"))
    assert set(executor.map(pid_of, range(4), kind="model")) == {os.getpid()}  # model calls stay here
    assert list(executor.map(add, [1, 2, 3], kind="cpu", shared=10)) == [11, 12, 13]


def test_a_ray_task_that_raises_or_dies_costs_only_its_item(executor):
    got = list(executor.map(fail_on_three, range(5), kind="cpu", failed=failed))
    assert got == [100, 101, 102, "failed 3: ValueError: no 3", 104]
    got = list(executor.map(die_on_three, range(5), kind="isolated", failed=failed))
    assert got == [100, 101, 102, f"failed 3: {CRASHED}", 104]
    with pytest.raises(ValueError, match="no 3"):
        list(executor.map(fail_on_three, range(5), kind="cpu"))


class RecordingEngine(OfflineEngine):
    """The offline engine under another name, noting the process of every extraction call it
    makes in this object (a copy in a Ray worker notes it in the copy)."""

    def __init__(self, cfg, name: str):
        super().__init__(cfg)
        self.name, self.pids = name, []

    def extract_graph(self, units):
        self.pids.append(os.getpid())
        return super().extract_graph(units)


def test_model_calls_stay_in_the_driver_while_offline_extraction_goes_to_ray(executor, small_corpus):
    """A model engine's batches run where its one client (concurrency, rate limit) lives; the
    offline engine's run in Ray workers — and both give the same graph."""
    cfg = load_config(overrides={"extract": {"batch_units": 16}})
    text = (small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")
    rows = [{"id": f"u{i}", "text": u["text"], "is_skeleton": True} for i, u in enumerate(chunk_text(text, None, 120, 0))]
    units = frame(schema.TEXT_UNITS, rows)
    model, offline = RecordingEngine(cfg, "model-server"), RecordingEngine(cfg, "offline")
    by_model = extract_stage(units, model, cfg, executor=executor)
    on_ray = extract_stage(units, offline, cfg, executor=executor)
    assert len(model.pids) > 2 and set(model.pids) == {os.getpid()}
    assert offline.pids == []  # every batch ran in a worker's copy of the engine
    assert by_model[0].height > 20 and all(a.equals(b) for a, b in zip(by_model, on_ray))


TABLES = ("documents", "text_units", "embeddings", "keywords", "entities", "relationships", "communities",
          "community_reports", "terms", "ids")


@pytest.mark.slow  # ~20 s: two index runs and a Ray start
def test_the_index_ray_builds_is_the_local_one(cluster, small_corpus, tmp_path, monkeypatch):
    """Every per-item stage through Ray (parsing too: the pool threshold set to 0 for both
    runs), every parquet table compared row for row."""
    monkeypatch.setattr(load_module, "POOL_MIN_SECONDS", 0.0)
    started = time.perf_counter()
    local = run_index(small_corpus, tmp_path / "local", load_config(overrides={"load": {"workers": 2}}))
    on_ray = run_index(small_corpus, tmp_path / "ray", load_config(overrides={"executor": {"kind": "ray"}}))
    assert local.mode == on_ray.mode == "first" and local.text_units == on_ray.text_units
    names = {p.name for p in (tmp_path / "local").glob("*.parquet")}
    assert names == {p.name for p in (tmp_path / "ray").glob("*.parquet")} and names >= {f"{t}.parquet" for t in TABLES}
    for name in sorted(names):
        a, b = pl.read_parquet(tmp_path / "local" / name), pl.read_parquet(tmp_path / "ray" / name)
        drop = [c for c in ("period",) if c in a.columns]  # the run's date
        assert a.height > 0 and a.drop(drop).equals(b.drop(drop)), name
    units = pl.read_parquet(Path(tmp_path / "ray" / "text_units.parquet"))
    assert units.height > 100  # a real index, not two empty ones
    print(f"local + ray index of the small corpus: {time.perf_counter() - started:.1f} s")
