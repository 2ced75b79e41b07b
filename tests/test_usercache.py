"""The user cache (provrag/usercache.py): a digest is reused only while its file is unchanged,
so changed weights are still refused; a word's library answer comes back the same from another
process, which then does not import the library (issue 30: a cold ask)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from provrag import usercache
from provrag.embeddings import minilm


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROVRAG_CACHE_DIR", str(folder))
    return folder


def _flip_a_byte_keeping_size_and_mtime(path):
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2)
        byte = f.read(1)
        f.seek(st.st_size // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))   # the same size and mtime: only ctime moved


def test_a_file_written_to_is_hashed_again(cache_dir, tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(os.urandom(1 << 20))
    first = usercache.file_sha256(path)
    assert first == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (cache_dir / usercache.FILE_NAME).is_file()
    assert usercache.file_sha256(path) == first            # from the cache: the file did not change
    _flip_a_byte_keeping_size_and_mtime(path)
    assert usercache.file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest() != first


def test_minilm_weights_corrupted_after_a_cached_check_are_refused(cache_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(minilm.model_dir(), folder)
    minilm._load_model(folder)                               # checked once: the digest is cached
    minilm._MODELS.pop(str(folder))
    _flip_a_byte_keeping_size_and_mtime(folder / "model.safetensors")
    with pytest.raises(minilm.MiniLMUnavailable, match="is not the official"):
        minilm._load_model(folder)
    assert str(folder) not in minilm._MODELS


REMEMBERED = """
import json, sys
from provrag.usercache import remembered
from provrag.text import words
from provrag.engines.offline.judge.features import rarity
print(json.dumps({"terms": [words.term_stem(w) for w in sys.argv[1:]], "rarity": [rarity(w) for w in sys.argv[1:]],
                  "imported": sorted(m for m in ("simplemma", "wordfreq") if m in sys.modules)}))
"""


def test_a_second_process_gets_the_same_lemmas_and_rarities_without_the_libraries(cache_dir):
    said = ["led", "children", "wrote", "commissioning", "acoustics", "Halcyon"]

    def run():
        done = subprocess.run([sys.executable, "-c", REMEMBERED, *said], capture_output=True, text=True,
                              env=dict(os.environ), timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    first, second = run(), run()
    assert first["imported"] == ["simplemma", "wordfreq"]   # an empty cache: the libraries answer
    assert second["imported"] == []                         # the same words again: the cache answers
    assert second["terms"] == first["terms"] and second["rarity"] == first["rarity"]
    assert first["terms"][:3] == ["lead", "child", "write"]


def test_an_unusable_cache_folder_computes_as_before(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("PROVRAG_CACHE_DIR", str(blocker / "provrag"))
    path = tmp_path / "f.bin"
    path.write_bytes(b"provrag")
    assert usercache.file_sha256(path) == hashlib.sha256(b"provrag").hexdigest()
    assert usercache.remembered("test len", len)("four") == 4


def test_words_are_written_as_they_come_not_all_held_until_exit(cache_dir, monkeypatch):
    """An index run meets hundreds of thousands of words and a server never exits: past
    WRITE_EVERY words the pending ones are written, and a reader of the file sees them."""
    import sqlite3

    monkeypatch.setattr(usercache, "WRITE_EVERY", 50)
    upper = usercache.remembered("test upper", str.upper)
    words = [f"w{i}" for i in range(120)]
    assert [upper(w) for w in words] == [w.upper() for w in words]
    con = sqlite3.connect(usercache.cache_folder() / usercache.FILE_NAME)
    stored = dict(con.execute("SELECT word, value FROM words WHERE kind = 'test upper'").fetchall())
    assert len(stored) >= 100 and all(stored[w] == w.upper() for w in stored)
