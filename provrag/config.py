"""Settings: config.toml holds every default; a user file overrides only the keys it holds.

The defaults live in one file, config.toml (at the repository root, shipped inside the
package), so that what a user reads is what the code uses. Each `[section]` is loaded into a
frozen dataclass whose fields are exactly that section's keys, typed like their defaults, so
the code reads `cfg.search.top_k_units` and never repeats a default of its own. A user file
(`--config FILE`) and in-code overrides (tests) are merged key by key; an unknown key, a
value of the wrong type or a value out of its range is a ConfigError (one line naming the
key, the value and what is allowed; exit 2) when the config is loaded, not a traceback
minutes later in the stage that uses it.

What each key allows is data on its field (`rule()`, `choice()` in the dataclasses below),
checked by one function; the few checks between two keys of a section sit in that
section's `__post_init__`.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import tomllib
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from provrag.errors import UsageError


class ConfigError(UsageError):
    """A config file that cannot be read, names keys provrag does not know, or holds a value of
    the wrong type or out of its range."""


def rule(lo: float | None = None, hi: float | None = None, *, above: float | None = None,
         below: float | None = None, nonempty: bool = False) -> Any:
    """A field whose value must lie in [lo, hi] (or strictly above/below a bound); for a list,
    not be empty (`nonempty`). Checked by load_config()."""
    return field(metadata={"lo": lo, "hi": hi, "above": above, "below": below, "nonempty": nonempty})


def choice(*values: str) -> Any:
    """A field whose value must be one of `values`."""
    return field(metadata={"one_of": values})


def count() -> Any:
    """An integer ≥ 0 (0 usually means "none" or "no limit", as config.toml says)."""
    return rule(0)


def positive() -> Any:
    """An integer ≥ 1."""
    return rule(1)


def share() -> Any:
    """A share or probability: a number from 0 to 1."""
    return rule(0, 1)


@dataclass(frozen=True)
class LoadSettings:
    pdf_backend: str = choice("pypdfium2", "docling-parse", "docling-layout")  # index/pdf.py BACKENDS
    workers: int = count()          # 0 = one per CPU
    running_heads: bool
    ocr: bool
    max_file_mb: float = rule(above=0)
    max_line_chars: int = count()   # 0 = no limit
    parse_cache: bool


@dataclass(frozen=True)
class ChunkSettings:
    size_tokens: int = positive()
    overlap_tokens: int = count()

    def __post_init__(self):
        if self.overlap_tokens >= self.size_tokens:
            raise ConfigError(f"'chunk.overlap_tokens' must be smaller than chunk.size_tokens = {self.size_tokens} "
                              f"(got {self.overlap_tokens})")


@dataclass(frozen=True)
class EmbeddingSettings:
    engine: str = choice("tfidf", "minilm", "openai")
    lsa_dimensions: int = positive()
    max_vocabulary: int = count()   # 0 = no cap
    batch_size: int = positive()
    model: str
    base_url: str
    api_key_env: str
    dimensions: int = count()       # 0 = the model's own
    passage_vectors: bool           # index/passages.py: paragraphs' MiniLM vectors written at index time


@dataclass(frozen=True)
class SkeletonSettings:
    beta: float = share()
    knn_k: int = count()
    lexical_k: int = count()
    damping: float = rule(0, below=1)   # PageRank's alpha: 1 never converges
    ann_above: int = count()            # 0 = exact neighbours for every document


@dataclass(frozen=True)
class ExtractSettings:
    max_entities_per_unit: int = positive()
    min_frequency: int = positive()
    gleanings: int = count()
    keyphrases_per_unit: int = count()
    description_max_chars: int = positive()
    batch_units: int = positive()
    entity_types: list[str] = rule(nonempty=True)


@dataclass(frozen=True)
class CommunitySettings:
    max_cluster_size: int = rule(2)
    seed: int = rule(0, 2**64 - 1)  # graspologic's Leiden takes an unsigned 64-bit seed
    use_lcc: bool


@dataclass(frozen=True)
class ReportSettings:
    max_findings: int = positive()
    summary_sentences: int = positive()
    max_input_tokens: int = positive()


@dataclass(frozen=True)
class SearchSettings:
    default_method: str = choice("auto", "global", "local", "basic")
    top_k_units: int = positive()
    global_level: int = count()
    answer_sentences: int = positive()
    lexical_weight: float = share()
    candidate_pool: int = positive()
    context_units: int = positive()
    local_entity_boost: float = rule(0)
    global_max_reports: int = positive()
    map_batch_tokens: int = positive()
    global_themes: int = positive()
    global_words: int = positive()
    rerank: str = choice("minilm", "none")
    rerank_sentences: int = positive()
    rerank_weight: float = rule(0)
    rerank_maxsim_weight: float = rule(0)
    rerank_paragraph_weight: float = rule(0)
    meaning_int8: bool              # the meaning pass runs MiniLM with int8 matmuls (embeddings/minilm.py)
    abstain_below: float = share()
    # the learned reader (issue 26): provrag/engines/offline/learned.py
    reader: str = choice("learned", "features")
    answer_min_prob: float = share()
    reader_sentences: int = positive()
    reader_passages: int = count()
    retries: int = rule(0, 2)
    retry_from: float = share()
    sources_listed: int = count()
    reader_weights: dict[str, float]


@dataclass(frozen=True)
class ResolveSettings:
    top_k: int = positive()


@dataclass(frozen=True)
class VerifySettings:
    top_k_retrieved: int = count()
    top_k_cited: int = count()
    max_window: int = positive()
    support_threshold: float = share()  # the scores are probabilities (a logistic of the features)
    support_bias: float
    contradict_threshold: float = share()
    contradict_bias: float
    contradict_min_coverage: float = share()
    support_weights: dict[str, float]
    contradict_weights: dict[str, float]
    # the learned judge (issue 26): provrag/engines/offline/judge/learned.py
    judge: str = choice("learned", "features")
    judge_spans: int = positive()
    judge_vetoes: bool
    supported_min_prob: float = share()
    contradicted_min_prob: float = share()


@dataclass(frozen=True)
class LLMSettings:
    engine: str = choice("offline", "openai")
    model: str
    base_url: str
    api_key_env: str
    timeout: float = rule(0)            # 0 = sized per request (engines/openai/endpoint.py)
    max_retries: int = count()
    concurrency: int = count()          # 0 = 4 for OpenAI/Azure, 1 for any other server
    requests_per_minute: float = rule(0)  # 0 = no limit
    temperature: float = rule(0, 2)     # OpenAI's range
    seed: int
    backoff_seconds: float = rule(0)
    max_backoff_seconds: float = rule(0)
    max_tokens: int = count()       # 0 = each step's budget in max_tokens_by_step
    json_mode: bool
    max_context_tokens: int = count()   # 0 = 12000 for OpenAI/Azure, 4096 for any other server
    strict: bool
    give_up_after: int = count()        # 0 = never: every item of a step is asked for
    max_tokens_by_step: dict[str, int]

    def __post_init__(self):
        for step, budget in self.max_tokens_by_step.items():
            if budget < 1:  # a model step's reply is never unbounded
                raise ConfigError(f"'llm.max_tokens_by_step.{step}' must be an integer ≥ 1 (got {budget!r})")


@dataclass(frozen=True)
class ExecutorSettings:
    kind: str = choice("local", "ray")  # provrag/executors/
    address: str                        # ray: "auto", "ray://host:port", "host:port" or "" (a Ray of this machine)
    num_workers: int = count()          # 0 = auto

    def __post_init__(self):
        import re

        if self.address not in ("", "auto") and not re.fullmatch(r"(ray://)?[\w.\-\[\]:]+:\d+", self.address):
            raise ConfigError(f"'executor.address' must be \"auto\", \"ray://HOST:PORT\", \"HOST:PORT\" or \"\" "
                              f"(got {self.address!r})")


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
    executor: ExecutorSettings

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
    if kind is float and not math.isfinite(value):
        raise ConfigError(f"'{name}' must be a finite number (got {value!r})")
    return value


def _bounds(kind: Any, rules: typing.Mapping) -> str:
    """What `rules` allow, in words ("an integer ≥ 1", "a number from 0 to 1")."""
    noun = _TYPE_NAMES.get(kind, "a value")
    lo, hi, above, below = (rules.get(k) for k in ("lo", "hi", "above", "below"))
    if lo is not None and hi is not None:
        return f"{noun} from {lo} to {hi}"
    said = [f"{sign} {bound}" for sign, bound in (("≥", lo), (">", above), ("<", below), ("≤", hi)) if bound is not None]
    return f"{noun} {' and '.join(said)}"


def _allowed(name: str, value: Any, kind: Any, rules: typing.Mapping) -> None:
    """A ConfigError unless `value` (already of type `kind`) keeps its field's rules."""
    if "one_of" in rules and value not in rules["one_of"]:
        raise ConfigError(f"'{name}' must be one of {', '.join(map(repr, rules['one_of']))} (got {value!r})")
    if isinstance(value, list) and rules.get("nonempty") and not value:
        raise ConfigError(f"'{name}' must not be empty (got {value!r})")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    lo, hi, above, below = (rules.get(k) for k in ("lo", "hi", "above", "below"))
    if ((lo is not None and value < lo) or (hi is not None and value > hi)
            or (above is not None and value <= above) or (below is not None and value >= below)):
        raise ConfigError(f"'{name}' must be {_bounds(kind, rules)} (got {value!r})")


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
        values = {k: _checked(f"{f.name}.{k}", table[k], kinds[k]) for k in kinds}
        for key in fields(cls):
            _allowed(f"{f.name}.{key.name}", values[key.name], kinds[key.name], key.metadata)
        sections[f.name] = cls(**values)
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
        except UnicodeDecodeError as e:    # TOML is UTF-8; tomllib lets the decoding error through
            raise ConfigError(f"config file {p} is not UTF-8 text (byte {e.start}: {e.reason})") from None
        except OSError as e:
            raise ConfigError(f"cannot read config file {p}: {e.strerror or e}") from None
        raw = _merge(raw, user)
    if overrides:
        raw = _merge(raw, overrides)
    return _build(raw)
