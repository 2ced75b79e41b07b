"""What the training machine's CPU can do, read without torch (train.py's defaults depend on it)."""
from __future__ import annotations

from pathlib import Path


def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU computes bfloat16 matmuls natively (AVX512-BF16 or AMX). torch's autocast
    runs on any x86 CPU, but without these it emulates them: on a 2-core AMD EPYC with AVX2 only,
    the first 50 steps of `make train` had not finished after 8 minutes with autocast; without it
    they take ~90 s (16 pairs/s). No /proc/cpuinfo (not Linux): False, the safe choice."""
    try:
        flags = cpuinfo.read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags
