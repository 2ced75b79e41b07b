"""The real llama.cpp server (tests/real_llm_server.py) for tests marked `real_llm`.

They are skipped with the reason when .venv-llm is missing (`make llm` builds it; CI does).
"""
from __future__ import annotations

import pytest

from tests.real_llm_server import TEST_KEY, LlamaCppServer, missing_reason


def pytest_collection_modifyitems(config, items):
    reason = missing_reason()
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "real_llm" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="module")
def real_llm_server(tmp_path_factory):
    """llama.cpp's server with SmolLM2-135M (chat model and embedding alias) behind a counting
    proxy on free 127.0.0.1 ports, one per test module; it wants TEST_KEY, from TEST_KEY_ENV."""
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    with LlamaCppServer(tmp_path_factory.mktemp("llama-server"), api_key=TEST_KEY) as server:
        yield server
