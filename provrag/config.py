"""Settings: config.toml holds every default; a user file overrides only the keys it holds.

The defaults live in one file, config.toml (at the repository root, shipped inside the
package), so that what a user reads is what the code uses. Each `[section]` is loaded into a
frozen dataclass whose fields are exactly that section's keys, typed like their defaults, so
the code reads `cfg.search.top_k_units` and never repeats a default of its own. A user file
(`--config FILE`) and in-code overrides (tests) are merged key by key; an unknown key or a
value of the wrong type is a ConfigError (one line, exit 2).
"""
from __future__ import annotations

import copy
import dataclasses
import tomllib
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from provrag.errors import UsageError


class ConfigError(UsageError):
    """A config file that cannot be read, names keys provrag does not know, or holds a value of
    the wrong type."""


@dataclass(frozen=True)
class LoadSettings:
    pdf_backend: str
    workers: int
    ocr: bool
    max_file_mb: float
    max_line_chars: int
    parse_cache: bool


@dataclass(frozen=True)
class ChunkSettings:
    size_tokens: int
    overlap_tokens: int


@dataclass(frozen=True)
class EmbeddingSettings:
    engine: str
    lsa_dimensions: int
    batch_size: int
    model: str
    base_url: str
    api_key_env: str
    dimensions: int


@dataclass(frozen=True)
class SkeletonSettings:
    beta: float
    knn_k: int
    lexical_k: int
    damping: float


@dataclass(frozen=True)
class ExtractSettings:
    max_entities_per_unit: int
    min_frequency: int
    gleanings: int
    keyphrases_per_unit: int
    description_max_chars: int
    batch_units: int
    entity_types: list[str]


@dataclass(frozen=True)
class CommunitySettings:
    max_cluster_size: int
    seed: int
    use_lcc: bool


@dataclass(frozen=True)
class ReportSettings:
    max_findings: int
    summary_sentences: int
    max_input_tokens: int


@dataclass(frozen=True)
class SearchSettings:
    default_method: str
    top_k_units: int
    global_level: int
    answer_sentences: int
    lexical_weight: float
    candidate_pool: int
    context_units: int
    local_entity_boost: float
    global_max_reports: int
    map_batch_tokens: int
    global_themes: int
    rerank: str
    rerank_sentences: int
    rerank_weight: float
    rerank_maxsim_weight: float
    rerank_paragraph_weight: float
    abstain_below: float


@dataclass(frozen=True)
class ResolveSettings:
    top_k: int


@dataclass(frozen=True)
class VerifySettings:
    top_k_retrieved: int
    top_k_cited: int
    max_window: int
    support_threshold: float
    support_bias: float
    contradict_threshold: float
    contradict_bias: float
    contradict_min_coverage: float
    support_weights: dict[str, float]
    contradict_weights: dict[str, float]


@dataclass(frozen=True)
class LLMSettings:
    engine: str
    model: str
    base_url: str
    api_key_env: str
    timeout: float
    max_retries: int
    concurrency: int
    requests_per_minute: float
    temperature: float
    seed: int
    backoff_seconds: float
    max_backoff_seconds: float
    max_tokens: int
    json_mode: bool
    max_context_tokens: int


@dataclass(frozen=True)
class Config:
    """Every setting of provrag, one typed section per [section] of config.toml."""

    load: LoadSettings
    chunk: ChunkSettings
    embeddings: EmbeddingSettings
    skeleton: SkeletonSettings
    extract: ExtractSettings
    communities: CommunitySettings
    reports: ReportSettings
    search: SearchSettings
    resolve: ResolveSettings
    verify: VerifySettings
    llm: LLMSettings

    def to_dict(self) -> dict[str, Any]:
        """The settings as config.toml's nested tables (what manifest.json records)."""
        return dataclasses.asdict(self)

    def replace(self, section: str, **values) -> "Config":
        """A copy with some keys of one section changed (checked like a user file)."""
        return _build(_merge(self.to_dict(), {section: values}))


# Sections renamed or merged since earlier releases: a user file that still names them gets
# told where the keys went instead of "unknown setting".
MOVED = {"embed": "[embed] was merged into [embeddings]: engine = \"tfidf\" | \"minilm\" | \"openai\", "
                  "lsa_dimensions, batch_size (see config.toml)"}


def _merge(base: dict, override: dict, where: str = "") -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        name = f"{where}{key}"
        if key not in base:
            if not where and key in MOVED:
                raise ConfigError(MOVED[key])
            raise ConfigError(f"unknown setting '{name}' (see config.toml for the known ones)")
        if isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"'{name}' must be a table [{name}]")
            out[key] = _merge(base[key], value, f"{name}.")
        else:
            out[key] = value
    return out


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _checked(name: str, value: Any, kind: Any) -> Any:
    """`value` as type `kind` (an int is a valid float), or a ConfigError naming the key."""
    origin = typing.get_origin(kind)
    if origin is list:
        (item,) = typing.get_args(kind)
        if not isinstance(value, list):
            raise ConfigError(f"'{name}' must be a list (got {value!r})")
        return [_checked(f"{name}[{i}]", v, item) for i, v in enumerate(value)]
    if origin is dict:
        _, item = typing.get_args(kind)
        if not isinstance(value, dict):
            raise ConfigError(f"'{name}' must be a table (got {value!r})")
        return {str(k): _checked(f"{name}.{k}", v, item) for k, v in value.items()}
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"'{name}' must be {_TYPE_NAMES[kind]} (got {value!r})")
    return value


def _build(raw: dict) -> Config:
    sections = {}
    hints = typing.get_type_hints(Config)
    for f in fields(Config):
        cls = hints[f.name]
        table = raw.get(f.name)
        if not isinstance(table, dict):
            raise ConfigError(f"config.toml has no [{f.name}] table")
        kinds = typing.get_type_hints(cls)
        missing = [k for k in kinds if k not in table]
        if missing:  # only the shipped defaults can lack a key: a packaging error, said plainly
            raise ConfigError(f"[{f.name}] lacks {', '.join(missing)} in provrag's config.toml")
        sections[f.name] = cls(**{k: _checked(f"{f.name}.{k}", table[k], kinds[k]) for k in kinds})
    return Config(**sections)


def defaults_path() -> Path:
    """config.toml as shipped: inside the package (a wheel), linked to the repository root."""
    from importlib.resources import files

    return Path(str(files("provrag") / "config.toml"))


def default_tables() -> dict[str, Any]:
    """config.toml's tables as plain dicts (for tools that print or diff the defaults)."""
    with defaults_path().open("rb") as f:
        return tomllib.load(f)


def load_config(path: str | Path | None = None, overrides: dict | None = None) -> Config:
    """Defaults, then the user file, then in-code overrides (tests, CLI flags)."""
    raw = default_tables()
    if path is not None:
        p = Path(path)
        try:
            with p.open("rb") as f:
                user = tomllib.load(f)
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {p}") from None
        except IsADirectoryError:
            raise ConfigError(f"config file is a folder: {p}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"config file {p} is not valid TOML: {e}") from None
        raw = _merge(raw, user)
    if overrides:
        raw = _merge(raw, overrides)
    return _build(raw)
