"""train/fetch.py (fetch.py's first step): the pinned archive, looked up on the index's JSON page and downloaded
with urllib, lands in the cache only when its sha256 is the pinned one. No network: the downloads
are file:// URLs and the index page is a stand-in for urlopen."""
from __future__ import annotations

import hashlib
import io
import json
import sys
import urllib.error
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "train"))
import fetch  # noqa: E402

NAME = "tiny_pkg-1.0-py3-none-any.whl"
DATA = b"not really a wheel\n" * 1000
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture
def origin(tmp_path):
    """A file to download, and a cache with nothing in it yet."""
    src = tmp_path / "origin" / NAME
    src.parent.mkdir()
    src.write_bytes(DATA)
    return src


@pytest.fixture
def pinned(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(fetch, "DOWNLOADS", [])
    monkeypatch.setattr(fetch, "PACKAGES", {"tiny": ("Tiny.Pkg==1.0", NAME, SHA)})
    return tmp_path / "cache" / "downloads" / NAME


def index_page(monkeypatch, files: list[dict], seen: list | None = None) -> None:
    """urlopen answers the index page with these files; a download (a plain URL) is opened for real."""
    real = fetch.urllib.request.urlopen

    def urlopen(request, timeout=None):
        if isinstance(request, str):
            return real(request, timeout=timeout)
        if seen is not None:
            seen.append((request.full_url, request.get_header("Accept")))
        return io.BytesIO(json.dumps({"meta": {"api-version": "1.1"}, "files": files}).encode())

    monkeypatch.setattr(fetch.urllib.request, "urlopen", urlopen)


def test_the_exact_pinned_file_is_picked_and_its_url_resolved():
    files = [{"filename": "tiny_pkg-1.0.tar.gz", "url": "../../f/a.tar.gz", "hashes": {"sha256": "1" * 64}},
             {"filename": "tiny_pkg-1.1-py3-none-any.whl", "url": "https://files.example/b.whl", "hashes": {}},
             {"filename": NAME, "url": "../../f/c.whl", "hashes": {"sha256": SHA}}]
    assert fetch.pick_file(files, NAME, "https://index.example/simple/tiny-pkg/") == (
        "https://index.example/f/c.whl", SHA)
    with pytest.raises(SystemExit, match="lists no tiny_pkg-2.0"):
        fetch.pick_file(files, "tiny_pkg-2.0-py3-none-any.whl", "https://index.example/simple/tiny-pkg/")


def test_download_moves_the_file_into_place_only_when_its_hash_matches(origin, tmp_path):
    dest = tmp_path / "cache" / NAME
    fetch.download(origin.as_uri(), dest, SHA)
    assert dest.read_bytes() == DATA
    other = tmp_path / "cache2" / NAME
    with pytest.raises(SystemExit, match=f"sha256 {SHA} is not the expected {'0' * 64}"):
        fetch.download(origin.as_uri(), other, "0" * 64)
    assert list(other.parent.iterdir()) == []  # neither the archive nor a .part left behind


def test_fetch_downloads_from_the_index_then_uses_the_cache(origin, pinned, monkeypatch):
    seen = []
    index_page(monkeypatch, [{"filename": NAME, "url": origin.as_uri(), "hashes": {"sha256": SHA}}], seen)
    assert fetch.fetch("tiny") == pinned and pinned.read_bytes() == DATA
    assert seen == [(fetch.INDEX + "/tiny-pkg/", "application/vnd.pypi.simple.v1+json")]
    origin.unlink()
    assert fetch.fetch("tiny") == pinned and len(seen) == 1  # from the cache, no second look-up


def test_fetch_copies_a_local_download_and_checks_it(origin, pinned, monkeypatch):
    monkeypatch.setattr(fetch, "DOWNLOADS", [origin.parent])
    assert fetch.fetch("tiny").read_bytes() == DATA
    pinned.write_bytes(b"altered")
    with pytest.raises(SystemExit, match=r"is not the expected .* \(delete it to download again\)"):
        fetch.fetch("tiny")


def test_a_hash_the_index_disagrees_with_stops_before_downloading(origin, pinned, monkeypatch):
    index_page(monkeypatch, [{"filename": NAME, "url": origin.as_uri(), "hashes": {"sha256": "f" * 64}}])
    with pytest.raises(SystemExit, match=f"lists sha256 {'f' * 64} for {NAME}, not the pinned {SHA}"):
        fetch.fetch("tiny")
    assert not pinned.exists()


def test_no_network_is_one_line(pinned, monkeypatch):
    def urlopen(request, timeout=None):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(fetch.urllib.request, "urlopen", urlopen)
    with pytest.raises(SystemExit) as stop:
        fetch.fetch("tiny")
    assert stop.value.code == (f"looking up {NAME} on {fetch.INDEX} failed: "
                               "<urlopen error [Errno -3] Temporary failure in name resolution>")
    assert not pinned.exists()
