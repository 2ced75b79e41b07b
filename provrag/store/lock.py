"""One writer per index folder: a lock held for a whole `provrag index` run.

Two runs writing the same `--out` would both build a temporary folder and swap it in; the
last swap wins and the other run's summary describes an index that no longer exists. So a
run takes this lock before it creates its temporary folder and keeps it until its index is
in place. Readers (ask, resolve, verify, report) never take it: the swap is atomic
(store/writer.py), so they read the previous index until the new one replaces it.

Where: `.provrag-lock-NAME` beside `--out`, in the folder that already holds the run's
`.provrag-tmp-NAME-…` folder (store.writer.begin). Not inside the index: that folder is
swapped away at the end, may not exist yet, and may be a folder provrag did not make.
The file holds one JSON line naming its writer (pid, host, start time) for the message a
second run prints. It is removed when the run ends, so a finished run leaves nothing.

How: fcntl.flock on that file. The kernel releases it when the process dies, however it
dies (kill -9 included), so a lock left by a killed run is free at once: the next run
takes it over and overwrites the stale writer line. Not the `filelock` package (here only
as huggingface_hub's dependency): it is the same flock underneath, but it leaves its lock
file behind after every run by design and offers no place for the writer's name. Removing
the file is safe with the usual check: unlink it while still holding the lock, and a run
that locked a file then checks that it is still the one at the path (else it retries).
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Callable

from provrag.errors import UsageError

LOCK_PREFIX = ".provrag-lock-"
_READ_TRIES, _READ_PAUSE = 10, 0.05  # a writer writes its line right after locking


class IndexBusy(UsageError):
    """Another run is writing the same index folder (exit 2)."""


class LockUnavailable(UsageError):
    """The lock file cannot be created (the folder beside `--out` is not writable)."""


def lock_path(out: Path) -> Path:
    """The lock file of the index folder `out`; the same file however `out` is spelt."""
    out = Path(out).absolute()
    return out.parent.resolve() / f"{LOCK_PREFIX}{out.name}"


def writer_of(out: Path) -> dict | None:
    """What the lock file of `out` says about its writer (None: no readable line). The line
    may be stale (a killed run); only a failed lock attempt tells that the writer runs."""
    try:
        line = lock_path(out).read_text(encoding="utf-8")
        writer = json.loads(line) if line.strip() else None
    except (OSError, ValueError):
        return None
    return writer if isinstance(writer, dict) else None


def describe(writer: dict | None) -> str:
    """'pid 1234 on host, started 2025-11-24 02:57:03', the way a user finds that process."""
    if not writer:
        return "its pid is not recorded yet"
    where = f" on {writer['host']}" if writer.get("host") else ""
    return f"pid {writer.get('pid', '?')}{where}, started {writer.get('started', '?')}"


class IndexLock:
    """The lock of one index folder, as a context manager.

    `wait=None`: a busy lock raises IndexBusy at once (one line naming the running writer).
    `wait=callable`: it is called once with a line saying whom this run waits for, and the
    lock is awaited however long the other run takes (Ctrl-C stops waiting).
    """

    def __init__(self, out: Path, wait: Callable[[str], None] | None = None):
        self.out = Path(out).absolute()
        self.path = lock_path(self.out)
        self.wait = wait
        self.fd: int | None = None

    def __enter__(self) -> "IndexLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self) -> None:
        import fcntl

        told = False
        while self.fd is None:
            fd = self._open()
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    writer = self._running_writer()
                    if self.wait is None:
                        raise IndexBusy(f"another provrag index is writing {self.out} ({describe(writer)}); "
                                        "run again with --wait to wait for it") from None
                    if not told:
                        self.wait(f"waiting for the provrag index writing {self.out} ({describe(writer)})")
                        told = True
                    fcntl.flock(fd, fcntl.LOCK_EX)
                if self._still_at_path(fd):
                    self._sign(fd)
                    self.fd = fd
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # a finished writer removed the file we locked: lock the new one

    def release(self) -> None:
        """Remove the file while still holding the lock (see the module's docstring), then unlock."""
        if self.fd is None:
            return
        try:
            if self._still_at_path(self.fd):
                self.path.unlink()
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.fd = None

    def _open(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)  # the umask decides the mode
        except OSError as e:
            raise LockUnavailable(f"cannot write the index to {self.out}: {e.strerror or e}") from None

    def _still_at_path(self, fd: int) -> bool:
        try:
            mine, there = os.fstat(fd), os.stat(self.path)
        except OSError:
            return False
        return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)

    def _running_writer(self) -> dict | None:
        """The holder's line; it writes it just after locking, so an empty file is retried briefly."""
        for _ in range(_READ_TRIES):
            writer = writer_of(self.out)
            if writer:
                return writer
            time.sleep(_READ_PAUSE)
        return None

    def _sign(self, fd: int) -> None:
        """Write this run's line over whatever a killed run left."""
        line = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                           "started": time.strftime("%Y-%m-%d %H:%M:%S")}) + "\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, line.encode("utf-8"), 0)
