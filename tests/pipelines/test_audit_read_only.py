"""An audit never changes the evidence it audits: `ask`, `verify` and `resolve` on a WRITABLE copy
of a Microsoft GraphRAG output folder leave every file in it byte for byte as it was, and
`provrag log` still lists the runs (their traces live in the user's provrag folder)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.usefixtures("shared")


def _snapshot(folder):
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                         p.stat().st_mode)
            for p in sorted(folder.rglob("*"))}


def test_auditing_a_graphrag_folder_changes_nothing_in_it(tmp_path, dulce_v3, provrag_cli):
    idx = tmp_path / "graphrag-output"
    shutil.copytree(dulce_v3, idx)
    for p in [idx, *idx.rglob("*")]:  # writable by everyone: permission bits must not be what stops us
        os.chmod(p, 0o777 if p.is_dir() else 0o666)
    before = _snapshot(idx)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))

    def run(*args):
        p = subprocess.run([*provrag_cli, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert p.returncode == 0, p.stderr[-1500:]
        return json.loads(p.stdout)

    asked = run("ask", "What is the mission of the Paranormal Military Squad?", "--index", str(idx), "--json")
    checked = run("verify", "--trace", asked["trace_id"], "--index", str(idx), "--json")
    run("resolve", "The squad investigates Dulce base. [Data: Reports (1, 2)]", "--index", str(idx), "--json")

    assert _snapshot(idx) == before
    logged = run("log", "--index", str(idx), "--json")
    assert {asked["trace_id"], checked["trace_id"]} <= {r["trace_id"] for r in logged}
    everywhere = run("log", "--json")  # without --index: the remembered trace folders
    assert asked["trace_id"] in {r["trace_id"] for r in everywhere}
    assert str(tmp_path / "xdg") in checked["trace_file"]
