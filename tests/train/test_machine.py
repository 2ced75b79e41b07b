"""train.py's bfloat16 default follows the CPU (train/machine.py): autocast where the CPU computes
bf16 natively, fp32 where torch would emulate it (over five times slower on this AVX2 machine)."""
from __future__ import annotations

import pytest

from machine import native_bf16


@pytest.mark.parametrize("flags, native", [
    ("fpu vme sse2 avx avx2 fma", False),                                   # an AVX2-only EPYC
    ("fpu avx2 avx512f avx512bw avx512_vnni", False),                       # AVX-512 without its bf16 part
    ("fpu avx2 avx512f avx512_bf16 avx512_vnni", True),
    ("fpu avx2 amx_bf16 amx_tile amx_int8", True),
])
def test_bf16_is_native_only_with_its_instructions(tmp_path, flags, native):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    assert native_bf16(cpuinfo) is native


def test_no_cpuinfo_means_fp32(tmp_path):
    assert native_bf16(tmp_path / "missing") is False
