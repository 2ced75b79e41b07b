"""The safetensors format read by hand, for MiniLM's weights (embeddings/minilm.py): each tensor
read into memory when asked, or a table's rows read when asked (TableRows).

By hand because safetensors' numpy API either returns copies of every tensor or maps the whole
file (safe_open), and the format is simple: an 8-byte little-endian header length, a JSON header
(name → dtype, shape, byte offsets), then the data.
"""
from __future__ import annotations

import json
import mmap
import os
import threading
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


class TableRows:
    """`t[ids]`: rows of one 2-D tensor of a safetensors file (MiniLM's vocabulary table: 30,522
    rows of 384 floats, 47 MB), as `table[ids]` would give them. A row is read from the file
    (os.pread) the first time a pass asks for it and kept in a table-sized array whose untouched
    pages take no memory; when a pass asks for more than WHOLE_TABLE_AT rows not read yet (an index
    embeds every unit: it meets most of them), the whole table is read at once.

    Why not mapped: a question's passes use a few hundred rows, but each row a mapped table gave
    faulted in its page and the kernel mapped the cached pages around it as well (fault-around,
    64 kB a fault), so ~13-15 MB of the table stood in the process's memory after one question's
    paragraphs (issue 30: the cold ask's peak RSS); read, a row costs its own page at most. The file
    is opened once, when the model loads, so every row comes from the file whose digest minilm.py
    checked (a file replaced later is another inode)."""

    WHOLE_TABLE_AT = 4096

    def __init__(self, path: Path, name: str):
        data_start, header = _safetensors_header(path)
        meta = header[name]
        start, end = meta["data_offsets"]
        self.shape = tuple(meta["shape"])
        self.dtype = np.dtype(_SAFETENSORS_DTYPES[meta["dtype"]]).newbyteorder("<")
        self.offset = data_start + start
        self.row_bytes = self.dtype.itemsize * int(np.prod(self.shape[1:]))
        if end - start != self.row_bytes * self.shape[0]:
            raise ValueError(f"{name}: its byte range is not its shape")
        self.fd = os.open(path, os.O_RDONLY)
        # an anonymous mapping of its own: a page is taken when a row in it is first written (numpy's
        # own allocation of this size asks the kernel for 2 MB pages, which took most of the table
        # at a question's first rows)
        self._pages = mmap.mmap(-1, self.row_bytes * self.shape[0])
        self.kept = np.frombuffer(self._pages, self.dtype.newbyteorder("=")).reshape(self.shape)
        self.have = np.zeros(self.shape[0], bool)
        self.lock = threading.Lock()

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.shape[0]):
            raise IndexError(f"row {int(ids.min() if ids.min() < 0 else ids.max())} of a table of {self.shape[0]}")
        missing = np.unique(ids[~self.have[ids]])
        if len(missing):
            with self.lock:   # passes run side by side: each row read once
                missing = missing[~self.have[missing]]
                if len(missing) > self.WHOLE_TABLE_AT:
                    self.kept[:] = self._rows(0, self.shape[0])
                    self.have[:] = True
                else:
                    for i in missing.tolist():
                        self.kept[i] = self._rows(i, 1)[0]
                    self.have[missing] = True
        return self.kept[ids]

    def _rows(self, first: int, count: int) -> np.ndarray:
        data = os.pread(self.fd, self.row_bytes * count, self.offset + self.row_bytes * first)
        if len(data) != self.row_bytes * count:
            raise OSError(f"the weights file ended early (row {first})")
        flat = np.frombuffer(data, dtype=self.dtype).astype(self.dtype.newbyteorder("="), copy=False)
        return flat.reshape((count,) + self.shape[1:])

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass
