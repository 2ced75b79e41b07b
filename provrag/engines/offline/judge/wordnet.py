"""Opposite words from Princeton WordNet 3.0, as a table shipped inside the package
(data/wordnet-antonyms.tsv: its adjective, verb and adverb antonym pairs, with WordNet's licence).

Shipped rather than read from an installed WordNet so that every installation judges a claim the
same way (the table does not depend on Debian's wordnet-base being there) and nothing is parsed
at start beyond 5,000 lines. train/antonyms.py rebuilds it from wordnet-base, and a test checks
that it does so byte for byte.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "data" / "wordnet-antonyms.tsv"


def antonym_pairs(table: Path = TABLE) -> set[tuple[str, str]]:
    """Every (word, its antonym) pair of the table (comment lines, its licence, skipped)."""
    pairs: set[tuple[str, str]] = set()
    for line in table.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            a, b = line.split("\t")
            pairs.add((a, b))
    return pairs


@lru_cache(maxsize=1)
def opposite_stems() -> dict[str, frozenset[str]]:
    """Each stem's opposite stems (the judge's stem, both ways round)."""
    from provrag.engines.offline.judge.lexicon import stem

    out: dict[str, set[str]] = {}
    for a, b in antonym_pairs():
        sa, sb = stem(a), stem(b)
        if sa != sb:
            out.setdefault(sa, set()).add(sb)
            out.setdefault(sb, set()).add(sa)
    return {k: frozenset(v) for k, v in out.items()}
