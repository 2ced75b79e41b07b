"""Fixtures of the store tests: a provrag index of real PDFs that real asks and a real verify
have written traces, retrievals and citations into."""
from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def asked_index(tmp_path_factory, squad_subset_index):
    """(index folder, basic ask, global ask, verify of the basic ask's answer): a copy of
    squad_subset_index (it is shared, and these runs write into it), user data kept in a
    temporary XDG_DATA_HOME."""
    from provrag.config import load_config
    from provrag.pipelines.ask import run_ask
    from provrag.pipelines.verify import run_verify

    root = tmp_path_factory.mktemp("asked")
    idx = root / "idx"
    shutil.copytree(squad_subset_index, idx, ignore=shutil.ignore_patterns("queries"))
    cfg = load_config()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(root / "xdg"))
        basic = run_ask("When did the oil embargo end?", idx, cfg, method="basic")
        glob = run_ask("What did the 1973 oil embargo do to prices?", idx, cfg, method="global")
        verified = run_verify(idx, cfg, trace_id=basic.trace_id)
    return idx, basic, glob, verified
