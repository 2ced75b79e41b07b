""""How do I" answer pairs from Vim's FAQ (train/prepare.py's "howto" source).

Why: on the TeX Live dev set, 34 of 42 "how do I" questions have a candidate sentence on the gold
page that holds the answer, yet the reader and every other reading pick it for ~60 % of them
(bench/results/named-terms-2026-11-29.md). A manual answers "how do I" by introducing a command and
then printing it ("To enable it, load the package with the option:" / `\\usepackage[...]{...}`); the
reader learned answers from encyclopedia, news and reviews, and the docs pairs (train/docs_pairs.py)
are definitions ("What does X do?"). Vim's FAQ (`vim-doc`, /usr/share/doc/vim/FAQ.gz) holds ~375
numbered questions, ~240 of them "How do I/How can I", each answered in that register:

    5.3. How do I change the current directory to the directory of the current file?

    You can use the following command to change the current directory to the
    directory of the current file:

        :cd %:p:h

Labels, from the entry's own structure:
- positive: the first sentence of the answer that introduces a command (it ends with a colon before
  a code block, names a quoted command or option, or tells the reader to use/press/type/set/run
  something), read with the first line of that code block as a PDF's text flow gives it;
- negatives: the answer's sentences before it (a preamble: "There are several ways to ..."), its
  closing pointer ("For more information, read :help ..."), and the positives of two other
  questions of the same section, drawn by shared words (on topic, another task).
Each sentence is read under its section's title (never the question, which a manual would not
print above its answer) and the answer's text before it. A section is one group, so a section's
questions fall in one of train / calib / test.
"""
from __future__ import annotations

import gzip
import hashlib
import random
import re
from collections import Counter
from pathlib import Path

from docs_pairs import fetch_deb, sentences  # noqa: E402  (train/ is the script's folder)

FAQ = "usr/share/doc/vim/FAQ.gz"
ENTRY = re.compile(r"^(\d+)\.(\d+)\. (\S.*)$")
SECTION = re.compile(r"^SECTION (\d+) - (.+)$")
COMMANDISH = re.compile(r"""(:\s*$)|("[:<]?[^"\s]+"|'[a-z]+'|<[A-Za-z-]+>)|\b(use|press|type|set|run|add|map|put)\b""", re.I)
POINTER = "for more information"
HOWTO = re.compile(r"\bhow (do|can|to|should)\b", re.I)  # a "Can I ...?" answers yes or no first


def faq_entries(text: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(section title, question, [(kind, text)] blocks) per answered entry; kind is "prose" or "code".
    The table of contents indents its entries, the bodies start them at column 0."""
    out, section, question, blocks, block, in_question = [], "", "", [], [], False
    lines = text.splitlines()

    def close_block() -> None:
        if block:
            kind = "code" if all(ln.startswith("    ") for ln in block) else "prose"
            blocks.append((kind, "\n".join(block)))
            block.clear()

    def close_entry() -> None:
        close_block()
        if question.endswith("?") and HOWTO.search(question) and any(k == "prose" for k, _ in blocks):
            out.append((section, question, list(blocks)))
        blocks.clear()

    for ln in lines:
        if (m := SECTION.match(ln)):
            close_entry()
            section, question = m.group(2).strip().capitalize(), ""
            continue
        if (m := ENTRY.match(ln)) and section:
            close_entry()
            question, in_question = m.group(3).strip(), True
            continue
        if in_question:
            if ln.strip():
                question += " " + ln.strip()
                continue
            in_question = False
            continue
        if not question:
            continue
        if ln.strip():
            block.append(ln.rstrip())
        else:
            close_block()
    close_entry()
    return out


def answer_sentences(blocks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(sentence, the answer's text before it) in reading order; a sentence ending in a colon before a
    code block carries that block's first line, as a PDF's text flow joins them."""
    out, before = [], ""
    for i, (kind, text) in enumerate(blocks):
        if kind == "code":
            before += " " + " ".join(text.split())
            continue
        prose = " ".join(text.split())
        sents = sentences(prose)
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        for j, sent in enumerate(sents):
            shown = sent
            if j == len(sents) - 1 and sent.rstrip().endswith(":") and nxt and nxt[0] == "code":
                shown = f"{sent} {nxt[1].splitlines()[0].strip()}"
            out.append((shown, before.strip()))
            before += " " + sent
    return out


def howto_pairs(rng: random.Random, counts: Counter, cache: Path, downloads: list[Path], split_of, pick_hard) -> list[dict]:
    """Answer rows (the schema of prepare.squad_shifts'): one positive and up to five negatives per question."""
    root = fetch_deb("vim-doc", cache, downloads)
    text = gzip.decompress((root / FAQ).read_bytes()).decode("utf-8", "replace")
    items = []
    for section, question, blocks in faq_entries(text):
        sents = answer_sentences(blocks)
        body = [(s, b) for s, b in sents if not s.lower().startswith(POINTER)]
        pointers = [(s, b) for s, b in sents if s.lower().startswith(POINTER)]
        if not body:
            continue
        at = next((i for i, (s, _) in enumerate(body) if COMMANDISH.search(s)), 0)
        items.append((section, question, body[at], body[:at], pointers))
    by_section: dict[str, list[str]] = {}
    for section, _, (positive, _), _, _ in items:
        by_section.setdefault(section, []).append(positive)
    rows = []
    for n, (section, question, (positive, before), preamble, pointers) in enumerate(items):
        group = f"howto/vim-faq/{section}"
        split = split_of(group)
        counts[f"howto vim-faq questions {split}"] += 1
        qid = f"howto-{n}-" + hashlib.sha256(question.encode()).hexdigest()[:12]
        base = {"task": "answer", "group": group, "source": "howto", "split": split, "qid": qid, "a": question}
        heading = f"{section} "
        rows.append({**base, "b": positive, "c": heading + before, "label": 1, "kind": "the command's introduction"})
        for text, their_before in preamble[-2:]:
            rows.append({**base, "b": text, "c": heading + their_before, "label": 0, "kind": "the answer's preamble"})
        if pointers and rng.random() < 0.5:
            text, their_before = pointers[0]
            rows.append({**base, "b": text, "c": heading + their_before, "label": 0, "kind": "a pointer elsewhere"})
        others = [p for p in by_section[section] if p != positive]
        for text in pick_hard(rng, question, others, 2):
            rows.append({**base, "b": text, "c": heading, "label": 0, "kind": "another question's answer"})
    return rows
