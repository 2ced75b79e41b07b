"""A write that fails for lack of space leaves the previous index intact and says so in one line
(exit 2), and the next run, with space again, finishes.

Two ways: a real 2 MiB tmpfs (mount -t tmpfs, as root) holding the index while DOCS grows past
what it can hold, through the CLI; and ENOSPC injected at the write layer (store/writer.py's
write_parts) in-process, which needs no privilege."""
from __future__ import annotations

import errno
import shutil
import subprocess

import pytest

from tests.attack import crash
from tests.serve.conftest import provrag_command


def cli(*args, env):
    return subprocess.run(provrag_command(*map(str, args)), capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture
def small_device(tmp_path):
    """A 2 MiB tmpfs at tmp_path/device, unmounted afterwards."""
    device = tmp_path / "device"
    device.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(device)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here ({mounted.stderr.strip()[:120]}); "
                    "test_enospc_injected_at_the_write_layer covers the same path")
    yield device
    subprocess.run(["umount", "-l", str(device)], capture_output=True)


def test_a_full_device_leaves_the_previous_index_and_says_so(small_device, tmp_path, small_corpus, serve_env):
    docs, out = tmp_path / "docs", small_device / "idx"
    docs.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sotu.txt")
    first = cli("index", docs, "--out", out, "--json", env=serve_env)
    assert first.returncode == 0, first.stderr[-800:]
    before = crash.index_files(out)
    for name in ("R-FAQ.pdf", "asymptote-CAD.pdf"):       # the update no longer fits in 2 MiB
        shutil.copyfile(small_corpus / name, docs / name)
    full = cli("index", docs, "--out", out, env=serve_env)
    assert full.returncode == 2, (full.returncode, full.stderr[-800:])
    last = full.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "no space left" in last and "previous index is unchanged" in last, last
    assert "Traceback" not in full.stderr and "internal error" not in full.stderr
    assert not crash.same_index(crash.index_files(out), before)          # intact, table by table
    assert not crash.leftovers(out)
    asked = cli("ask", "What did Lincoln say about emancipation?", "--index", out, "--json", env=serve_env)
    assert asked.returncode == 0, asked.stderr[-500:]
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_device)], check=True)   # space again
    again = cli("index", docs, "--out", out, "--json", env=serve_env)
    assert again.returncode == 0, again.stderr[-800:]
    assert crash.same_index(crash.index_files(out), before)               # the update is in place now


def test_enospc_injected_at_the_write_layer(tmp_path, small_corpus, monkeypatch):
    from provrag.config import load_config
    from provrag.pipelines.index import IndexBuildError, run_index
    from provrag.store import writer

    docs, out = tmp_path / "docs", tmp_path / "idx"
    docs.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sotu.txt")
    cfg = load_config()
    run_index(docs, out, cfg)
    before = crash.index_files(out)
    shutil.copyfile(small_corpus / "R-FAQ.pdf", docs / "R-FAQ.pdf")
    real = writer.write_parts
    written = []

    def fills_up(folder, name, schema, parts):
        written.append(name)
        if len(written) > 2:                 # the third table does not fit
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(folder, name, schema, parts)

    monkeypatch.setattr(writer, "write_parts", fills_up)
    with pytest.raises(IndexBuildError) as caught:
        run_index(docs, out, cfg)
    message = str(caught.value)
    assert "\n" not in message and "no space left" in message and "previous index is unchanged" in message
    assert not crash.same_index(crash.index_files(out), before) and not crash.leftovers(out)
    monkeypatch.setattr(writer, "write_parts", real)
    run_index(docs, out, cfg)
    assert crash.same_index(crash.index_files(out), before)
