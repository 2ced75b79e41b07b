"""The Debian documentation packages train/ reads, fetched once per test module: with apt-get
download (the pinned versions, checked by sha256), as `make train` does, or from a folder
already holding the .deb files that PROVRAG_TRAIN_DEBS names."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "train"))
import docs_pairs  # noqa: E402


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """(roots {package: unpacked folder} for `packages`, cache, download folders): call with the packages
    (and pins={package: (version, sha256)} for packages docs_pairs.DEBS does not pin)."""
    cache = tmp_path_factory.mktemp("train-cache")
    given = [Path(p) for p in os.environ.get("PROVRAG_TRAIN_DEBS", "").split(os.pathsep) if p]

    def fetch(*packages: str, pins: dict | None = None):
        return {pkg: docs_pairs.fetch_deb(pkg, cache, given, pins) for pkg in packages}, cache, given
    return fetch
