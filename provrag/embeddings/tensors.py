"""The safetensors format read by hand, for MiniLM's weights (embeddings/minilm.py): each tensor
read into memory when asked, or memory-mapped.

By hand because safetensors' numpy API either returns copies of every tensor or maps the whole
file (safe_open), and the format is simple: an 8-byte little-endian header length, a JSON header
(name → dtype, shape, byte offsets), then the data.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

_SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def _safetensors_header(path: Path) -> tuple[int, dict]:
    """Where a safetensors file's data starts, and its header (name → dtype, shape, byte offsets)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return 8 + n, json.loads(f.read(n))


class TensorFile:
    """`w[name]`: one tensor of a safetensors file, read into memory when asked.

    Read, not mapped: safetensors' safe_open maps the whole 90 MB file, and every page a tensor
    read touched counted in the process's RSS until the file was closed (+45 MB at a cold
    ask's peak, issue 30). The same bytes either way (tests/embeddings/test_tensors.py)."""

    def __init__(self, path: Path):
        self.data_start, self.header = _safetensors_header(path)
        self.file = open(path, "rb")

    def __getitem__(self, name: str) -> np.ndarray:
        meta = self.header[name]
        start, end = meta["data_offsets"]
        dtype = np.dtype(_SAFETENSORS_DTYPES[meta["dtype"]]).newbyteorder("<")
        self.file.seek(self.data_start + start)
        flat = np.fromfile(self.file, dtype=dtype, count=(end - start) // dtype.itemsize)
        return flat.astype(dtype.newbyteorder("="), copy=False).reshape(meta["shape"])

    def close(self) -> None:
        self.file.close()


def mapped_tensor(path: Path, name: str) -> np.ndarray:
    """One float tensor of a safetensors file, memory-mapped read-only: pages are read (and count
    in memory) only when rows are used."""
    data_start, header = _safetensors_header(path)
    meta = header[name]
    start, _ = meta["data_offsets"]
    return np.memmap(path, dtype=_SAFETENSORS_DTYPES[meta["dtype"]], mode="r", offset=data_start + start,
                     shape=tuple(meta["shape"]))
