"""The models a cold `provrag ask` or `verify` will read, loaded while the index opens (issue 30).

A cold CLI call loads the learned reader (its weights checked against their digest, an
onnxruntime session made: ~0.1-0.17 s) and MiniLM (the weights read, one session per pass kind:
~0.2 s) on the main thread, one after the other, the first time a reading needs them: after the
index was opened and retrieval ran, ~0.3-0.5 s in which the second core had nothing to do.
`warming` starts those loads on a thread of their own when the ask or verify starts, so the two
overlap; the reading then finds them loaded. A server (serve/service.py) starts them as it opens
the index, so its first question does not wait for them either. Each loader holds its own lock
(learned/reader.get, embeddings/minilm._load_model and int8_encoder), so a reading that comes
first waits for the load in progress and nothing is loaded twice. Nothing computed changes: the
same objects, made earlier.

Only what the settings will read is loaded (a "features" reader, `rerank = "none"`, or a judge
without the claim head load nothing), and only with two cores or more: on one core a thread
would only take turns with the main one. A load that fails is left for the reading to meet,
which reports it as before (the trace says why the hand-set features stood in). The thread is
joined when the command's work ends, so no load is still running when the process exits.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager

from provrag.config import Config


def loads(cfg: Config, task: str) -> list[str]:
    """What `task` ("ask", "verify", or "serve": both) will read under these settings, in the order
    it needs them: "reader" (the learned reader), "minilm" or "minilm int8" (the answer's meaning pass)."""
    from provrag.engines.offline.learned import wanted

    if task == "serve":
        return list(dict.fromkeys(loads(cfg, "ask") + loads(cfg, "verify")))
    if task == "ask":
        out = ["reader"] if wanted(cfg, "answer") else []
        if str(cfg.search.rerank).lower() == "minilm":
            out.append("minilm int8" if cfg.search.meaning_int8 else "minilm")
        return out
    if task == "verify":
        return ["reader"] if wanted(cfg, "judge") or wanted(cfg, "claim head") else []
    return []


def _load(what: list[str]) -> None:
    from provrag.serve.memory import trim

    for name in what:
        try:
            if name == "reader":
                from provrag.learned import reader

                if reader.available():
                    reader.get()
            else:
                from provrag.embeddings.minilm import MiniLMEmbedder

                MiniLMEmbedder(int8=name == "minilm int8").ready()
        except Exception:  # noqa: BLE001 - the reading meets the same failure and reports it
            continue
        # a load's temporaries (MiniLM's float layers, read one at a time and quantised: ~18 MB;
        # the reader's graph: ~8 MB) were freed into the heap and stay resident until trimmed, under
        # the questions' passes that come next: the peak of a cold ask (tests/engines/offline/test_warm.py)
        trim()


@contextmanager
def warming(cfg: Config, task: str):
    """Load `task`'s models on a thread of their own for the duration of the block."""
    what = loads(cfg, task)
    if not what or (os.cpu_count() or 1) < 2:
        yield
        return
    loader = threading.Thread(target=_load, args=(what,), name="provrag-warm-up", daemon=True)
    loader.start()
    try:
        yield
    finally:
        loader.join()
