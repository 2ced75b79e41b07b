"""The executor seam (provrag/executors/) with the local executor: order kept, an item that
raises or kills its worker costs only itself, model items stay in this process, the cache in
front of a map, and the settings that choose an executor (one-line errors, exit 2)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from provrag.config import ConfigError, load_config
from provrag.executors import ExecutorError, cached_map, default_executor, make_executor
from provrag.executors.base import CRASHED
from provrag.executors.local import LocalExecutor
from provrag.store.cache import Cache


def slow_square(n: int) -> int:
    """Later items finish first: the pool's completion order is the reverse of the input's."""
    time.sleep(0.05 * (4 - n % 5))
    return n * n


def pid_of(_item) -> int:
    return os.getpid()


def fail_on_three(n: int) -> int:
    if n == 3:
        raise ValueError(f"no {n}")
    return n + 100


def die_on_three(n: int) -> int:
    if n == 3:
        os._exit(3)  # a native crash: the worker process is gone
    return n + 100


def add(shared: int, n: int) -> int:
    return shared + n


def failed(item, reason: str) -> str:
    return f"failed {item}: {reason}"


@pytest.mark.parametrize("kind", ["isolated", "cpu", "model"])
def test_results_come_in_input_order(kind):
    items = list(range(8))
    assert list(LocalExecutor(2).map(slow_square, items, kind=kind)) == [n * n for n in items]


def test_isolated_items_run_in_worker_processes_and_the_rest_here():
    with LocalExecutor(2) as ex:
        isolated = set(ex.map(pid_of, range(4), kind="isolated"))
        here = set(ex.map(pid_of, range(4), kind="cpu")) | set(ex.map(pid_of, range(4), kind="model"))
    assert os.getpid() not in isolated and len(isolated) >= 1
    assert here == {os.getpid()}
    assert set(LocalExecutor(1).map(pid_of, range(3), kind="isolated")) == {os.getpid()}  # one worker: no pool


@pytest.mark.parametrize("kind", ["isolated", "cpu"])
def test_an_item_that_raises_is_reported_on_that_item_only(kind):
    got = list(LocalExecutor(2).map(fail_on_three, range(5), kind=kind, failed=failed))
    assert got == [100, 101, 102, "failed 3: ValueError: no 3", 104]
    with pytest.raises(ValueError, match="no 3"):  # nobody to report it to: it propagates
        list(LocalExecutor(2).map(fail_on_three, range(5), kind=kind))


def test_a_crashed_worker_costs_only_its_item():
    got = list(LocalExecutor(2).map(die_on_three, range(6), kind="isolated", failed=failed))
    assert got == [100, 101, 102, f"failed 3: {CRASHED}", 104, 105]


def test_the_shared_object_reaches_every_item():
    for kind in ("isolated", "cpu", "model"):
        assert list(LocalExecutor(2).map(add, [1, 2, 3], kind=kind, shared=10)) == [11, 12, 13]


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        LocalExecutor(1).map(add, [1], kind="gpu")


def test_cached_map_computes_only_what_the_cache_lacks_and_keeps_order(tmp_path):
    cache = Cache(tmp_path / "c", None, namespace="t")
    computed: list[int] = []

    def square(n: int) -> int:
        computed.append(n)
        return n * n

    def run(items, keep=None):
        return list(cached_map(LocalExecutor(1), square, items, kind="cpu", cache=cache, key=lambda n: f"k{n}",
                               keep=keep))

    assert run([1, 2, 3], keep=lambda r: r != 4) == [1, 4, 9]  # 4 is not kept (a stand-in, say)
    computed.clear()
    assert run([0, 1, 2, 3, 5]) == [0, 1, 4, 9, 25]
    assert computed == [0, 2, 5]  # 1 and 3 came from the cache, 2 was never stored
    computed.clear()
    assert run([3, 1]) == [9, 1] and computed == []


def test_default_executor_uses_load_workers_unless_num_workers_is_set():
    cfg = load_config(overrides={"load": {"workers": 3}})
    assert default_executor(cfg).workers == 3
    assert default_executor(cfg.replace("executor", num_workers=1)).workers == 1
    assert make_executor(cfg).name == "local"


@pytest.mark.parametrize("section, message", [
    ({"kind": "spark"}, "'executor.kind' must be one of 'local', 'ray'"),
    ({"address": "http://head:80"}, "'executor.address' must be"),
    ({"num_workers": -2}, "'executor.num_workers' must be an integer ≥ 0"),
])
def test_bad_executor_settings_are_one_line_config_errors(section, message):
    with pytest.raises(ConfigError, match=message):
        load_config(overrides={"executor": section})


def test_ray_chosen_but_not_installed_says_how_to_install_it(tmp_path, monkeypatch, small_corpus):
    """Through the CLI, with an import of `ray` that fails as it does where Ray is missing."""
    fake = tmp_path / "no_ray"
    (fake / "ray").mkdir(parents=True)
    (fake / "ray" / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    conf = tmp_path / "ray.toml"
    conf.write_text('[executor]\nkind = "ray"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "provrag", "index", str(small_corpus), "--out", str(tmp_path / "idx"),
                        "--config", str(conf)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "pip install 'provrag[ray]'" in lines[0], r.stderr
    assert not (tmp_path / "idx").exists()
    monkeypatch.setitem(sys.modules, "ray", None)  # the library call says the same
    with pytest.raises(ExecutorError, match=r"pip install 'provrag\[ray\]'"):
        make_executor(load_config(overrides={"executor": {"kind": "ray"}}))
