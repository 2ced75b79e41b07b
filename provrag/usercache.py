"""What every cold `provrag` process would otherwise recompute at start, kept between processes
in the user's cache folder (start.sqlite3 in $PROVRAG_CACHE_DIR, $XDG_CACHE_HOME/provrag or
~/.cache/provrag):

- file digests (`file_sha256`): the model files' SHA-256, checked before every use, keyed by the
  file's identity and state (path, device, inode, size, mtime and ctime in ns). Any write to the
  file changes its ctime (no user tool can set it back), so changed bytes are hashed again and
  refused as before; what a stored digest cannot catch is bytes that rot on disk with no write
  at all. Hashing the 90 MB MiniLM weights took ~60-230 ms of each cold ask (issue 30);
- library answers about single words (`remembered`): simplemma's lemma and wordfreq's Zipf
  frequency of a word, pure functions of the word and the library's version (the version is in
  the key). A question needs a few hundred of them, and the first of each library costs its
  import and its dictionary's load (~0.3 s each, cold); answered here, neither is imported.

A cache, never a source of truth: any trouble with the file (unwritable folder, locked or broken
database) leaves the process computing everything as before. Words learnt by a process are
written once, at exit, in one transaction. SQLite (the standard library's) because several
processes read and write it at once; lookups are one indexed SELECT each (~5 µs).
"""
from __future__ import annotations

import atexit
import hashlib
import os
import threading
from pathlib import Path
from typing import Callable

FILE_NAME = "start.sqlite3"
# words held in memory before they are written (an index run meets hundreds of thousands, a
# server keeps running: neither may hold them all until exit)
WRITE_EVERY = 5000
_MISSING = object()
_state: dict = {}
_lock = threading.Lock()


def cache_folder() -> Path:
    """$PROVRAG_CACHE_DIR (the tests' own), else $XDG_CACHE_HOME/provrag, else ~/.cache/provrag."""
    given = os.environ.get("PROVRAG_CACHE_DIR")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "provrag"


def _db():
    """The open database, or None when it cannot be used (then nothing is cached). Opened again
    in a forked child (a SQLite connection must not cross a fork) and when the folder changes.
    The folder is worked out again only when the variables naming it change: a question looks up
    ~1,500 words, and building the path each time was ~20 µs of each lookup's ~28."""
    env = os.environ
    where = (os.getpid(), env.get("PROVRAG_CACHE_DIR"), env.get("XDG_CACHE_HOME"), env.get("HOME"))
    if _state.get("where") == where:
        return _state["con"]
    path = str(cache_folder() / FILE_NAME)
    key = f"{os.getpid()}:{path}"
    _state["where"] = where
    if _state.get("path") != key:
        _state.update(path=key, con=None, pending={}, at_exit=False)
        try:
            import sqlite3

            Path(path).parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(path, timeout=2.0, check_same_thread=False, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("CREATE TABLE IF NOT EXISTS digests (path TEXT PRIMARY KEY, stat TEXT, sha256 TEXT)")
            con.execute("CREATE TABLE IF NOT EXISTS words (kind TEXT, word TEXT, value, PRIMARY KEY (kind, word))")
            _state["con"] = con
        except Exception:  # a cache: any trouble means computing as before
            _state["con"] = None
    return _state["con"]


def stat_key(path: Path) -> str:
    """What tells a file apart from another written at its path (device, inode, size, times)."""
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def file_sha256(path) -> str:
    """SHA-256 of a file, from the cache while the file is unchanged since it was hashed."""
    path = Path(path).resolve()
    stat = stat_key(path)
    with _lock:
        con = _db()
        try:
            row = con and con.execute("SELECT sha256 FROM digests WHERE path = ? AND stat = ?",
                                      (str(path), stat)).fetchone()
        except Exception:
            row = None
    if row:
        return row[0]
    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if stat_key(path) == stat:   # not written to while it was read
        with _lock:
            try:
                con and con.execute("INSERT OR REPLACE INTO digests VALUES (?, ?, ?)", (str(path), stat, digest))
            except Exception:
                pass
    return digest


def remembered(kind: str, compute: Callable[[str], object]) -> Callable[[str], object]:
    """`compute(word)` answered from the cache when a process asked it before; `kind` names the
    function and the version of the library behind it (a new version: new keys)."""

    def lookup(word: str):
        with _lock:
            con = _db()
            pending = _state["pending"]
            got = pending.get((kind, word), _MISSING)
            if got is _MISSING and con is not None:
                try:
                    row = con.execute("SELECT value FROM words WHERE kind = ? AND word = ?", (kind, word)).fetchone()
                except Exception:
                    row = None
                if row:
                    return row[0]
        if got is not _MISSING:
            return got
        value = compute(word)
        with _lock:
            if not _state.get("at_exit"):
                atexit.register(_write_pending, _state["path"], pending)
                _state["at_exit"] = True
            pending[(kind, word)] = value
            full = len(pending) >= WRITE_EVERY
        if full:   # an index run's vocabulary, a server's months of questions: written as they come
            _write_pending(_state["path"], pending)
        return value

    return lookup


def _write_pending(path: str, pending: dict) -> None:
    """The words this process computed, into the cache (one transaction; lost if it is busy)."""
    with _lock:
        con = _state.get("con") if _state.get("path") == path else None
        if con is None or not pending:
            return
        try:
            con.execute("BEGIN")
            con.executemany("INSERT OR IGNORE INTO words VALUES (?, ?, ?)",
                            [(k, w, v) for (k, w), v in pending.items()])
            con.execute("COMMIT")
            pending.clear()
        except Exception:
            try:
                con.execute("ROLLBACK")
            except Exception:
                pass


def library_version(name: str) -> str:
    """An installed distribution's version, read from its metadata without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"
