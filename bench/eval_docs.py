"""The documents behind eval/texlive, eval/heldout and eval/options: where they are, how they are fetched, pinned.

    .venv/bin/python bench/eval_docs.py fetch SET [DEST]     # SET: texlive | heldout | options
    .venv/bin/python bench/eval_docs.py check SET [DIR]      # which documents DIR lacks or holds changed

Each of those sets lists its documents in eval/<set>/corpus.json: the Debian package and the
exact version that ships each one, its path inside the package, its sha256 and its page count.
``fetch`` downloads exactly those versions (``apt-get download PKG=VERSION``: no install, no
dependencies), unpacks them (``dpkg -x``), copies each listed file flat into DEST (``.pdf.gz``
gunzipped) with every package's copyright file under DEST/licenses/, and refuses a file whose
sha256 differs — so the set a reviewer rebuilds is byte for byte the one the items were read from.

eval/options also holds manual pages that ship only as roff source: a document with a ``render``
field is printed to PDF by groff from its page in the package (bench/man_render.py), and, as
groff's PDF bytes carry a date, is pinned by its page count and the sha256 of its page texts
(``text_sha256``) instead; the .deb it comes from is pinned by sha256 (corpus.json's ``debs``,
checked before it is unpacked). Fetching those needs groff's PDF device; a DocsError says so.

DEST defaults to the cache folder ``documents_dir(SET)`` returns: $PROVRAG_TEXLIVE or
$PROVRAG_HELDOUT / $PROVRAG_OPTIONS when set (a folder that already holds the files, e.g. the shared TeX Live
download), else ``$XDG_CACHE_HOME/provrag-eval/SET`` (~/.cache/...). bench/qa_sets.py and
tests/bench/test_qa_sets.py find the documents there.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from bench import man_render  # imported as bench.eval_docs (the tests)
except ImportError:
    import man_render  # run as a script, or imported from bench/: bench/ is the import root

ROOT = Path(__file__).resolve().parents[1]
EVAL_DATA = ROOT / "eval"
LISTED_SETS = ("texlive", "heldout", "options")
ENV_VARS = {"texlive": "PROVRAG_TEXLIVE", "heldout": "PROVRAG_HELDOUT", "options": "PROVRAG_OPTIONS"}


class DocsError(Exception):
    """A set's documents cannot be fetched or do not match what its items were written from."""


def listing(set_name: str) -> dict:
    """eval/<set>/corpus.json: {"packages": {pkg: version}, "documents": [{name, package, path, sha256, pages}]};
    eval/options' also "debs": {pkg: sha256 of the .deb}, and rendered documents {name, package, path,
    render, pages, text_sha256} (see the module docstring)."""
    path = EVAL_DATA / set_name / "corpus.json"
    if set_name not in LISTED_SETS or not path.exists():
        raise DocsError(f"no document listing for set {set_name!r} (sets with one: {', '.join(LISTED_SETS)})")
    return json.loads(path.read_text())


def documents_dir(set_name: str) -> Path:
    """Where the set's documents are looked for and fetched to (see the module docstring)."""
    given = os.environ.get(ENV_VARS.get(set_name, ""), "")
    if given:
        return Path(given)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "provrag-eval" / set_name


def sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()  # Python ≥ 3.11 reads it in blocks


def problems(set_name: str, folder: Path) -> list[str]:
    """What ``folder`` lacks for the set, one line each: missing documents or licenses, changed files."""
    meta = listing(set_name)
    out = []
    for doc in meta["documents"]:
        f = folder / doc["name"]
        if not f.is_file():
            out.append(f"missing {doc['name']} (from {doc['package']} {meta['packages'][doc['package']]})")
        elif "text_sha256" in doc:
            if man_render.text_digest(f) != (doc["pages"], doc["text_sha256"]):
                out.append(f"changed {doc['name']}: its page texts differ from {doc['path']} of {doc['package']} "
                           f"{meta['packages'][doc['package']]} as `{doc['render']}` printed it")
        elif sha256(f) != doc["sha256"]:
            out.append(f"changed {doc['name']}: sha256 differs from {doc['package']} {meta['packages'][doc['package']]}")
    for pkg in sorted(meta["packages"]):
        if not (folder / "licenses" / f"{pkg}.copyright").is_file():
            out.append(f"missing licenses/{pkg}.copyright")
    return out


def fetch(set_name: str, dest: Path | None = None) -> Path:
    """Download the pinned packages and copy the listed documents and licenses into ``dest``."""
    meta = listing(set_name)
    dest = Path(dest or documents_dir(set_name))
    if any("render" in d for d in meta["documents"]) and (why := man_render.groff_problem()):
        raise DocsError(f"{set_name}'s manual pages are printed to PDF by groff, and here {why}")
    (dest / "licenses").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"provrag-eval-{set_name}-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)  # apt's sandbox user must be able to write the .deb here
        for pkg, version in sorted(meta["packages"].items()):
            run = subprocess.run(["apt-get", "download", "-qq", f"{pkg}={version}"], cwd=work,
                                 capture_output=True, text=True, timeout=1800)
            if run.returncode != 0:
                why = (run.stderr.strip().splitlines() or ["no output"])[-1]
                raise DocsError(f"apt-get download {pkg}={version} failed: {why} "
                                f"(run `apt-get update` first; the version is pinned so the set stays the same)")
            deb = next(work.glob(f"{pkg}_*.deb"))
            pinned = meta.get("debs", {}).get(pkg)
            if pinned and sha256(deb) != pinned:
                raise DocsError(f"{deb.name}: sha256 differs from the one eval/{set_name}/corpus.json pins")
            subprocess.run(["dpkg", "-x", str(deb), str(work / pkg)], check=True, timeout=600)
            deb.unlink()
            copyright_file = work / pkg / "usr" / "share" / "doc" / pkg / "copyright"
            if copyright_file.is_file():
                shutil.copyfile(copyright_file, dest / "licenses" / f"{pkg}.copyright")
            for doc in (d for d in meta["documents"] if d["package"] == pkg):
                src = work / pkg / doc["path"]
                if not src.is_file():
                    raise DocsError(f"{pkg} {version} has no {doc['path']}")
                target = dest / doc["name"]
                if "render" in doc:
                    try:
                        man_render.render(src, target)
                    except man_render.RenderError as e:
                        raise DocsError(str(e)) from e
                elif src.suffix == ".gz":
                    with gzip.open(src, "rb") as fin, open(target, "wb") as fout:
                        shutil.copyfileobj(fin, fout)
                else:
                    shutil.copyfile(src, target)
            shutil.rmtree(work / pkg)
    wrong = problems(set_name, dest)
    if wrong:
        raise DocsError(f"{set_name} documents in {dest} do not match eval/{set_name}/corpus.json: " + "; ".join(wrong))
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("fetch", "check"))
    ap.add_argument("set", choices=LISTED_SETS)
    ap.add_argument("dir", nargs="?", type=Path, help="default: documents_dir(SET)")
    a = ap.parse_args()
    folder = a.dir or documents_dir(a.set)
    try:
        if a.action == "fetch":
            print(f"{a.set}: {len(listing(a.set)['documents'])} documents in {fetch(a.set, folder)}")
            return 0
        wrong = problems(a.set, folder)
    except DocsError as e:
        print(e, file=sys.stderr)
        return 2
    print("\n".join(wrong) if wrong else f"{a.set}: every document in {folder} matches corpus.json")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
