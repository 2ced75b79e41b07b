"""Opposite words from Princeton WordNet 3.0 as Debian ships it (package `wordnet-base`:
/usr/share/wordnet/data.{adj,verb,adv}), read where it is installed, never downloaded.

Why by hand and not through nltk: nltk's reader wants its own data folder layout and loads every
synset (seconds); the antonym pointers are one field of the data files, whose lines are found by
their byte offset (the format's own index), so reading them is a scan of ~6 MB and a seek per
pair: ~0.2 s once per process, only when a claim is checked for a turned word (opposites.py).

An antonym pointer ("!") joins one word of a synset to one word of another ("0102": word 1 here,
word 2 there): adjectives (above/below, single/double, compatible/incompatible), verbs
(allow/deny, increase/decrease), adverbs. Nouns are left out: their antonyms are mostly roles
(man/woman, buyer/seller), which the hand list (lexicon.ANTONYMS) keeps where they matter, and
their 15 MB file would triple the time. Words are matched on the judge's stem; multi-word
lemmas ("take_away") are skipped (a claim is compared word by word).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# where Debian's wordnet-base puts the database (`apt-get install wordnet-base`)
WORDNET_DIR = Path("/usr/share/wordnet")
PARTS_OF_SPEECH = ("adj", "verb", "adv")
_POINTER_LINE = re.compile(rb"^\d{8} [^\n]* ! [^\n]*$", re.M)


def _lemma(word: bytes) -> str:
    """A data-file word as plain text: lower case, an adjective's marker ("(a)", "(p)") dropped."""
    return re.sub(r"\(\w+\)$", "", word.decode("utf-8", "replace")).lower()


def _words(line: list[bytes]) -> list[bytes]:
    """The words of a synset line: after offset, lexicographer file, type and a hex word count."""
    return [line[4 + 2 * i] for i in range(int(line[3], 16))]


def antonym_pairs(folder: Path = WORDNET_DIR) -> set[tuple[str, str]]:
    """Every (word, its antonym) pair of the adjective, verb and adverb files in `folder`; empty
    when the database is not there."""
    pairs: set[tuple[str, str]] = set()
    for pos in PARTS_OF_SPEECH:
        path = folder / f"data.{pos}"
        if not path.is_file():
            continue
        data = path.read_bytes()
        for m in _POINTER_LINE.finditer(data):
            line = m.group(0).split(b" | ")[0].split(b" ")
            words = _words(line)
            k = 4 + 2 * len(words)
            for _ in range(int(line[k])):
                symbol, offset, _pos, ends = line[k + 1:k + 5]
                k += 4
                if symbol != b"!":
                    continue
                start = int(offset)
                target = _words(data[start:data.index(b"\n", start)].split(b" "))
                a, b = words[int(ends[:2], 16) - 1], target[int(ends[2:], 16) - 1]
                if b"_" not in a and b"_" not in b:
                    pairs.add((_lemma(a), _lemma(b)))
    return pairs


@lru_cache(maxsize=1)
def opposite_stems() -> dict[str, frozenset[str]]:
    """Each stem's opposite stems (the judge's stem, both ways round), from WordNet where it is
    installed; {} where it is not (the hand list alone is used then)."""
    from provrag.engines.offline.judge.lexicon import stem

    out: dict[str, set[str]] = {}
    for a, b in antonym_pairs():
        sa, sb = stem(a), stem(b)
        if sa != sb:
            out.setdefault(sa, set()).add(sb)
            out.setdefault(sb, set()).add(sa)
    return {k: frozenset(v) for k, v in out.items()}
