"""Properties that hold for any input (Hypothesis), over a real index of ../shared/corpora/small:

- the `[Data: …]` parser never raises, never reaches its defensive catch, and every id it returns
  is written in its own block (a number, or inside a range "3-7" written there);
- `resolve` of arbitrary text returns a result (or a one-line provrag error), never an exception;
- any settings file gives a working config (a resolve runs with it) or a one-line error, exit 2;
- any file name (bytes) and any content under DOCS gets its row in documents.parquet (ok,
  failed or skipped, a one-line reason), never a traceback;
- `provrag sql` of arbitrary text is a result or a one-line error, exit 2.

Budgets: tests/attack/conftest.py (PROVRAG_FUZZ=full for `make fuzz`). Each property appends its
example count to $PROVRAG_FUZZ_COUNTS when set (bench/results figures)."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.attack.conftest import budget, count

FUZZ = dict(deadline=None, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                   HealthCheck.data_too_large, HealthCheck.filter_too_much])
def one_line_error(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text.strip() and "Traceback" not in text


# ---- the [Data: …] parser -----------------------------------------------------------------------

# pieces real answers and broken model output are made of, mixed with arbitrary text
PIECES = st.sampled_from(["[Data: ", "[data:", "[Data ", "【Data: ", "Reports", "Entities", "Sources", "Relationships",
                          "Claims", "report", "text units", " (", ")", "]", "[", ",", ", ", ";", " and ", "+more",
                          "...", "-", "–", "3-7", "0-400", "007", "12", "²", "①", "٣", "१२", "\n", "**", "\\[",
                          "#", "id ", "no. ", " ", ".", "Lincoln spoke.", "Dr. Hayes said"])
CITATION_TEXT = st.one_of(st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=30).map("".join),
                          st.text(max_size=200))


def written_ids(block: str) -> set[int]:
    """The numbers written in a block: each digit run, and every number of a written range."""
    found = {int(d) for d in re.findall(r"\d+", block)}
    for lo, hi in re.findall(r"(\d+)\s*[-–]\s*(\d+)", block):
        found.update(range(int(lo), int(hi) + 1) if int(hi) - int(lo) <= 200 else ())
    return found


@settings(max_examples=budget(ci=300, full=5000), **FUZZ)
@given(text=CITATION_TEXT)
def test_the_citation_parser_never_raises_and_returns_only_written_ids(text):
    from provrag.query.citations import parse_citations

    count("citation parser")
    res = parse_citations(text)
    assert not any(p.reason.startswith("parser error") for p in res.problems), res.problems
    for block in res.blocks:
        assert text[block.span[0]:block.span[1]] == block.text
        for ref in block.refs:
            assert set(ref.ids) <= written_ids(block.text), (block.text, ref.ids)


def test_a_superscript_digit_does_not_lose_the_answer_s_other_citations():
    """Regression: '²'.isdigit() is true but int('²') raises; the parser's defensive catch then
    dropped every later block and every block's sentence."""
    from provrag.query.citations import parse_citations

    res = parse_citations("Lincoln spoke [Data: Sources (1, 2)]. He won [Data: Reports (²)]. R is free [Data: Sources (3)].")
    assert [r.ids for b in res.blocks for r in b.refs] == [[1, 2], [3]]
    assert [b.sentence for b in res.blocks] == ["Lincoln spoke.", "R is free."]
    assert not any(p.reason.startswith("parser error") for p in res.problems)
    assert any("²" in p.fragment for p in res.problems)


# ---- resolve of arbitrary text ------------------------------------------------------------------

@pytest.fixture(scope="module")
def cfg():
    from provrag.config import load_config

    return load_config()


@settings(max_examples=budget(ci=60, full=1500), **FUZZ)
@given(text=st.one_of(CITATION_TEXT, st.text(max_size=2000), st.binary(max_size=200).map(
    lambda b: b.decode("utf-8", "replace"))))
def test_resolve_of_arbitrary_text_returns(small_served_index, cfg, text):
    from provrag.errors import ProvragError
    from provrag.pipelines.resolve import run_resolve

    count("resolve")
    try:
        res = run_resolve(small_served_index, text, cfg).to_json()
    except ProvragError as e:
        assert one_line_error(str(e)), str(e)
        return
    json.dumps(res)
    assert res["answer"] == text
    assert all(s["document"] and s["text_unit_id"] for s in res["sources"])


# ---- settings files -----------------------------------------------------------------------------

def toml_value(draw, depth: int = 0):
    return draw(st.one_of(
        st.integers(-10**20, 10**20), st.floats(allow_nan=True), st.booleans(), st.text(max_size=20),
        st.sampled_from(["offline", "openai", "auto", "tfidf", "minilm", "local", "ray", "1979-05-27T07:32:00Z",
                         "1979-05-27"]),
        *([st.lists(st.integers(-5, 5) | st.text(max_size=5), max_size=4)] if depth < 2 else [])))


def toml_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\d(T[\d:]+Z)?", value):
        return value           # a TOML date or datetime, not a string
    return json.dumps(value)   # a JSON string is a TOML basic string


@st.composite
def settings_file(draw) -> bytes:
    """A TOML file of real sections and keys (and some unknown ones) with values of any type, or
    arbitrary bytes now and then."""
    from provrag.config import default_tables

    tables = default_tables()
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=300))
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        section = draw(st.sampled_from([*tables, "nosuch", "llm.extra"]))
        lines.append(f"[{section}]")
        known = list(tables.get(section, {})) or ["key"]
        for _ in range(draw(st.integers(0, 4))):
            key = draw(st.one_of(st.sampled_from(known), st.just("typo_key")))
            default = tables.get(section, {}).get(key)
            keep = default is not None and not isinstance(default, dict) and draw(st.booleans())
            literal = toml_literal(default if keep else toml_value(draw))
            lines.append(f"{key} = {literal}")
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 5)) == 0:   # damage it
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.text(max_size=5)) + text[cut:]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=budget(ci=80, full=2000), **FUZZ)
@given(raw=settings_file())
def test_any_settings_file_is_a_config_or_a_one_line_error(tmp_path_factory, raw):
    from provrag.config import Config, ConfigError, load_config

    count("settings file")
    path = tmp_path_factory.mktemp("cfg") / "settings.toml"
    path.write_bytes(raw)
    try:
        cfg = load_config(path)
    except ConfigError as e:
        assert one_line_error(str(e)), str(e)
        return
    assert isinstance(cfg, Config)


@settings(max_examples=budget(ci=8, full=120), **FUZZ)
@given(raw=settings_file())
def test_the_cli_with_any_settings_file_works_or_exits_2_with_one_line(small_served_index, tmp_path_factory, raw):
    """`provrag resolve … --config F` in-process (typer's runner): exit 0 with a resolved answer,
    or exit 2 and one line on stderr."""
    from provrag.cli import app

    count("settings file (CLI)")
    path = tmp_path_factory.mktemp("cfg") / "settings.toml"
    path.write_bytes(raw)
    run = CliRunner().invoke(app, ["resolve", "Lincoln spoke [Data: Sources (1)].", "--index", str(small_served_index),
                                   "--config", str(path), "--json"])
    if run.exit_code == 0:
        assert json.loads(run.stdout)["citations"]
    else:
        assert run.exit_code == 2, (run.exit_code, run.stderr, run.exception)
        assert one_line_error(run.stderr), run.stderr


def test_a_settings_file_that_is_not_utf8_is_a_one_line_error(tmp_path):
    """Regression: tomllib raised UnicodeDecodeError, which the CLI reported as an internal error."""
    from provrag.config import ConfigError, load_config

    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[llm]\nmodel = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(path)


# ---- any file under DOCS ------------------------------------------------------------------------

NAME = st.binary(min_size=1, max_size=60).filter(
    lambda b: b"/" not in b and b"\0" not in b and not b.startswith(b".") and b not in (b".", b".."))
SUFFIX = st.sampled_from([b"", b".txt", b".md", b".pdf", b".html", b".docx", b".pptx", b".gz", b".TXT", b".htm",
                          b".csv", b".json"])
CONTENT = st.one_of(st.binary(max_size=3000), st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
                    st.sampled_from([b"%PDF-1.7\n", b"PK\x03\x04", b"\x1f\x8b\x08\x00", b"<html><body>",
                                     b"\xef\xbb\xbfBOM text", b"\xff\xfe\x00t\x00e"]).flatmap(
                        lambda head: st.binary(max_size=500).map(lambda tail: head + tail)))


@settings(max_examples=budget(ci=2, full=40), **FUZZ)
@given(files=st.dictionaries(st.tuples(NAME, SUFFIX).map(b"".join), CONTENT, min_size=1, max_size=6))
def test_any_file_name_and_content_under_docs_is_recorded(tmp_path_factory, small_corpus, cfg, files):
    import duckdb

    from provrag.pipelines.index import run_index
    from provrag.store.paths import escape_path

    count("files under DOCS")
    files = {name: data for name, data in files.items() if len(name) <= 250}
    assume(files)
    work = tmp_path_factory.mktemp("docs")
    docs = work / "docs"
    docs.mkdir()
    shutil.copyfile(small_corpus / "sotu-1863-lincoln.txt", docs / "known.txt")   # one document that reads
    wanted = {"known.txt"}
    for name, data in files.items():
        target = os.path.join(os.fsencode(docs), name)
        with open(target, "wb") as f:
            f.write(data)
        wanted.add(escape_path(Path(os.fsdecode(name))))
    summary = run_index(docs, work / "idx", cfg)
    rows = duckdb.sql(f"SELECT path, status, error FROM read_parquet('{work / 'idx' / 'documents.parquet'}')").fetchall()
    assert {p for p, _, _ in rows} == wanted
    for path, status, error in rows:
        assert status in ("ok", "failed", "skipped"), (path, status)
        if status != "ok":
            assert error and one_line_error(error), (path, error)
    assert summary.documents_ok >= 1
    shutil.rmtree(work, ignore_errors=True)


# ---- provrag sql of arbitrary text --------------------------------------------------------------

SQL_PIECES = st.sampled_from(["SELECT ", "FROM ", "WHERE ", "*", "1", "'output/manifest.json'", "'manifest.json'",
                              "text_units", "documents", "traces", "citations", "read_csv('/etc/passwd')",
                              "now()", "current_timestamp", "INTERVAL 3 DAY", "'a'::BLOB", "MAP {'k': 1}",
                              "[1, 2]", "{'a': 1}", "1.5::DECIMAL(5,2)", "uuid()", "TIMETZ '10:00:00+02'",
                              "'inf'::DOUBLE", "1::HUGEINT", "range(3)", "glob('*')", ";", ",", "(", ")", " ",
                              "ATTACH ", "COPY ", "PRAGMA ", "SET ", "'", "\"", "--", "/*", "UNION ALL ",
                              "DESCRIBE ", "SUMMARIZE ", "SHOW TABLES", "VALUES (1)", "LIMIT 2", "AS x"])
SQL = st.one_of(st.lists(SQL_PIECES, min_size=1, max_size=12).map("".join), st.text(max_size=80))


@settings(max_examples=budget(ci=80, full=2000), **FUZZ)
@given(query=SQL)
def test_sql_of_arbitrary_text_is_a_result_or_a_one_line_error(small_served_index, query):
    from provrag.store.sql import SqlError, run_sql

    count("sql")
    try:
        res = run_sql(small_served_index, query, timeout_s=5, limit=50)
    except SqlError as e:
        assert one_line_error(str(e)), str(e)
        return
    json.dumps(res.to_json())


@pytest.mark.parametrize("query", ["SELECT * FROM 'manifest.json'", "SELECT now() AS t",
                                   "SELECT created::TIMESTAMPTZ AS t FROM traces"])
def test_sql_with_a_time_zone_value_is_a_result(small_served_index, query, monkeypatch):
    """Regression: DuckDB turns a TIMESTAMP WITH TIME ZONE into Python through pytz, which was not
    installed: "Required module 'pytz' failed to import" came out of `provrag sql`."""
    from provrag.cli import app

    monkeypatch.chdir(small_served_index)
    run = CliRunner().invoke(app, ["sql", query, "--index", str(small_served_index), "--json"])
    assert run.exit_code == 0, run.stderr
    assert "pytz" not in run.stdout + run.stderr
    json.loads(run.stdout)
