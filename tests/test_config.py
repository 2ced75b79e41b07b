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
