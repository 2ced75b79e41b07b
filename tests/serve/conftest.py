"""What the serve tests share: an index of ../shared/corpora/small and `provrag serve` running on
it as a subprocess on a free port, the way a user starts it."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

START_TIMEOUT_S = 60     # on an idle machine; start_timeout_s() scales it with the load


def start_timeout_s() -> float:
    """How long `provrag serve` may take to answer its health check: 60 s per core's worth of
    runnable processes (an idle 2-core machine: 60 s; one at load 20, shared by five developers:
    10 min), so a loaded machine is not reported as a hang, and a real hang still fails, with the
    server's own output."""
    return min(600.0, START_TIMEOUT_S * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def provrag_command(*args: str) -> list[str]:
    """The venv's `provrag` console script."""
    script = Path(sys.executable).parent / "provrag"
    assert script.exists(), f"no console script at {script}"
    return [str(script), *args]


class ServerProcess:
    """`provrag serve --index I --port P [extra…]` until stopped; `url` once /v1/health answers."""

    def __init__(self, index: Path, env: dict, *extra: str, host: str = "127.0.0.1", token: str | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.log = Path(env["XDG_DATA_HOME"]) / f"serve-{self.port}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(provrag_command("serve", "--index", str(index), "--host", host,
                                                         "--port", str(self.port), *extra),
                                         env=env, stdout=out, stderr=subprocess.STDOUT)
        self.wait_ready()

    def wait_ready(self) -> None:
        import httpx

        allowed = start_timeout_s()
        deadline = time.monotonic() + allowed
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"provrag serve exited {self.proc.returncode}: {self.output()[-800:]}")
            try:
                # a try may wait 10 s: on a loaded machine a 2 s try can time out on every attempt
                if httpx.get(self.url + "/v1/health", headers=self.headers, timeout=10).status_code in (200, 401):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"provrag serve did not answer /v1/health within {allowed:.0f} s (load "
                             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); it printed: {self.output()[-800:]}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@pytest.fixture(scope="module")
def serve_env(tmp_path_factory) -> dict:
    """The environment of the server and the CLI calls: traces' user folders under a temp folder."""
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture(scope="module")
def small_served_index(tmp_path_factory, small_corpus) -> Path:
    """An offline index of ../shared/corpora/small (a few seconds); the tests write its traces."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("served") / "idx"
    run_index(small_corpus, out, load_config())
    return out


@pytest.fixture(scope="module")
def server(small_served_index, serve_env):
    """`provrag serve` over the small index, one per test module."""
    with ServerProcess(small_served_index, serve_env) as running:
        yield running
