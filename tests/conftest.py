"""Fixtures of the whole suite: where the repository and ../shared's material are, the command
that runs the CLI, and what tests of several folders build from that material (an index of three
SQuAD articles, the scripted LLM server).

The paths come from tests/shared_material.py (the one place they are computed); a test asks for
them here, as fixtures, so it is skipped cleanly when ../shared is absent.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests import components, shared_material

if str(shared_material.REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(shared_material.REPO_ROOT))


def pytest_configure(config):
    """The suite's own user cache (provrag/usercache.py): digests and word lookups of the tests'
    processes (subprocesses inherit it) never land in, nor come from, the developer's ~/.cache."""
    import os
    import tempfile

    if not os.environ.get("PROVRAG_CACHE_DIR"):
        os.environ["PROVRAG_CACHE_DIR"] = config._provrag_cache = tempfile.mkdtemp(prefix="provrag-test-cache-")


def pytest_unconfigure(config):
    made = getattr(config, "_provrag_cache", None)
    if made:
        shutil.rmtree(made, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    if not shared_material.SHARED.exists() and not components.IN_CI:  # in CI the `shared` fixture fails them
        skip = pytest.mark.skip(reason=f"shared material not found at {shared_material.SHARED}")
        for item in items:
            if "shared" in item.keywords:
                item.add_marker(skip)


# ---- where things are ----------------------------------------------------------------------------

@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository (data/ holds the team's sample corpus; tests/llm_server.py runs from here)."""
    return shared_material.REPO_ROOT


@pytest.fixture(scope="session")
def sample_data(repo_root) -> Path:
    """data/: the team's sample corpus (the Halcyon plant's handbook, notes and design decisions)."""
    return repo_root / "data"


@pytest.fixture(scope="session")
def shared() -> Path:
    """../shared (read-only evidence); the test is skipped when it is absent (in CI: fails)."""
    if not shared_material.SHARED.exists():
        components.missing("../shared", f"shared material not found at {shared_material.SHARED}")
    return shared_material.SHARED


@pytest.fixture(scope="session")
def tesseract_binary() -> str:
    """Debian's tesseract on PATH (tests/scans.py's `needs_tesseract`); skipped without it (in CI: fails)."""
    return components.tesseract()


@pytest.fixture(scope="session")
def parsed_text():
    """parse(path, fmt) → the text provrag indexes of one file (index/parse.parse_file, default
    options), failing the test when the file does not parse."""
    from provrag.index.parse import parse_file

    def parse(path: Path, fmt: str) -> str:
        out = parse_file(str(path), fmt, {"max_file_mb": 50, "max_line_chars": 100_000, "pdf_backend": "pdfium",
                                          "ocr": False})
        assert out["status"] == "ok", out["error"]
        return out["text"]

    return parse


@pytest.fixture(scope="session")
def small_corpus(shared) -> Path:
    """../shared/corpora/small: real documents (three PDFs, a speech, a DOCX, an HTML page, their
    licenses), read-only."""
    return shared_material.SMALL_CORPUS


@pytest.fixture(scope="session")
def small_index(tmp_path_factory, small_corpus) -> Path:
    """../shared/corpora/small indexed once per session by the real pipeline (default settings):
    the tests that ask over R-FAQ.pdf and Lincoln's message read it, never change it."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("small-index") / "idx"
    run_index(small_corpus, out, load_config())
    return out


@pytest.fixture(scope="session")
def bad_corpus(shared) -> Path:
    """../shared/corpora/bad: broken files (empty, encrypted, truncated, not what their name says…),
    read-only; each must fail or be skipped with a one-line reason."""
    return shared_material.BAD_CORPUS


@pytest.fixture(scope="session")
def dulce(shared) -> Path:
    """../shared/fixtures/graphrag-dulce: Microsoft GraphRAG's indexes of the Operation Dulce
    novella in three generations (index-2025-v1, index-2025-v2, index-2026-v3), their real
    answers, and the novella itself (source/)."""
    return shared_material.DULCE


@pytest.fixture(scope="session")
def dulce_v3(dulce) -> Path:
    """The Dulce fixture's GraphRAG 2.x output folder (index-2026-v3), read-only."""
    return dulce / "index-2026-v3"


@pytest.fixture(scope="session")
def eval_dev(shared) -> Path:
    """../shared/eval/dev: the dev split of the evaluation sets (squad, halueval, vitaminc)."""
    return shared_material.EVAL_DEV


@pytest.fixture(scope="session")
def squad(eval_dev) -> Path:
    """The dev split's SQuAD articles as PDFs (corpus/), with documents.jsonl and questions.jsonl."""
    return shared_material.SQUAD


# ---- the command line ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def provrag_cli() -> list[str]:
    """The command that runs provrag in a subprocess, as `python -m provrag` (the same CLI)."""
    return [sys.executable, "-m", "provrag"]


@pytest.fixture(scope="session")
def provrag_script() -> list[str]:
    """The venv's `provrag` console script, for the tests that run the CLI exactly as a user does."""
    script = Path(sys.executable).parent / "provrag"
    assert script.exists(), f"no console script at {script} (install the project: pip install -e .)"
    return [str(script)]


# ---- built once per session for several folders -------------------------------------------------

@pytest.fixture(scope="session")
def squad_subset() -> tuple[str, ...]:
    """The three SQuAD articles (file names under squad/corpus/) that squad_subset_index holds."""
    return ("packet-switching.pdf", "1973-oil-crisis.pdf", "construction.pdf")


@pytest.fixture(scope="session")
def squad_subset_index(tmp_path_factory, squad, squad_subset) -> Path:
    """An offline index of three SQuAD PDFs (real pages, sentences cut by page breaks), built
    once per session: the query, pipelines and verify tests ask and verify over it."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    base = tmp_path_factory.mktemp("ask-squad-subset")
    docs = base / "docs"
    docs.mkdir()
    for name in squad_subset:
        shutil.copy(squad / "corpus" / name, docs / name)
    run_index(docs, base / "idx", load_config())
    return base / "idx"


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory, sample_data) -> Path:
    """An offline index of data/ (the Halcyon plant's documents), built once per session: ask's
    and verify's tests over the README's examples read it, never write it."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("sample-index") / "idx"
    run_index(sample_data, out, load_config())
    return out


@pytest.fixture(scope="module")
def scripted_llm_server():
    """The scripted OpenAI-compatible server (tests/llm_server.py) on a free port, one per test
    module, so the requests it counts are that module's alone."""
    from tests.llm_server import ScriptedLLMServer

    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="session")
def debian_manuals(tmp_path_factory, shared) -> Path:
    """The ten Debian manuals (R, Debian policy/FAQ/developers' reference, FHS, GNU maintainers,
    Asymptote; ~700 real pages) that a new user tried provrag on, fetched once per session with
    ../shared/corpora/fetch-debian-docs.sh (apt-get download from the Debian archive). Set
    PROVRAG_MANUALS to a folder that already holds them to skip the download."""
    import os
    import subprocess

    given = os.environ.get("PROVRAG_MANUALS")
    if given:
        dest = Path(given)
    else:
        dest = tmp_path_factory.mktemp("debian-manuals") / "docs"
        run = subprocess.run(["bash", str(shared_material.FETCH_DEBIAN_DOCS), str(dest), "pdf-manuals"],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"fetching the Debian manuals failed: {run.stderr.strip()[-300:]}"
    assert_pinned_manuals(dest)
    return dest


def assert_pinned_manuals(folder: Path) -> None:
    """The manuals are the ones the tests were written against (tests/debian_manuals.sha256): the
    archive's next package version must fail here, by name, not shift what the tests assert."""
    import hashlib

    pins = [line.split() for line in (Path(__file__).parent / "debian_manuals.sha256").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    wrong = []
    for digest, name in pins:
        f = folder / name
        got = hashlib.sha256(f.read_bytes()).hexdigest() if f.is_file() else "missing"
        if got != digest:
            wrong.append(f"{name} ({got[:12]}, pinned {digest[:12]})")
    assert not wrong, (f"the Debian manuals in {folder} are not the pinned ones: {', '.join(wrong)} — "
                       "a new package version? check the tests that read them, then update tests/debian_manuals.sha256")


@pytest.fixture(scope="session")
def manuals_index(tmp_path_factory, debian_manuals) -> Path:
    """An offline index of the ten Debian manuals (default settings), built once per session."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("manuals-index") / "idx"
    run_index(debian_manuals, out, load_config())
    return out


# TeX Live manuals from one pinned Debian package (texlive-latex-recommended-doc), by sha256
TEXLIVE_PACKAGE = "texlive-latex-recommended-doc=2022.20230122-3"
TEXLIVE_PDFS = {"booktabs.pdf": "7052d0760750c97a9fa3ae6e00942768a809f84a05466d36dc9e38f906d98dfe",
                "microtype.pdf": "87d5dea67dac255eddac75106b3b382e7dc20cf91e493888357664c93a9308f4",
                "listings.pdf": "9a6e55d925a56c2e84f131242b1d0aa607e22ea2c385539f5561b00bc2e94839",
                "polyglossia.pdf": "cbe8265b0db057f834d4be1e8c834002c6977defed8b9b878f2cd009e1642f8d"}


class UnpinnedError(Exception):
    """The pinned files cannot be had here: a version the archive no longer holds, or other bytes."""


def pinned_debian_files(tmp_path_factory, packages: list[str], pins: dict[str, str | None], given: str | None,
                        name: str) -> Path:
    """A folder holding the pinned files (name → sha256), byte-identical to the pinned Debian
    packages' ("package=version"): fetched once with apt-get download and unpacked with dpkg -x,
    or copied from `given`, a folder that already holds them. A digest of None is not checked (a
    package taken at whatever version the archive holds). When a download fails, the package
    lists are refreshed once (as root), as ../shared/corpora/fetch-debian-docs.sh does."""
    import hashlib
    import subprocess

    dest = tmp_path_factory.mktemp(name) / "docs"
    dest.mkdir()
    if given:
        for f in pins:
            shutil.copy(Path(given) / f, dest / f)
    else:
        work = tmp_path_factory.mktemp(name + "-deb")
        for package in packages:
            run = _apt_download(package, work)
            if run.returncode != 0:
                raise UnpinnedError(f"apt-get download {package} failed: {run.stderr.strip()[-300:]}")
        for deb in work.glob("*.deb"):
            subprocess.run(["dpkg", "-x", str(deb), str(work / "root")], check=True, timeout=600)
        for f in pins:
            found = [x for x in (work / "root").rglob(f) if x.is_file() and not x.is_symlink()]
            assert found, f"{f} is not in {', '.join(packages)}"
            shutil.copy(found[0], dest / f)
    for f, digest in pins.items():
        got = hashlib.sha256((dest / f).read_bytes()).hexdigest()
        if digest is not None and got != digest:
            raise UnpinnedError(f"{f} is not the pinned package's ({got[:12]})")
    return dest


_LISTS_REFRESHED: list[bool] = []


def _apt_download(package: str, work: Path):
    """apt-get download, after one `apt-get update` per session when the package is not found
    and we may refresh the lists (root): a fresh machine's lists can predate the pinned version."""
    import os
    import subprocess

    def download():
        return subprocess.run(["apt-get", "download", "-qq", package], cwd=work, capture_output=True,
                              text=True, timeout=900)

    run = download()
    if run.returncode != 0 and not _LISTS_REFRESHED and os.geteuid() == 0:
        _LISTS_REFRESHED.append(True)
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, timeout=900)
        run = download()
    return run


@pytest.fixture(scope="session")
def texlive_package(tmp_path_factory) -> Path:
    """A folder holding the TEXLIVE_PDFS manuals, byte-identical to the pinned Debian package's
    (PROVRAG_TEXLIVE: a folder that already holds them, e.g. the output of fetch-debian-docs.sh
    DIR pdf-texlive)."""
    import os

    return pinned_debian_files(tmp_path_factory, [TEXLIVE_PACKAGE], TEXLIVE_PDFS, os.environ.get("PROVRAG_TEXLIVE"),
                               "texlive-package")


# Two manuals a new user tried that no check set holds: the Bash Reference Manual and gnuplot's
BASH_GNUPLOT_PACKAGES = ["bash-doc=5.2.15-2", "gnuplot-doc=5.4.4+dfsg1-2"]
BASH_GNUPLOT_PDFS = {"bashref.pdf": "104971d389c0b9b7a261b0b3070a53b0d8cce6db1ffddefcc8423ddda92acd87",
                     "gnuplot.pdf": "df68dd0613f043141512fc4436d17aaf96727d5a758d85233915ac5056a97206"}


@pytest.fixture(scope="session")
def bash_gnuplot_index(tmp_path_factory) -> Path:
    """An offline index of bashref.pdf and gnuplot.pdf (507 pages), from their pinned Debian
    packages (PROVRAG_BASH_GNUPLOT: a folder that already holds them)."""
    import os

    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    docs = pinned_debian_files(tmp_path_factory, BASH_GNUPLOT_PACKAGES, BASH_GNUPLOT_PDFS,
                               os.environ.get("PROVRAG_BASH_GNUPLOT"), "bash-gnuplot")
    out = tmp_path_factory.mktemp("bash-gnuplot-index") / "idx"
    run_index(docs, out, load_config())
    return out


def pinned_or_current(tmp_path_factory, package: str, version: str, pins: dict[str, str], env: str,
                      name: str) -> Path:
    """pinned_debian_files for package=version; when the archive has moved past that version, the
    files of the version it holds, unchecked (a stable release's point updates leave these pages'
    text alone). `env`: the variable that may name a folder already holding the files."""
    import os

    given = os.environ.get(env)
    try:
        return pinned_debian_files(tmp_path_factory, [f"{package}={version}"], pins, given, name)
    except UnpinnedError:
        return pinned_debian_files(tmp_path_factory, [package], dict.fromkeys(pins), given, name)


# Two of Graphviz's manual pages as its Debian package prints them to PDF (groff: a running head on
# every page, a NAME line "dot − filter for drawing directed graphs"): a register no check set holds
GRAPHVIZ_PACKAGE = "graphviz-doc"
GRAPHVIZ_VERSION = "2.42.2-7+deb12u1"
GRAPHVIZ_PAGES = {"gvpr.1.pdf.gz": "8ed7fdb11337ff3e320ac5e89cba51c66a580b10c389a95f24ecb8cfe60f1e18",
                  "dot.1.pdf.gz": "490f9f40e8f8f0fb3e16384f18f2efe7a49c30aadc892940f49f17a8b451312e"}


@pytest.fixture(scope="session")
def graphviz_man_index(tmp_path_factory) -> Path:
    """An offline index of gvpr(1) and dot(1) as graphviz-doc ships them (gzipped PDFs), pinned;
    when the archive has moved past that version, its own (a stable release's point updates leave
    these pages' text alone). PROVRAG_GRAPHVIZ_DOCS: a folder that already holds the .pdf.gz files."""
    import gzip

    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    gz = pinned_or_current(tmp_path_factory, GRAPHVIZ_PACKAGE, GRAPHVIZ_VERSION, GRAPHVIZ_PAGES,
                           "PROVRAG_GRAPHVIZ_DOCS", "graphviz-pages")
    docs = tmp_path_factory.mktemp("graphviz-docs")
    for f in GRAPHVIZ_PAGES:
        (docs / f.removesuffix(".gz")).write_bytes(gzip.decompress((gz / f).read_bytes()))
    out = tmp_path_factory.mktemp("graphviz-index") / "idx"
    run_index(docs, out, load_config())
    return out


# SQLite's page on VACUUM from its Debian documentation package (HTML): "What does VACUUM do?"
SQLITE_PACKAGE = "sqlite3-doc"
SQLITE_VERSION = "3.40.1-2+deb12u2"
SQLITE_PAGES = {"lang_vacuum.html": "a3538f97def4dcb979752ceaf60e3fc3fc7f2fd425ec02987fa76e9c5eba3e31"}


@pytest.fixture(scope="session")
def sqlite_vacuum_index(tmp_path_factory) -> Path:
    """An offline index of SQLITE_PAGES, pinned; when the archive has moved past that version,
    its own (PROVRAG_SQLITE_DOCS: a folder that already holds the page)."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    docs = pinned_or_current(tmp_path_factory, SQLITE_PACKAGE, SQLITE_VERSION, SQLITE_PAGES, "PROVRAG_SQLITE_DOCS",
                             "sqlite-pages")
    out = tmp_path_factory.mktemp("sqlite-index") / "idx"
    run_index(docs, out, load_config())
    return out


# Five pages of PostgreSQL 15's HTML documentation: settings as definition lists, types as tables.
# postgresql-doc-15 has point releases within Debian 12, and the archive holds only the newest, so
# the pages are pinned for each version seen (their footers name it); when the archive has moved
# past them all, the version it holds is taken unchecked: the tests read settings and types that
# point releases do not change.
POSTGRES_PACKAGE = "postgresql-doc-15"
POSTGRES_PAGES = {
    "15.20-0+deb12u1": {
        "runtime-config-resource.html": "3c90cd8eb4bae5234f1e0506401162ef87dede7bab54c1320e1db476046c29ea",
        "runtime-config-connection.html": "97578da824175e05ceb7849079df64438488205d97d845825c34bc2bd09ad079",
        "runtime-config-wal.html": "99d4d950bc0ce5d824d7202c36da5a46d914be1520422e32126d59b15cc98782",
        "datatype-numeric.html": "f99eb292b204c600076666669fbcac7fcafdda29f6a7a4f7d25ad15748f34484",
        "datatype-datetime.html": "00535f58839a780d04492feb83258fb09fffc9d40bd66368eaeebf3aa4fd31d4"},
    "15.18-0+deb12u1": {
        "runtime-config-resource.html": "40f30a9e3b7e0465a19db3bd2a44cad1eb4c68d4cb3284bc23c4ff19b383d475",
        "runtime-config-connection.html": "090622518e3244444bb7b786f2356f466bb53b5732bc4bee8d1932417f8b8268",
        "runtime-config-wal.html": "ceaeee6b02c6cdb36f0690fc5228d4310ab8c3c6565a88591097cfc304d77abc",
        "datatype-numeric.html": "506e487c1dc2960105ffb6d2beaa7dce68b34c6e179b3b5d002dd830633f21a0",
        "datatype-datetime.html": "d37b563ef283f199ada163dc837c6a5a4294f1915330763fcd9ec45890f5777e"},
}


@pytest.fixture(scope="session")
def postgres_pages(tmp_path_factory) -> Path:
    """POSTGRES_PAGES from a pinned version of their Debian package, else the archive's own
    (PROVRAG_POSTGRES_DOCS: a folder that already holds them, e.g. its
    /usr/share/doc/postgresql-doc-15/html)."""
    import os

    given = os.environ.get("PROVRAG_POSTGRES_DOCS")
    tried = []
    for version, pins in POSTGRES_PAGES.items():
        try:
            return pinned_debian_files(tmp_path_factory, [f"{POSTGRES_PACKAGE}={version}"], pins, given,
                                       "postgres-pages")
        except UnpinnedError as e:
            tried.append(str(e))
    pages = dict.fromkeys(next(iter(POSTGRES_PAGES.values())))
    try:
        return pinned_debian_files(tmp_path_factory, [POSTGRES_PACKAGE], pages, given, "postgres-pages")
    except UnpinnedError as e:
        raise AssertionError("; ".join(tried + [str(e)])) from None


@pytest.fixture(scope="session")
def postgres_index(tmp_path_factory, postgres_pages) -> Path:
    """An offline index of POSTGRES_PAGES."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("postgres-index") / "idx"
    run_index(postgres_pages, out, load_config())
    return out


@pytest.fixture(scope="session")
def four_manuals_index(tmp_path_factory, texlive_package) -> Path:
    """An offline index of the four pinned TeX Live manuals (booktabs, microtype, listings, polyglossia)."""
    from provrag.config import load_config
    from provrag.pipelines.index import run_index

    out = tmp_path_factory.mktemp("four-manuals-index") / "idx"
    run_index(texlive_package, out, load_config())
    return out


@pytest.fixture
def unit_fetches(monkeypatch) -> list[str]:
    """The ids of every text unit row read from an index while the test runs (store/units._fetch),
    in order: a unit read twice appears twice."""
    from provrag.store import units

    read: list[str] = []
    fetch = units._fetch

    def spy(reader, ids, positions, rows):
        read.extend(ids)
        return fetch(reader, ids, positions, rows)

    monkeypatch.setattr(units, "_fetch", spy)
    return read
