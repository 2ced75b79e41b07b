"""What the attack tests share: their budget (a short one in CI, a larger one for `make fuzz`),
and `provrag serve` on a real index, with and without a bearer token.

Budget: PROVRAG_FUZZ=full (what `make fuzz` sets) runs each property and each fuzzed operation
with the larger count; otherwise (CI, `make test`) with the short one. PROVRAG_FUZZ_SEED fixes
Hypothesis' seed for a rerun of one failure. Every test here carries the `fuzz` marker."""
from __future__ import annotations

import json
import os

import pytest

# the serve tests' server fixture, shared rather than copied (it runs on the index below)
from tests.serve.conftest import ServerProcess, server  # noqa: F401

FULL = os.environ.get("PROVRAG_FUZZ", "").strip().lower() == "full"
TOKEN = "attack-lane-token-7Qx"
TOKEN_ENV = "PROVRAG_ATTACK_TOKEN"


COUNTS = os.environ.get("PROVRAG_FUZZ_COUNTS")   # a file: one JSON line per figure (bench/fuzz.py reads it)
EXAMPLES: dict[str, int] = {}


def count(prop: str) -> None:
    """One more example of property `prop` (written to $PROVRAG_FUZZ_COUNTS at the session's end)."""
    EXAMPLES[prop] = EXAMPLES.get(prop, 0) + 1


def record(row: dict) -> None:
    if COUNTS:
        with open(COUNTS, "a") as f:
            f.write(json.dumps(row) + "\n")


@pytest.fixture(scope="session", autouse=True)
def examples_counted():
    yield
    for prop, n in EXAMPLES.items():
        record({"test": "property", "property": prop, "examples": n})


def budget(ci: int, full: int) -> int:
    """How many examples (or trials): `ci` in the normal suite, `full` under `make fuzz`."""
    return full if FULL else ci


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture(scope="session")
def serve_env(tmp_path_factory) -> dict:
    """The environment of servers and CLI calls: traces' user folders under a temp folder."""
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path_factory.mktemp("xdg")))


@pytest.fixture(scope="session")
def small_served_index(tmp_path_factory, small_corpus):
    """One offline index of ../shared/corpora/small for every attack test (built once: the
    suite's budget goes to attacks, not to rebuilding the same index per module)."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("attacked") / "idx"
    run_index(small_corpus, out, load_config())
    return out


@pytest.fixture(scope="module")
def guarded_server(small_served_index, serve_env):
    """`provrag serve --token-env` over the small index: every request needs the bearer token."""
    env = dict(serve_env, **{TOKEN_ENV: TOKEN})
    with ServerProcess(small_served_index, env, "--token-env", TOKEN_ENV, token=TOKEN) as running:
        yield running
