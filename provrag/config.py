"""Settings: the repository's config.toml holds every default; a user file overrides keys.

The defaults live in one file (config.toml at the project root) so that what a user reads
is what the code uses; `load_config(path)` deep-merges a user file that holds only the keys
it changes.
"""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

DEFAULTS_PATH = Path(__file__).resolve().parent.parent / "config.toml"


class ConfigError(ValueError):
    """A config file that cannot be read or names keys provrag does not know."""


def _merge(base: dict, override: dict, where: str = "") -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        name = f"{where}{key}"
        if key not in base:
            raise ConfigError(f"unknown setting '{name}' (see config.toml for the known ones)")
        if isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"'{name}' must be a table [{name}]")
            out[key] = _merge(base[key], value, f"{name}.")
        else:
            out[key] = value
    return out


def defaults() -> dict[str, Any]:
    with DEFAULTS_PATH.open("rb") as f:
        return tomllib.load(f)


def load_config(path: str | Path | None = None, overrides: dict | None = None) -> dict[str, Any]:
    """Defaults, then the user file, then in-code overrides (tests, CLI flags)."""
    cfg = defaults()
    if path is not None:
        p = Path(path)
        try:
            with p.open("rb") as f:
                user = tomllib.load(f)
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {p}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"config file {p} is not valid TOML: {e}") from None
        cfg = _merge(cfg, user)
    if overrides:
        cfg = _merge(cfg, overrides)
    return cfg
