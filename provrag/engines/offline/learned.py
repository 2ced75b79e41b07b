"""The learned reader as the offline engine's steps use it: one cross-encoder (provrag/learned,
MiniLM fine-tuned on SQuADShifts, CoQA, VitaminC and HaluEval, run with onnxruntime) that reads
a question with a sentence (does it state the answer?), a question with a passage (is it
relevant?) and a claim with a piece of evidence (supported, contradicted or unsupported).

Why here and not in the pipelines: every model step goes through the Engine interface, so
the offline engine alone decides whether to read with the model or with its hand-set
features; the pipelines call the engine the same way either way.

`reader(cfg, purpose)` is the one door: it returns the process's reader (loaded once, cached by
provrag/learned) when the settings ask for it and its weights load, else None with the reason
kept in `unavailable()` — the callers then use the hand-set features and say so in the trace.
"""
from __future__ import annotations

from provrag.config import Config

_FAILED: dict[str, str] = {}   # why the reader could not be had (once per process)


def wanted(cfg: Config, purpose: str) -> bool:
    """Whether the settings ask for the learned reader for `purpose`: "answer", "judge" (the
    learned judge), or "claim head" (the fitted judge's features read by the claim head)."""
    if purpose == "judge":
        return str(cfg.verify.judge).lower() == "learned"
    if purpose == "claim head":
        from provrag.engines.offline.judge.head import reads_head

        return reads_head(cfg.verify)
    return str(cfg.search.reader).lower() == "learned"


def reader(cfg: Config, purpose: str = "answer"):
    """The learned reader, or None (not asked for, or its weights are missing or broken)."""
    if not wanted(cfg, purpose):
        return None
    if "error" in _FAILED:
        return None
    try:
        from provrag.learned import reader as learned

        if not learned.available():
            _FAILED["error"] = "no reader weights installed (provrag/learned/weights or $PROVRAG_READER_DIR)"
            return None
        return learned.get()
    except Exception as e:  # a missing runtime or damaged weights: the hand-set features stand, and the trace says why
        _FAILED["error"] = f"learned reader unavailable: {str(e).splitlines()[0][:160] if str(e) else type(e).__name__}"
        return None


def unavailable() -> str | None:
    """Why the reader could not be had in this process (None: it could, or was never asked for)."""
    return _FAILED.get("error")


def describe(r) -> dict:
    """What the trace records of the reader that read: its name, version and weights' digest."""
    try:
        info = dict(r.info or {})
    except Exception:
        info = {}
    keep = ("name", "version", "sha256", "created", "base")
    return {k: info[k] for k in keep if k in info} or {"name": "learned reader"}
