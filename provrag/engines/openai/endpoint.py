"""Which server the `openai` engine talks to and with which key, decided before any request.

config.toml names the environment VARIABLE that holds the key, never the key, so a config
file or a manifest can be shared. A remote server without its key is a configuration error
raised when the engine or embedder is built — before any document is read — while a local
server (Ollama, vLLM on localhost…) needs none.
"""
from __future__ import annotations

import os
import time
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from provrag.config import ConfigError

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


class LLMConfigError(ConfigError):
    """Settings that cannot work (no key for a remote server); one line for the CLI."""


def is_local(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    return host in LOCAL_HOSTS or host.endswith(".localhost")


def resolve_key(api_key_env: str, base_url: str, where: str, fallback_env: str = "") -> str | None:
    """The key from the environment variable NAMED in config; None when none is needed.

    `api_key_env = ""` means "this server takes no key" (a LAN vLLM, say). A remote server
    with the variable unset is a configuration error, caught before any document is read.
    fallback_env: [embeddings] falls back to [llm]'s variable, so one key setting serves both.
    """
    name = (api_key_env or "").strip()
    for n in (name, fallback_env.strip()):
        key = os.environ.get(n) if n else None
        if key:
            return key
    base = base_url or ""
    if not name or is_local(base):
        return None
    # dotted names, not "[llm]": the CLI prints through rich, which would eat a bracketed word
    target = base or f"OpenAI ({where}.base_url is empty)"
    raise LLMConfigError(f"the openai engine needs an API key for {target}: environment variable {name} "
                         f"(named by {where}.api_key_env) is not set; set it, or point {where}.base_url "
                         "at a local server")


# ---------------------------------------------------------------- what the server can take

OPENAI_CONCURRENCY = 4
OPENAI_TIMEOUT = 120.0     # seconds: OpenAI answers a bounded reply well within this
FIRST_LOCAL_TIMEOUT = 600.0  # a local server before any reply was timed (a cold model may load for minutes)
TIMEOUT_RANGE = (60.0, 1800.0)


def is_openai(base_url: str) -> bool:
    """OpenAI itself (an empty base_url) or Azure OpenAI: servers that serve many requests at once."""
    host = (urlsplit(base_url).hostname or "") if base_url else "api.openai.com"
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def concurrency_for(concurrency: int, base_url: str) -> int:
    """Requests in flight: the configured number, or (0) 4 for OpenAI/Azure and 1 elsewhere —
    llama.cpp's server, Ollama and LM Studio serve one request at a time by default, so more in
    flight only queue up and time out behind each other."""
    if concurrency > 0:
        return concurrency
    return OPENAI_CONCURRENCY if is_openai(base_url) else 1


OPENAI_CONTEXT = 12000     # tokens a request may fill on OpenAI (its models take 128k; 12k keeps requests cheap)
LOCAL_CONTEXT = 4096       # llama.cpp's llama-server and Ollama start with 4096 unless told otherwise


def context_tokens(max_context_tokens: int, base_url: str) -> int:
    """The context one request (prompt + reply) may fill: the configured size, or (0) 12000 for
    OpenAI/Azure and 4096 elsewhere — a local server refuses a longer prompt with HTTP 400."""
    if max_context_tokens > 0:
        return max_context_tokens
    return OPENAI_CONTEXT if is_openai(base_url) else LOCAL_CONTEXT


def reply_budget(llm, step: str) -> int:
    """max_tokens for a request of `step`: `[llm] max_tokens` when set, else the step's own budget."""
    if llm.max_tokens > 0:
        return int(llm.max_tokens)
    return int(llm.max_tokens_by_step.get(step) or max(llm.max_tokens_by_step.values()))


class RequestTimer:
    """The timeout of each request: `[llm] timeout` when set, else sized to the server's speed.

    A fixed 60 s is too short for a CPU server writing a long reply and far too long for a
    dead one. With `timeout = 0` a request to OpenAI gets 120 s; a request to any other server
    gets 600 s until one reply has been timed, then three times what its reply budget takes at
    the tokens/s measured so far (replies' output tokens over their wall time, which includes
    reading the prompt, so the rate is on the slow side) plus 30 s, within 60–1800 s.
    """

    def __init__(self, timeout: float, base_url: str):
        self.fixed = float(timeout)
        self.openai = is_openai(base_url)
        self.tokens = 0
        self.seconds_spent = 0.0

    def record(self, output_tokens: int, seconds: float) -> None:
        if output_tokens > 0 and seconds > 0:
            self.tokens += output_tokens
            self.seconds_spent += seconds

    def tokens_per_second(self) -> float | None:
        return self.tokens / self.seconds_spent if self.tokens and self.seconds_spent else None

    def seconds(self, reply_tokens: int = 0) -> float:
        if self.fixed > 0:
            return self.fixed
        if self.openai:
            return OPENAI_TIMEOUT
        rate = self.tokens_per_second()
        if rate is None or reply_tokens <= 0:
            return FIRST_LOCAL_TIMEOUT
        lo, hi = TIMEOUT_RANGE
        return min(hi, max(lo, 3 * reply_tokens / rate + 30))


def rejects_json_mode(reason: str | None) -> bool:
    """An HTTP 400 that names response_format (JSON mode) — and only that one turns JSON mode
    off: a 400 for an overlong prompt is that request's failure, not the server's limits."""
    low = (reason or "").lower()
    return low.startswith("http 400") and any(w in low for w in ("response_format", "response format", "json"))


def retry_after_seconds(headers) -> float | None:
    """Seconds the server asks us to wait: retry-after-ms, Retry-After seconds or HTTP date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
