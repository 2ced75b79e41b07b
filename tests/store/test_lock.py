"""One writer per index folder (store/lock.py), and folders and files that follow the umask.

The lock is held by a helper process this test controls (it locks, says so, and waits for a
line on stdin), so "a second writer fails at once" never depends on how fast a run is.
"""
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from provrag.store import writer as store
from provrag.store.cache import Cache
from provrag.store.lock import IndexBusy, IndexLock, LockUnavailable, lock_path, writer_of

HOLDER = (
    "import sys\n"
    "from provrag.store.lock import IndexLock\n"
    "with IndexLock(sys.argv[1]):\n"
    "    print('locked', flush=True)\n"
    "    sys.stdin.readline()\n"
)


@pytest.fixture
def holder(tmp_path):
    """Start a process that holds the lock of tmp_path/idx until told to stop (a line on stdin)."""
    started = []

    def start(out):
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout.readline().strip() == "locked", proc.stderr.read()
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _litter(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".provrag-"))


def test_lock_is_signed_and_leaves_nothing(tmp_path):
    out = tmp_path / "idx"
    with IndexLock(out):
        writer = writer_of(out)
        assert writer["pid"] == os.getpid() and writer["host"] == socket.gethostname()
        assert lock_path(out).parent == tmp_path.resolve(), "the lock lives beside --out, not inside it"
    assert _litter(tmp_path) == [] and not out.exists()


def test_second_writer_fails_at_once_naming_the_first(tmp_path, holder):
    out = tmp_path / "idx"
    proc = holder(out)
    with pytest.raises(IndexBusy) as busy:  # reported, not awaited: the holder never lets go while it lives
        IndexLock(out).acquire()
    message = str(busy.value)
    assert len(message.splitlines()) == 1
    assert f"pid {proc.pid} on {socket.gethostname()}" in message and "started 20" in message
    assert str(out) in message and "--wait" in message
    assert busy.value.exit_code == 2
    proc.stdin.write("done\n")
    proc.stdin.flush()
    assert proc.wait(timeout=30) == 0
    assert _litter(tmp_path) == [], "the holder removed its lock file"


def test_wait_tells_whom_then_takes_the_lock(tmp_path, holder):
    out = tmp_path / "idx"
    proc = holder(out)
    told: list[str] = []

    def release_holder_once_told():
        while not told:
            time.sleep(0.05)
        proc.stdin.write("done\n")
        proc.stdin.flush()

    threading.Thread(target=release_holder_once_told, daemon=True).start()
    with IndexLock(out, wait=told.append):
        assert proc.wait(timeout=60) == 0, "the lock was taken only after the holder let it go"
        assert writer_of(out)["pid"] == os.getpid()
    assert len(told) == 1 and f"pid {proc.pid}" in told[0] and "waiting for" in told[0]
    assert _litter(tmp_path) == []


def test_lock_of_a_killed_writer_is_taken_over(tmp_path, holder):
    out = tmp_path / "idx"
    proc = holder(out)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert writer_of(out)["pid"] == proc.pid, "kill -9 leaves the lock file with the dead writer's line"
    with IndexLock(out):
        assert writer_of(out)["pid"] == os.getpid()
    assert _litter(tmp_path) == []


def test_handover_keeps_one_writer(tmp_path):
    """The finished writer removes the file a waiter already opened and locked: the waiter must
    notice and lock the file now at the path, or a third run would get a lock of its own."""
    out = tmp_path / "idx"
    first = IndexLock(out)
    first.acquire()
    second = IndexLock(out, wait=lambda line: None)
    waiting = threading.Thread(target=second.acquire)
    waiting.start()
    time.sleep(0.3)  # let it block on the first writer's file (if not yet, it simply finds it free)
    first.release()
    waiting.join(timeout=30)
    assert second.fd is not None and writer_of(out)["pid"] == os.getpid()
    with pytest.raises(IndexBusy):
        IndexLock(out).acquire()
    second.release()
    assert _litter(tmp_path) == []


def test_unwritable_place_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(LockUnavailable, match="cannot write the index to"):
        IndexLock(blocker / "idx").acquire()


def test_begin_removes_only_this_index_s_leftovers(tmp_path):
    """Under the lock every temporary folder of `idx` is a killed run's, even one whose pid is
    alive again; `idx-2`'s folders share the prefix and belong to another writer."""
    out = tmp_path / "idx"
    stale = tmp_path / f".provrag-tmp-idx-ab12cd34-{os.getpid()}"
    other = tmp_path / f".provrag-tmp-idx-2-ab12cd34-{os.getpid()}"
    stale.mkdir()
    other.mkdir()
    tmp = store.begin(out)
    assert not stale.exists() and other.exists() and tmp.is_dir()
    store.abort(tmp)


@pytest.mark.parametrize("umask, folder_mode, file_mode", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)])
def test_folders_and_files_follow_the_umask(tmp_path, umask, folder_mode, file_mode):
    previous = os.umask(umask)
    try:
        out = tmp_path / "idx"
        with IndexLock(out):
            assert stat.S_IMODE(lock_path(out).stat().st_mode) == file_mode
            tmp = store.begin(out)
            cache = Cache(tmp / "cache", None, namespace="llm")
            cache.put("k" * 64, {"reply": "x"})
            store.write_manifest(tmp, {"provrag_version": "test"})
            store.commit(tmp, out)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == folder_mode
    entries = list((out / "cache").rglob("*"))
    assert entries and (out / "manifest.json") not in entries
    for path in [out / "manifest.json", *entries]:
        want = folder_mode if path.is_dir() else file_mode
        assert stat.S_IMODE(path.stat().st_mode) == want, path
