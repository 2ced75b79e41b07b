"""Which server the `openai` engine talks to and with which key, decided before any request.

config.toml names the environment VARIABLE that holds the key, never the key, so a config
file or a manifest can be shared. A remote server without its key is a configuration error
raised when the engine or embedder is built — before any document is read — while a local
server (Ollama, vLLM on localhost…) needs none.
"""
from __future__ import annotations

import os
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
