"""The real llama.cpp server (tests/real_llm_server.py) for tests marked `real_llm`.

They are skipped with the reason when .venv-llm is missing (`make llm` builds it); in CI, where
.ci/run builds it, they fail naming it (tests/components.py).
"""
from __future__ import annotations

import pytest

from tests import components
from tests.real_llm_server import TEST_KEY, LlamaCppServer


def pytest_runtest_setup(item):
    if "real_llm" in item.keywords:
        components.llama_server()


@pytest.fixture(scope="module")
def real_llm_server(tmp_path_factory):
    """llama.cpp's server with SmolLM2-135M (chat model and embedding alias) behind a counting
    proxy on free 127.0.0.1 ports, one per test module; it wants TEST_KEY, from TEST_KEY_ENV."""
    components.llama_server()
    with LlamaCppServer(tmp_path_factory.mktemp("llama-server"), api_key=TEST_KEY) as server:
        yield server
