"""DOCS → the files to read and the entries recorded without being read, each with the path
the index stores for it.

Why it looks the way it does:
- Every entry of DOCS that is not hidden gets a documents row, so `documents.parquet` says
  what was left out and why instead of dropping it: links, named pipes, unreadable folders.
- Links are never followed while walking. A link whose target leaves DOCS would index a file
  the user did not put there; a dangling one has nothing to read; a link to a folder is not
  followed even inside DOCS, because its files are already indexed under their own folder
  (following it would index them twice, or loop forever on a link to a parent).
- A link to a file inside DOCS is recorded as skipped with the path it points to: that file
  is indexed once, under its own path. Indexing it a second time under the link's name would
  only duplicate every unit, entity and citation of it; recording the link keeps it visible.
- `index FILE` indexes that one file, recorded under its own name. A link named on the
  command line is followed (like `find -H`): the user chose that file.
- Paths are stored in the escaped form of provrag/store/paths.py, so any byte sequence a file
  name may hold is kept losslessly and can be written to Arrow, JSON and a terminal.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from provrag.errors import UsageError
from provrag.store.paths import escape_path
from provrag.store.schema import STATUS_FAILED, STATUS_SKIPPED


class DocsError(UsageError):
    """DOCS is missing or cannot be listed at all (one line, exit 2)."""


@dataclass(frozen=True)
class Entry:
    file: Path              # where it is, as found under DOCS (links not resolved)
    path: str               # what the index stores: relative to DOCS, posix, escaped (store/paths.py)
    status: str | None = None   # None: read it; else "skipped" or "failed", with `reason`
    reason: str | None = None


def is_index_folder(folder: Path) -> bool:
    """A provrag index (`--out` inside DOCS must not index the index). A folder that cannot be
    read is not one: os.walk then reports it, and it becomes a failed row."""
    try:
        return (folder / "manifest.json").is_file() and (folder / "text_units.parquet").is_file()
    except OSError:  # Python 3.11's is_file() raises PermissionError inside an unreadable folder
        return False


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def link_reason(link: Path, root: str, indexed: set[str]) -> str:
    """Why the link `link` is recorded as skipped; `root` is DOCS resolved, `indexed` the stored
    paths of the regular files read in this run."""
    said = escape_path(os.readlink(link))
    try:
        real = os.path.realpath(link, strict=True)
    except OSError as e:  # dangling, a loop of links, or a target provrag may not look at
        return f"broken link to {said} ({(e.strerror or str(e)).lower()}): nothing to read"
    shown = escape_path(real)
    if not _inside(real, root):
        what = "folder" if os.path.isdir(real) else "file"
        return f"link to a {what} outside DOCS ({shown}): links leaving DOCS are not followed"
    target = escape_path(Path(os.path.relpath(real, root)).as_posix())
    if os.path.isdir(real):
        return (f"link to the folder {target} inside DOCS: not followed (its files are indexed under "
                "their own path; following folder links would index files twice or loop)")
    if target in indexed:
        return f"link to {target}, indexed as {target} (not twice)"
    return f"link to {target} inside DOCS, which is not indexed (hidden, in an index folder or not a regular file)"


def walk(docs: Path) -> list[Entry]:
    """Every non-hidden entry under DOCS (or DOCS itself when it is a file), sorted by stored path.
    Left out without a row: hidden files and folders ('.*') and provrag index folders."""
    docs = Path(docs)
    if docs.is_file():
        return [Entry(docs, escape_path(docs.name))]
    if not docs.is_dir():
        raise DocsError(f"no such file or folder: {escape_path(docs)}")
    root = os.path.realpath(docs)
    entries: list[Entry] = []
    links: list[Path] = []

    def stored(p: Path) -> str:
        return escape_path(p.relative_to(docs).as_posix())

    def unreadable(e: OSError) -> None:
        folder = Path(e.filename)
        if folder == docs:
            raise DocsError(f"cannot list {escape_path(docs)}: {e.strerror or e}")
        entries.append(Entry(folder, stored(folder), STATUS_FAILED,
                             f"cannot read this folder: {(e.strerror or str(e)).lower()}; its files are not indexed"))

    for dirpath, dirnames, filenames in os.walk(docs, onerror=unreadable):
        kept = []
        for name in dirnames:
            p = Path(dirpath, name)
            if name.startswith("."):
                continue
            if p.is_symlink():
                links.append(p)
            elif not is_index_folder(p):
                kept.append(name)
        dirnames[:] = kept  # os.walk descends only into these (never through a link)
        for name in filenames:
            p = Path(dirpath, name)
            if name.startswith("."):
                continue
            if p.is_symlink():
                links.append(p)
                continue
            try:
                mode = p.lstat().st_mode
            except OSError as e:  # removed while walking
                entries.append(Entry(p, stored(p), STATUS_FAILED, f"cannot read the file: {e.strerror or e}"))
                continue
            if stat.S_ISREG(mode):
                entries.append(Entry(p, stored(p)))
            else:
                entries.append(Entry(p, stored(p), STATUS_SKIPPED, f"{_kind(mode)}: provrag reads regular files"))
    indexed = {e.path for e in entries if e.status is None}
    entries += [Entry(p, stored(p), STATUS_SKIPPED, link_reason(p, root, indexed)) for p in links]
    return sorted(entries, key=lambda e: e.path)
