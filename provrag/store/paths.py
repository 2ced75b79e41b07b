r"""File names as the index stores them: any byte sequence, kept losslessly as valid text.

A POSIX file name is bytes, not text: Python hands a name that is not valid UTF-8 over with
lone surrogates (PEP 383), which Arrow, JSON and a terminal refuse or garble. The `path`
column of documents.parquet (and every JSON or screen that shows it) therefore holds an
escaped form, reversible to the exact bytes:

- a backslash is written `\\`;
- a byte that is not part of valid UTF-8, and every byte of a control character (newline,
  tab, escape…: U+0000–U+001F, U+007F–U+009F), is written `\xHH` (two lowercase hex digits);
- everything else is the name's own UTF-8 text, unchanged.

So the usual name reads as itself ("manuals/fhs-3.0.pdf"), b"caf\xe9.pdf" (Latin-1) is
stored as `caf\xe9.pdf`, and because every backslash is escaped the mapping is one-to-one:
`path_bytes()` gives the original bytes back (`os.fsdecode` of them opens the file).
"""
from __future__ import annotations

import os
import re

_ESCAPE = re.compile(r"\\(\\|x[0-9a-fA-F]{2})")


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F


def escape_path(name: str | bytes | os.PathLike) -> str:
    """Any file name or relative path (bytes, or str as os.fsdecode makes it) → its stored form."""
    raw = os.fsencode(name)
    out, pos = [], 0
    while pos < len(raw):
        try:
            text = raw[pos:].decode("utf-8")
            bad = len(raw)
        except UnicodeDecodeError as e:
            text, bad = raw[pos:pos + e.start].decode("utf-8"), pos + e.start
        for ch in text:
            if ch == "\\":
                out.append("\\\\")
            elif _is_control(ch):
                out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8"))
            else:
                out.append(ch)
        if bad < len(raw):
            out.append(f"\\x{raw[bad]:02x}")
        pos = bad + 1
    return "".join(out)


def path_bytes(stored: str) -> bytes:
    """The stored form → the file name's original bytes (the inverse of `escape_path`)."""
    out, pos = bytearray(), 0
    for m in _ESCAPE.finditer(stored):
        out += stored[pos:m.start()].encode("utf-8")
        esc = m.group(1)
        out += b"\\" if esc == "\\" else bytes([int(esc[1:], 16)])
        pos = m.end()
    out += stored[pos:].encode("utf-8")
    return bytes(out)


def original_path(stored: str) -> str:
    """The stored form as the str Python's os functions take (`DOCS / original_path(p)` opens it)."""
    return os.fsdecode(path_bytes(stored))


def printable(text: str) -> str:
    r"""Any str made encodable as UTF-8: a lone surrogate (a raw byte of a file name, PEP 383)
    becomes `\xHH`, any other one `\uXXXX`. For messages and titles that may quote a name;
    unlike `escape_path` it is not meant to be reversed."""
    if text.isascii():
        return text
    return "".join(ch if not 0xD800 <= ord(ch) <= 0xDFFF else
                   (f"\\x{ord(ch) - 0xDC00:02x}" if 0xDC80 <= ord(ch) <= 0xDCFF else f"\\u{ord(ch):04x}")
                   for ch in text)
