"""HTML read as the page shows it (provrag/index/html_content.py): the site's chrome left out, each
paragraph's and each code block's text joined as a browser joins it, nothing of the page's own
content lost. On real pages: the Sphinx page of ../shared/corpora/small, and pages of the Python
and PostgreSQL manuals as Debian ships them (Sphinx and DocBook XSL, the two generators behind
most HTML manuals; fetched once per session with ../shared/corpora/fetch-debian-docs.sh)."""
from __future__ import annotations

import collections
import re
import shutil
import subprocess
from pathlib import Path

import lxml.etree
import lxml.html
import pytest

from provrag.config import load_config
from provrag.index.html_content import INLINE, page_content
from provrag.index.load import parse_options
from provrag.index.parse import parse_file
from tests import shared_material

pytestmark = pytest.mark.usefixtures("shared")

SCOPE = "debian-developers-reference-scope.html"
PYTHON_PAGES = ("json.html", "functools.html", "sqlite3.html", "pathlib.html")
POSTGRES_PAGES = ("sql-createtable.html", "sql-copy.html", "runtime-config-connection.html", "isn.html")


def text_of(path: Path) -> str:
    """The text the index stage keeps of an HTML file (parse_file, as the load workers call it)."""
    res = parse_file(str(path), "html", parse_options(load_config().load))
    assert res["status"] == "ok", res["error"]
    return res["text"]


def words(text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"[^\W_]+", text))


def visible(el) -> str:
    """What a browser shows of an element as one line: its text runs joined as they stand."""
    return " ".join("".join(el.itertext()).split())


def main_of(path: Path):
    root = lxml.html.document_fromstring(path.read_bytes())
    (main,) = root.xpath("//main | //*[@role='main']") or [root.find("body")]
    return main


@pytest.fixture(scope="session")
def html_manuals(tmp_path_factory) -> Path:
    """A few pages of the Python 3 and PostgreSQL manuals from their Debian packages (python3.*-doc,
    postgresql-doc-*), whatever version the archive holds: the tests assert how pages of these
    generators are read, not one version's words."""
    dest = tmp_path_factory.mktemp("html-manuals")
    for name in ("html-python", "html-postgres"):
        run = subprocess.run(["bash", str(shared_material.FETCH_DEBIAN_DOCS), str(dest / name), name],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"fetching {name} failed: {run.stderr.strip()[-300:]}"
    pages = dest / "pages"
    pages.mkdir()
    for name in PYTHON_PAGES:
        shutil.copy(dest / "html-python" / name, pages / name)
    for name in POSTGRES_PAGES:
        shutil.copy(dest / "html-postgres" / name, pages / name)
    return pages


def test_a_sphinx_page_is_read_without_its_chrome(small_corpus):
    text = text_of(small_corpus / SCOPE)
    # the sidebar, the related-links bars, the search box, the footer and the ¶ after each heading
    for chrome in ("Navigation", "Quick search", "Previous topic", "Next topic", "Show Source", "Copyright",
                   "documentation »", "¶"):
        assert chrome not in text, chrome
    assert text.startswith("1. Scope of This Document\n")
    # every paragraph of the page's main content is there, word for word as the browser joins it
    paras = [visible(p) for p in main_of(small_corpus / SCOPE).iter("p") if visible(p)]
    assert len(paras) == 5 and all(p in " ".join(text.split()) for p in paras)
    # a link inside a sentence no longer opens a gap: the quote is findable on the page
    assert "how to become a member (Applying to Become a Member);" in text


def test_nothing_of_the_main_content_is_lost(small_corpus, html_manuals):
    """Every word of a page's main content (Sphinx: role=main; DocBook: the body without its
    navheader / navfooter tables) is in the text, as often as it stands there."""
    for path in [small_corpus / SCOPE, *sorted(html_manuals.iterdir())]:
        main = main_of(path)
        for nav in main.xpath(".//*[contains(@class, 'navheader') or contains(@class, 'navfooter') "
                              "or contains(@class, 'headerlink')]"):
            nav.drop_tree()
        lxml.etree.strip_tags(main, *INLINE)   # a word split over two <span>s is one word on screen
        missing = words(" ".join(main.itertext())) - words(text_of(path))
        assert not missing, (path.name, missing.most_common(5))


def test_code_reads_as_on_the_page(html_manuals):
    json_text = text_of(html_manuals / "json.html")
    # Pygments wraps each token of a sample in a <span>: read as one text, the sample is the page's
    assert ">>> json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])" in json_text
    assert "json . dumps" not in json_text and "Table of Contents" not in json_text
    # a signature in an API list keeps its own punctuation, and so does the example under it
    functools = text_of(html_manuals / "functools.html")
    assert "@functools.lru_cache(maxsize=128, typed=False)" in functools
    assert "def factorial(n): return n * factorial(n-1) if n else 1" in " ".join(functools.split())
    # a class's description, whose methods are listed inside it, is read (docling dropped it)
    assert "Simple JSON decoder." in json_text and "Performs the following translations in decoding" in json_text
    # DocBook: the Prev / Up / Next tables go, a synopsis keeps its lines and its placeholders
    create = text_of(html_manuals / "sql-createtable.html")
    assert not re.search(r"\bPrev\b", create) and "Home" not in create.split("\n")[0]
    assert "TABLE [ IF NOT EXISTS ] table_name ( [\n" in create


def test_a_definition_list_with_lists_inside_keeps_its_terms_and_its_order(html_manuals):
    """PostgreSQL's SSL settings (runtime-config-connection): ssl_ciphers' definition holds a list
    of what its default means. Laid out as blocks, the settings lost their terms and a sentence of
    a definition was read under no setting; now each is an entry under its term, as docling writes
    any definition list, and the text after the inner list still comes after it."""
    from provrag.text.definitions import entries_of

    text = text_of(html_manuals / "runtime-config-connection.html")
    assert "- ssl_ciphers (string)\n    - Specifies a list of SSL cipher suites" in text
    inner, after = text.find("- !aNULL"), text.find("Available cipher suite details will vary")
    assert text.find("- ssl_ciphers (string)") < inner < after < text.find("- ssl_prefer_server_ciphers (boolean)")
    entries = {term: text[a:b] for _, a, b, term in entries_of(text)}
    assert "The default value is HIGH:MEDIUM:+3DES:!aNULL." in entries["ssl_ciphers (string)"]
    assert "The default is server.key." in entries["ssl_key_file (string)"]
    # a definition list whose definitions hold code or a table stays blocks (docling would move them)
    assert "\nclass json.JSONDecoder(" in text_of(html_manuals / "json.html")


def test_a_page_is_read_in_its_own_charset(tmp_path, html_manuals):
    """A page is decoded as docling would decode it and goes to docling as UTF-8 that says so:
    PostgreSQL's isn.html re-encoded in ISO-8859-1 and declared so, and the same page in UTF-8 with
    no declaration at all (lxml alone read it as Latin-1), are read with their accents, not as
    "GermÃ¡n"."""
    page = (html_manuals / "isn.html").read_text(encoding="utf-8")
    assert "Germán Méndez Bravo" in page and "charset=UTF-8" in page
    latin1 = tmp_path / "isn-latin1.html"
    declared = page.replace("charset=UTF-8", "charset=ISO-8859-1").replace('encoding="UTF-8"', 'encoding="ISO-8859-1"')
    latin1.write_bytes(declared.encode("latin-1", "xmlcharrefreplace"))
    undeclared = tmp_path / "isn-undeclared.html"
    undeclared.write_bytes(re.sub(r'<\?xml[^>]*\?>|<meta http-equiv="Content-Type"[^>]*>', "", page).encode("utf-8"))
    for path in (latin1, undeclared):
        text = text_of(path)
        assert "Germán Méndez Bravo" in text and "Ã" not in text and not re.search(r"\bPrev\b", text), path.name


def test_a_page_of_nothing_but_chrome_is_read_as_it_came(small_corpus):
    """Nothing is lost: a page whose every text is navigation (here the Sphinx page with its main
    content cut out) is given to docling unchanged, and indexed for what it holds."""
    root = lxml.html.document_fromstring((small_corpus / SCOPE).read_bytes())
    for main in root.xpath("//*[@role='main']"):
        main.drop_tree()
    data = lxml.html.tostring(root)
    assert page_content(data) == data


def test_an_answer_quotes_the_page_as_it_reads(tmp_path, html_manuals):
    """Through the real pipeline: the index's units hold the page's code as written, and ask's
    answer to a question the Python manual answers quotes it so."""
    import pyarrow.parquet as pq

    from provrag.pipelines.ask import run_ask
    from provrag.pipelines.index import run_index

    out = tmp_path / "idx"
    run_index(html_manuals, out, load_config())
    units = pq.read_table(out / "text_units.parquet", columns=["text"]).column("text").to_pylist()
    assert not any("Quick search" in u or "Previous topic" in u for u in units)
    result = run_ask("What is the default maxsize of lru_cache?", out, load_config(), save=False)
    assert not result.abstained and "128" in result.answer
    assert "functools.html" in result.sources[0].path
    assert not re.search(r"\w \. \w|\( \w", result.answer)   # no "functools . lru_cache ( maxsize"


def test_a_new_reading_reparses_html_files_only(tmp_path, small_corpus, monkeypatch):
    """How pages are read is part of an HTML file's parse-cache key (html_content.READING): when it
    changes, the next run parses the HTML again and takes every other file from the cache."""
    from provrag.index import html_content
    from provrag.index import load as L
    from provrag.store.cache import Cache

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in (SCOPE, "sotu-1863-lincoln.txt", "R-FAQ.pdf"):
        shutil.copyfile(small_corpus / name, docs / name)
    opts = load_config(overrides={"load": {"workers": 1}})
    first = L.load_folder(docs, opts, cache=Cache(tmp_path / "c1"))
    calls = []
    real = L.parse_file
    monkeypatch.setattr(L, "parse_file", lambda *a: calls.append(Path(a[0]).name) or real(*a))
    monkeypatch.setattr(html_content, "READING", html_content.READING + "-next")
    second = L.load_folder(docs, opts, cache=Cache(tmp_path / "c2", previous=tmp_path / "c1"))
    assert calls == [SCOPE] and second == first


def test_the_outline_is_the_pages_own_headings(html_manuals):
    """The headings a page's sections and global answers are built from (parse_file's outline) are
    its own: before, every page of the Python manual began with "Table of Contents", "Previous
    topic", "Next topic", "This Page" and "Navigation", and each heading ended in "¶"."""
    res = parse_file(str(html_manuals / "json.html"), "html", parse_options(load_config().load))
    titles = [h[1] for h in res["outline"]]
    assert titles[:3] == ["json - JSON encoder and decoder", "Basic Usage", "Encoders and Decoders"]
    assert not any("¶" in t or t in ("Previous topic", "Navigation", "Table of Contents") for t in titles)
