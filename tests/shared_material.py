"""Where the repository and the read-only shared material (../shared, or $PROVRAG_SHARED) are.

Tests get these paths from the session fixtures of tests/conftest.py (`repo_root`, `shared`,
`small_corpus`, `bad_corpus`, `dulce`, `eval_dev`, `squad`), which skip a test cleanly when
../shared is absent. They are plain constants here only because a few tests need a path before
any fixture exists: at collection time, to parametrize a test over the files of a folder (the
Dulce fixture's answers). Import this module for that, never conftest.py; conftest.py builds
its fixtures from the same paths, so they are computed in one place.
"""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROVRAG_SHARED", REPO_ROOT.parent / "shared"))
SMALL_CORPUS = SHARED / "corpora" / "small"
BAD_CORPUS = SHARED / "corpora" / "bad"
DULCE = SHARED / "fixtures" / "graphrag-dulce"
EVAL_DEV = SHARED / "eval" / "dev"
SQUAD = EVAL_DEV / "squad"

# the real GraphRAG answers of the Dulce fixture, as paths relative to DULCE (empty without ../shared)
DULCE_ANSWERS = sorted(p.relative_to(DULCE).as_posix() for p in DULCE.glob("index-*/answers/*.json"))
FETCH_DEBIAN_DOCS = SHARED / "corpora" / "fetch-debian-docs.sh"
