"""Typed settings (provrag/config.py): config.toml's every key is a typed field, a user file is
checked key by key, and a bad value is one line that names the key."""
from __future__ import annotations

import dataclasses
import tomllib

import pytest

from provrag.config import Config, ConfigError, default_tables, load_config


def test_every_key_of_config_toml_is_a_typed_field_and_back():
    cfg = load_config()
    assert isinstance(cfg, Config)
    assert cfg.to_dict() == default_tables()  # nothing lost, nothing added (200 == 200.0)
    for section in dataclasses.fields(Config):
        assert dataclasses.is_dataclass(getattr(cfg, section.name))
    assert cfg.search.top_k_units == 10 and isinstance(cfg.load.max_file_mb, float)  # an int default read as a number
    assert list(cfg.verify.support_weights)[0] == "coverage"


@pytest.mark.parametrize("toml, message", [
    ('[chunk]\nsize_tokens = "big"\n', "'chunk.size_tokens' must be an integer (got 'big')"),
    ("[chunk]\nsize_tokens = true\n", "'chunk.size_tokens' must be an integer (got True)"),
    ("[load]\nocr = 1\n", "'load.ocr' must be true or false (got 1)"),
    ("[search]\nrerank = 3\n", "'search.rerank' must be a string (got 3)"),
    ('[extract]\nentity_types = "person"\n', "'extract.entity_types' must be a list"),
    ("[verify.support_weights]\ncoverage = \"high\"\n", "'verify.support_weights.coverage' must be a number"),
    ("[verify.support_weights]\nsalience = 1.0\n", "unknown setting 'verify.support_weights.salience'"),
    ("[chunk]\nsize = 3\n", "unknown setting 'chunk.size'"),
    ("chunk = 3\n", "'chunk' must be a table [chunk]"),
    ('[embed]\nengine = "minilm"\n', "[embed] was merged into [embeddings]"),
    ("[chunk\n", "is not valid TOML"),
])
def test_a_bad_user_file_is_one_line_naming_the_key(tmp_path, toml, message):
    f = tmp_path / "my.toml"
    f.write_text(toml)
    with pytest.raises(ConfigError) as e:
        load_config(f)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert e.value.exit_code == 2


def test_a_user_file_changes_only_its_keys(tmp_path):
    f = tmp_path / "my.toml"
    f.write_text("[chunk]\nsize_tokens = 400\n\n[verify.support_weights]\ncoverage = 0.5\n")
    cfg, base = load_config(f), load_config()
    assert cfg.chunk.size_tokens == 400 and cfg.chunk.overlap_tokens == base.chunk.overlap_tokens
    assert cfg.verify.support_weights["coverage"] == 0.5
    assert {k: v for k, v in cfg.verify.support_weights.items() if k != "coverage"} == \
        {k: v for k, v in base.verify.support_weights.items() if k != "coverage"}
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "missing.toml")


def test_settings_are_frozen_and_replace_is_checked():
    cfg = load_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.search.top_k_units = 3
    assert cfg.replace("search", top_k_units=3).search.top_k_units == 3
    with pytest.raises(ConfigError, match="must be an integer"):
        cfg.replace("search", top_k_units="3")


def test_the_shipped_defaults_parse_as_toml():
    from provrag.config import defaults_path

    with defaults_path().open("rb") as f:
        assert set(tomllib.load(f)) == {f.name for f in dataclasses.fields(Config)}


@pytest.mark.parametrize("toml, message", [
    ("[chunk]\nsize_tokens = 0\n", "'chunk.size_tokens' must be an integer ≥ 1 (got 0)"),
    ("[chunk]\noverlap_tokens = 300\n", "'chunk.overlap_tokens' must be smaller than chunk.size_tokens = 300 (got 300)"),
    ("[chunk]\nsize_tokens = 20\noverlap_tokens = -1\n", "'chunk.overlap_tokens' must be an integer ≥ 0 (got -1)"),
    ("[search]\ntop_k_units = -3\n", "'search.top_k_units' must be an integer ≥ 1 (got -3)"),
    ('[search]\ndefault_method = "fast"\n', "'search.default_method' must be one of 'auto', 'global', 'local', 'basic' (got 'fast')"),
    ('[embeddings]\nengine = "bert"\n', "'embeddings.engine' must be one of 'tfidf', 'minilm', 'openai' (got 'bert')"),
    ('[llm]\nengine = "claude"\n', "'llm.engine' must be one of 'offline', 'openai' (got 'claude')"),
    ("[verify]\nsupport_threshold = 1.5\n", "'verify.support_threshold' must be a number from 0 to 1 (got 1.5)"),
    ("[search]\nabstain_below = -0.1\n", "'search.abstain_below' must be a number from 0 to 1 (got -0.1)"),
    ("[skeleton]\nbeta = 2\n", "'skeleton.beta' must be a number from 0 to 1 (got 2.0)"),
    ("[skeleton]\ndamping = 1\n", "'skeleton.damping' must be a number ≥ 0 and < 1 (got 1.0)"),
    ("[llm]\ntimeout = -1\n", "'llm.timeout' must be a number ≥ 0 (got -1.0)"),
    ("[llm.max_tokens_by_step]\nextract = 0\n", "'llm.max_tokens_by_step.extract' must be an integer ≥ 1 (got 0)"),
    ("[llm.max_tokens_by_step]\nglean = 10\n", "unknown setting 'llm.max_tokens_by_step.glean' (see config.toml for the known ones)"),
    ("[llm]\ntimeout = nan\n", "'llm.timeout' must be a finite number (got nan)"),
    ("[llm]\nmax_retries = -1\n", "'llm.max_retries' must be an integer ≥ 0 (got -1)"),
    ("[load]\nmax_file_mb = 0\n", "'load.max_file_mb' must be a number > 0 (got 0.0)"),
    ("[extract]\nentity_types = []\n", "'extract.entity_types' must not be empty (got [])"),
    ("[communities]\nseed = -1\n", "'communities.seed' must be an integer from 0 to 18446744073709551615 (got -1)"),
])
def test_a_value_out_of_its_range_is_one_line_naming_key_value_and_range(tmp_path, toml, message):
    f = tmp_path / "bad.toml"
    f.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_config(f)
    assert str(e.value) == message and e.value.exit_code == 2


def test_every_number_has_a_range_unless_any_value_works():
    """A new numeric setting cannot skip validation by accident: it gets a rule() or is named here."""
    import typing

    free = {"verify.support_bias", "verify.contradict_bias", "llm.seed"}  # any number is meaningful
    for section, cls in typing.get_type_hints(Config).items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            name = f"{section}.{f.name}"
            if hints[f.name] in (int, float) and name not in free:
                assert {k for k, v in f.metadata.items() if v is not None} & {"lo", "hi", "above", "below"}, name
            if hints[f.name] is str and f.name in ("engine", "default_method", "rerank", "pdf_backend"):
                assert "one_of" in f.metadata, name


@pytest.mark.parametrize("toml, key", [
    ('[chunk]\nsize_tokens = "big"\n', "chunk.size_tokens"),
    ("[chunk]\nsize_tokens = 0\n", "chunk.size_tokens"),
    ("[search]\ntop_k_units = -3\n", "search.top_k_units"),
    ('[embeddings]\nengine = "bert"\n', "embeddings.engine"),
    ("[verify]\ncontradict_threshold = 7\n", "verify.contradict_threshold"),
])
def test_a_bad_config_through_the_cli_is_exit_2_and_one_line(tmp_path, provrag_cli, small_corpus, toml, key):
    import subprocess

    bad = tmp_path / "bad.toml"
    bad.write_text(toml, encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text((small_corpus / "sotu-1863-lincoln.txt").read_text(encoding="utf-8")[:2000])
    r = subprocess.run([*provrag_cli, "index", str(docs), "--out", str(tmp_path / "out"), "--config", str(bad), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and f"'{key}' must be" in r.stderr
    assert not (tmp_path / "out").exists()  # refused before any work
