"""An index's manifest.json, parsed once per version of the file.

A question reads the manifest several times: its index version for the trace, whether provrag
made the folder before the trace is written into it (store/writer.made_by_provrag), the
embedder's kind. A server does so at every request. An index built before 2026-11-27 lists every
file of the corpus there (~0.9 MB at ~9,500 units): each parse took ~7-12 ms of a served verify's
~180 (issue 30). The parse is kept per file and used again while the file's stat (device,
inode, size, mtime and ctime in ns) is unchanged: a rebuilt index is put in place by a rename
(store/writer.commit), which gives the file another inode, and a write in place changes its
ctime, which no user tool can set back.
"""
from __future__ import annotations

import json
import os
import threading

from provrag.store.schema import MANIFEST

KEPT = 64   # manifests kept (one per index folder a process reads: a test run opens hundreds)
_parsed: dict[str, tuple[tuple, dict | None]] = {}
_lock = threading.Lock()


def read_manifest(folder) -> dict | None:
    """The parsed manifest.json of `folder`, or None when it is missing, unreadable or not a
    JSON object. Shared between callers: read it, never change it."""
    path = os.path.join(os.fspath(folder), MANIFEST)
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _lock:
        got = _parsed.get(path)
    if got is not None and got[0] == key:
        return got[1]
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    data = data if isinstance(data, dict) else None
    # a file replaced while it was read is kept under the stat seen before: the next call's stat
    # differs and reads it again
    with _lock:
        _parsed.pop(path, None)
        _parsed[path] = (key, data)
        while len(_parsed) > KEPT:
            _parsed.pop(next(iter(_parsed)))
    return data
