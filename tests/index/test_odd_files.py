"""Odd entries of DOCS on real files: names that are not UTF-8 (or hold a backslash, a newline),
links of every kind, a named pipe, and `index FILE` — each recorded in documents.parquet,
none ending in a traceback."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from provrag.config import load_config
from provrag.index.load import load_folder
from provrag.store.paths import escape_path, original_path, path_bytes

pytestmark = pytest.mark.usefixtures("shared")

LATIN1 = b"caf\xe9 \xff.pdf"            # not UTF-8: a Latin-1 name and a byte no encoding uses
BACKSLASH = b"back\\slash \\x41.txt"    # looks like an escape: must stay distinguishable
NEWLINE = b"two\nlines.md"


def cfg():
    return load_config(overrides={"load": {"workers": 1}})


def put(folder, name: bytes, source) -> None:
    shutil.copyfile(source, os.path.join(os.fsencode(folder), name))


@pytest.fixture()
def odd_names(tmp_path, small_corpus):
    docs = tmp_path / "docs"
    docs.mkdir()
    put(docs, LATIN1, small_corpus / "R-FAQ.pdf")
    put(docs, BACKSLASH, small_corpus / "sotu-1863-lincoln.txt")
    put(docs, NEWLINE, small_corpus / "sotu-1863-lincoln.txt")
    shutil.copyfile(small_corpus / "R-FAQ.pdf", docs / "plain.pdf")
    return docs


@pytest.fixture()
def links(tmp_path, small_corpus):
    """A folder with one real file and every kind of link and a named pipe."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "sub" / "sotu.txt")
    (docs / "out-file.pdf").symlink_to(small_corpus / "asymptote-CAD.pdf")
    (docs / "out-folder").symlink_to(small_corpus / "licenses")
    (docs / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    (docs / "loop.txt").symlink_to(docs / "loop.txt")
    (docs / "in-folder").symlink_to(docs / "sub")
    (docs / "in-file.txt").symlink_to("sub/sotu.txt")
    os.mkfifo(docs / "pipe.txt")
    return docs


def test_names_of_any_bytes_are_kept_losslessly_and_indexed(odd_names):
    docs = {d.path: d for d in load_folder(odd_names, cfg())}
    on_disk = sorted(os.listdir(os.fsencode(odd_names)))
    assert sorted(path_bytes(p) for p in docs) == on_disk  # every stored path gives the name back
    latin1 = docs[r"caf\xe9 \xff.pdf"]
    assert latin1.status == "ok" and latin1.text == docs["plain.pdf"].text and latin1.n_pages > 1
    assert r"back\\slash \\x41.txt" in docs and r"two\x0alines.md" in docs
    assert all(d.status == "ok" for d in docs.values())
    for d in docs.values():  # what Arrow, JSON and a terminal get is plain UTF-8 text
        assert d.path.encode("utf-8") and d.title.encode("utf-8")
        assert (odd_names / original_path(d.path)).is_file()
    assert escape_path(r"caf\xe9".encode()) != escape_path(b"caf\xe9")  # the literal text stays distinct


def test_odd_names_through_the_cli(odd_names, tmp_path, provrag_cli):
    out = tmp_path / "out"
    r = subprocess.run([*provrag_cli, "index", str(odd_names), "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["documents"] == summary["documents_ok"] == 4
    rows = pq.read_table(out / "documents.parquet", columns=["path", "status"]).to_pylist()
    assert sorted(path_bytes(row["path"]) for row in rows) == sorted(os.listdir(os.fsencode(odd_names)))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert r"caf\xe9 \xff.pdf" in [d["path"] for d in manifest["documents"]]
    r = subprocess.run([*provrag_cli, "ask", "How do I install R packages?", "--index", str(out), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    paths = {s["path"] for s in json.loads(r.stdout)["sources"]}
    assert paths <= {row["path"] for row in rows} and paths & {r"caf\xe9 \xff.pdf", "plain.pdf"}
    r = subprocess.run([*provrag_cli, "index", str(odd_names), "--out", str(tmp_path / "shown")],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]


def test_links_are_never_followed_and_each_has_a_row_saying_why(links, small_corpus):
    docs = {d.path: d for d in load_folder(links, cfg())}
    assert sorted(docs) == ["dangling.txt", "in-file.txt", "in-folder", "loop.txt", "out-file.pdf",
                            "out-folder", "pipe.txt", "sub/sotu.txt"]
    assert docs["sub/sotu.txt"].status == "ok"
    why = {p: d.error for p, d in docs.items() if d.status != "ok"}
    assert all(docs[p].status == "skipped" and not docs[p].text and docs[p].sha256 is None for p in why)
    assert "outside DOCS" in why["out-file.pdf"] and str((small_corpus / "asymptote-CAD.pdf").resolve()) in why["out-file.pdf"]
    assert "folder outside DOCS" in why["out-folder"]
    assert why["dangling.txt"].startswith("broken link") and "no such file" in why["dangling.txt"]
    assert why["loop.txt"].startswith("broken link") and "symbolic links" in why["loop.txt"]
    assert "folder sub inside DOCS: not followed" in why["in-folder"] and "twice or loop" in why["in-folder"]
    assert why["in-file.txt"] == "link to sub/sotu.txt, indexed as sub/sotu.txt (not twice)"
    assert "named pipe" in why["pipe.txt"]  # never opened: reading a pipe would block the run
    assert not any("licenses" in p for p in docs)  # nothing under a linked folder is indexed


def test_index_a_single_file(tmp_path, small_corpus, provrag_cli):
    src = tmp_path / "in" / "speech.txt"
    src.parent.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", src)
    (tmp_path / "link.txt").symlink_to(src)
    for given, stored in ((src, "speech.txt"), (tmp_path / "link.txt", "link.txt")):
        out = tmp_path / f"out-{stored}"
        r = subprocess.run([*provrag_cli, "index", str(given), "--out", str(out), "--json"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
        assert json.loads(r.stdout)["documents_ok"] == 1
        rows = pq.read_table(out / "documents.parquet", columns=["path", "status", "sha256"]).to_pylist()
        assert [(row["path"], row["status"]) for row in rows] == [(stored, "ok")]  # a link named by the user is followed
    r = subprocess.run([*provrag_cli, "index", str(tmp_path / "nothing.txt"), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def load_as_a_user_would(docs: Path) -> dict[str, tuple[str, str | None]]:
    """path → (status, error) of load_folder(docs) in a child process. Root reads every folder
    whatever its bits (CI runs as root), so as root the child runs without that power
    (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH): a folder of mode 0 is then
    unreadable to it, as to any user. (Skipping as root hid a crash on such a folder.)"""
    code = ("import json, sys\nfrom provrag.config import load_config\nfrom provrag.index.load import load_folder\n"
            "cfg = load_config(None, {'load': {'workers': 1}})\n"
            "print(json.dumps({d.path: [d.status, d.error] for d in load_folder(sys.argv[1], cfg)}))")
    cmd = [sys.executable, "-c", code, str(docs)]
    if os.geteuid() == 0:
        drop = "-dac_override,-dac_read_search"
        cmd = ["setpriv", f"--inh-caps={drop}", f"--bounding-set={drop}", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return {p: tuple(v) for p, v in json.loads(r.stdout).items()}


def test_an_unreadable_folder_is_a_failed_row(tmp_path, small_corpus):
    docs = tmp_path / "docs"
    (docs / "locked").mkdir(parents=True)
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "locked" / "a.txt")
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "b.txt")
    (docs / "locked").chmod(0)
    try:
        rows = load_as_a_user_would(docs)
    finally:
        (docs / "locked").chmod(0o755)
    assert rows["b.txt"][0] == "ok" and rows["locked"][0] == "failed" and "locked/a.txt" not in rows
    assert "cannot read this folder" in rows["locked"][1]


def test_a_folder_named_in_any_bytes_is_indexed_and_an_index_folder_must_be_text(tmp_path, small_corpus, provrag_cli):
    docs = os.path.join(os.fsencode(tmp_path), b"docs \xe9")
    os.mkdir(docs)
    put(os.fsdecode(docs), b"a.txt", small_corpus / "sotu-1863-lincoln.txt")
    r = subprocess.run([*provrag_cli, "index", docs, "--out", str(tmp_path / "out"), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert path_bytes(manifest["docs_root"]) == docs and json.loads(r.stdout)["documents_ok"] == 1
    bad_out = os.path.join(os.fsencode(tmp_path), b"out \xe9")
    r = subprocess.run([*provrag_cli, "index", docs, "--out", bad_out], capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r"out \xe9" in r.stderr
    assert not os.path.exists(bad_out)  # refused before any work


def test_a_raw_name_that_slips_into_a_table_is_written_escaped_not_a_crash():
    from provrag.store import schema

    raw = os.fsdecode(b"caf\xe9.pdf")  # what Python hands over for a Latin-1 name (PEP 383)
    table = schema.to_arrow(schema.DOCUMENTS, [{"id": "d", "error": f"cannot open {raw}", "metadata": {"name": raw}}])
    assert table.column("error").to_pylist() == [r"cannot open caf\xe9.pdf"]
    assert table.column("metadata").to_pylist() == [[("name", r"caf\xe9.pdf")]]
