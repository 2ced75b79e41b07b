"""Shared test fixtures: where ../shared is, and small real corpora copied to tmp folders."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROVRAG_SHARED", ROOT.parent / "shared"))
SMALL = SHARED / "corpora" / "small"
BAD = SHARED / "corpora" / "bad"
DULCE = SHARED / "fixtures" / "graphrag-dulce"
EVAL_DEV = SHARED / "eval" / "dev"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_collection_modifyitems(config, items):
    if not SHARED.exists():
        skip = pytest.mark.skip(reason=f"shared material not found at {SHARED}")
        for item in items:
            if "shared" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.exists():
        pytest.skip(f"shared material not found at {SHARED}")
    return SHARED
