"""A content-addressed file cache that lives inside the index folder.

An index is rebuilt in a temporary folder and renamed into place, so the cache is two
folders: the one being written (inside the new index) and the previous index's (read only).
A hit in the previous one is hard-linked into the new one, so the finished index carries
every entry it used and a re-run over unchanged input finds them all — while an interrupted
run never touches the previous index.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any


def key_of(*parts: Any) -> str:
    """Hash of everything that determines a result (model, prompt, parameters, input)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class Cache:
    def __init__(self, folder: Path, previous: Path | None = None, namespace: str = ""):
        self.folder = Path(folder) / namespace if namespace else Path(folder)
        self.previous = (Path(previous) / namespace if namespace else Path(previous)) if previous else None
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, root: Path, key: str) -> Path:
        return root / key[:2] / f"{key}.json.gz"

    def get(self, key: str) -> Any | None:
        p = self._path(self.folder, key)
        if not p.exists() and self.previous is not None:
            old = self._path(self.previous, key)
            if old.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(old, p)
                except OSError:
                    p.write_bytes(old.read_bytes())
        if not p.exists():
            return None
        try:
            with gzip.open(p, "rt", encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError, EOFError):
            return None  # a damaged entry is a miss, never a crash

    def put(self, key: str, value: Any) -> None:
        p = self._path(self.folder, key)
        p.parent.mkdir(parents=True, exist_ok=True)
        # a unique name beside the entry, created with the umask's mode (tempfile.mkstemp's
        # would be 0600 whatever the umask), then renamed over it: a reader sees all or nothing
        tmp = p.parent / f".{key}-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        os.replace(tmp, p)


def index_cache(index_path, namespace: str) -> Cache | None:
    """The model-reply cache inside an index, for a query-time engine (a re-asked question costs
    nothing); None for an index provrag may not write into (store.writer.may_write)."""
    from provrag.store.writer import may_write

    folder = Path(index_path) / "cache"
    if not may_write(folder):
        return None
    try:
        return Cache(folder, None, namespace=namespace)
    except OSError:
        return None
