"""Writing an index folder so that readers never see half of one.

A run writes everything into a sibling temporary folder, then swaps it with the old index
in one atomic rename (Linux renameat2 RENAME_EXCHANGE; elsewhere two renames). Until that
instant the previous index is complete and readable; after it, the new one is. A run killed
at any moment leaves at worst a stale temporary folder, removed by the next run. One run at
a time writes a given folder: the caller holds its lock (store/lock.py) from begin to commit.
Folders and files are created with the process's umask, like any other tool's output.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import secrets
import shutil
from pathlib import Path

import pyarrow as pa

from provrag.store.schema import MANIFEST

_TMP_PREFIX, _OLD_PREFIX = ".provrag-tmp-", ".provrag-old-"
KEEP_ACROSS_RUNS = ("queries",)  # the query/verify trace log outlives re-indexing


class WriteError(OSError):
    """The output folder cannot be written."""


def begin(out: Path) -> Path:
    """Create the temporary folder the new index is written into (beside `out`).

    The caller holds the lock of `out` (store.lock.IndexLock), so any temporary folder of
    `out` already there was left by a killed run, whatever its pid says (pids are reused)."""
    out = Path(out).absolute()
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in _left_behind(parent, out.name):
            shutil.rmtree(stale, ignore_errors=True)
        while True:
            tmp = parent / f"{_TMP_PREFIX}{out.name}-{secrets.token_hex(4)}-{os.getpid()}"
            try:
                tmp.mkdir(mode=0o777)  # not tempfile.mkdtemp: its 0700 would ignore the umask
                return tmp
            except FileExistsError:
                continue
    except OSError as e:
        raise WriteError(f"cannot write the index to {out}: {e.strerror or e}") from None


def _left_behind(parent: Path, name: str) -> list[Path]:
    """The temporary and old folders of the index `name` — exactly that name: `idx-2`'s
    folders also start with `.provrag-tmp-idx-`, and another run may be writing them."""
    own = re.compile(rf"{re.escape(_TMP_PREFIX + name)}-[0-9a-z_]{{8}}-\d+|{re.escape(_OLD_PREFIX + name)}-\d+")
    return [p for p in parent.iterdir() if own.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]


# Columns of long text: written without parquet's min/max statistics and dictionary. The
# statistics copy whole values — writing one 50 MB document's text took +340 MB, without them
# +120 MB (measured) — and no query filters or groups on these columns.
LONG_TEXT = frozenset({"text", "full_content", "full_content_json", "summary", "description", "raw_content"})


def write_table(folder: Path, name: str, table: pa.Table) -> None:
    write_parts(folder, name, table.schema, [table])


def write_parts(folder: Path, name: str, schema: pa.Schema, parts) -> None:
    """`folder/name.parquet` from an iterable of Arrow tables of `schema`, one row group each:
    a caller that makes the parts one at a time holds only one of them as Arrow."""
    import pyarrow.parquet as pq

    plain = [path for f in schema if f.name not in LONG_TEXT for path in _leaf_paths(f)]
    with pq.ParquetWriter(Path(folder) / f"{name}.parquet", schema, compression="zstd",
                          write_statistics=plain, use_dictionary=plain) as writer:
        for part in parts:
            writer.write_table(part)


def _leaf_paths(field: pa.Field, prefix: str = "") -> list[str]:
    """The parquet column paths of an Arrow field (a list's values are `name.list.element`): the
    names write_statistics and use_dictionary take."""
    t = field.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _leaf_paths(pa.field("element", t.value_type), f"{prefix}{field.name}.list.")
    if pa.types.is_struct(t):
        return [p for child in t for p in _leaf_paths(child, f"{prefix}{field.name}.")]
    return [prefix + field.name]


def made_by_provrag(folder) -> bool:
    """Did provrag build this index folder (its manifest.json says so)? Only then may provrag
    write into it (query traces, a model-reply cache): any other folder — a Microsoft GraphRAG
    output, a copy without the manifest — is evidence under audit and stays byte for byte as
    it was, whatever its permission bits."""
    from provrag.store.manifest import read_manifest

    manifest = read_manifest(folder)
    return manifest is not None and "provrag_version" in manifest


def may_write(folder: Path) -> bool:
    """Can provrag write into `folder` (INDEX/queries, INDEX/cache)? Only inside an index it
    built (store.writer.made_by_provrag), and not when that folder is marked read-only (no
    write bit at all: root could still write there, but must not) or cannot be written."""
    import stat

    index_dir = folder.parent
    if not made_by_provrag(index_dir):
        return False
    try:
        if not (index_dir.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)):
            return False
        if folder.exists() and not (folder.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)):
            return False
        if not os.access(index_dir, os.W_OK):
            return False
        folder.mkdir(exist_ok=True)
        # a name of its own per call: a server's threads probe at once, and a probe named after
        # the process alone was one thread's to unlink under another ("cannot write": a trace
        # sent to the user folder; tests/store/test_trace_threads.py)
        probe = folder / f".probe-{os.getpid()}-{secrets.token_hex(4)}"
        probe.write_bytes(b"")
        probe.unlink()
        return True
    except OSError:
        return False


def write_manifest(folder: Path, manifest: dict) -> None:
    (Path(folder) / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n")


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ≥ 3.15); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        f = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    return f(AT_FDCWD, os.fsencode(str(a)), AT_FDCWD, os.fsencode(str(b)), RENAME_EXCHANGE) == 0


def commit(tmp: Path, out: Path) -> None:
    """Put the finished index in place of `out` (carrying over the trace log)."""
    out = Path(out).absolute()
    if out.exists() and not out.is_dir():
        raise WriteError(f"cannot write the index to {out}: it is a file")
    if out.exists():
        kept = [keep for keep in KEEP_ACROSS_RUNS if (out / keep).is_dir() and not (tmp / keep).exists()]
        for keep in kept:
            _copy_live(out / keep, tmp / keep)
        if _exchange(tmp, out):
            for keep in kept:                       # traces finished between the copy and the swap
                _copy_live(tmp / keep, out / keep)
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old index
            return
        old = out.parent / f"{_OLD_PREFIX}{out.name}-{os.getpid()}"
        os.rename(out, old)
        os.rename(tmp, out)
        for keep in kept:
            _copy_live(old / keep, out / keep)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out)


def _copy_live(src: Path, dst: Path) -> None:
    """Copy the files of `src` that `dst` lacks, while others may write `src`: a running server
    stores traces there (a hidden `.….tmp` file renamed into place), so a file may vanish between
    listing and copying, and an unfinished one is not a trace. (shutil.copytree raised on the
    vanished file and the whole index run failed at its last step: found by kill -9 trials while
    serving.)"""
    for root, _dirs, files in os.walk(src):
        target = dst / Path(root).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            if name.startswith(".") and name.endswith(".tmp") or (target / name).exists():
                continue
            try:
                shutil.copy2(Path(root) / name, target / name)
            except FileNotFoundError:
                continue


def abort(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
