"""Word pieces for the reader: one (first, second[, context]) pair → one row of token ids.

Shared by the runtime and by train/train.py, so that the model is trained on exactly the
inputs it is later given. The layout is BERT's pair layout with an optional third part:

    [CLS] first [SEP] second [SEP] context [SEP]      token types 0 … 0 1 … 1 1 … 1

`first` is the question or the claim and is kept whole up to half the length; `second` (the
sentence, passage or evidence) is cut at its end to fit; `context` (the paragraph text before
the sentence, where "it" and "the company" were named) fills what room is left and keeps its
end, the words nearest the sentence. Truncating by hand rather than with the tokenizer's own
truncation because the tokenizer can neither keep a context's tail nor give the question
priority over a third part.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from provrag.text.options import plain_dashes

MIN_CONTEXT = 8  # fewer word pieces of context than this say nothing: left out


class PairEncoder:
    """The MiniLM tokenizer (tokenizer.json, uncased word pieces) with padding and truncation off."""

    def __init__(self, tokenizer_path: Path | str):
        from provrag.text.wordpieces import tokenizer

        self.tokenizer = tokenizer(tokenizer_path)   # MiniLM's passes share it (text/wordpieces.py)
        self.cls = self.tokenizer.token_to_id("[CLS]")
        self.sep = self.tokenizer.token_to_id("[SEP]")
        self.pad = self.tokenizer.token_to_id("[PAD]")

    def pieces(self, texts: list[str]) -> list[list[int]]:
        """Word-piece ids of each text, no special tokens, a PDF's printed minus signs and hyphens
        read as "-" (text/options.plain_dashes). BERT's pre-tokenizer splits punctuation from a word,
        but U+2212 is a math symbol: groff's "−Klayout" stayed one word, cut into pieces no question
        shares ("−", "##kla", "##you", "##t"), where what a user types is "-", "k". Read as "-", the
        reader's reading of dot(1)'s -K line for "What does the -K option of dot do?" rises from 0.06
        to 0.18; of the next option's line it stays at 0.02 (bench/results/options-blind-2026-12-02.md)."""
        return [e.ids for e in self.tokenizer.encode_batch([plain_dashes(t or "") for t in texts],
                                                           add_special_tokens=False)]

    def rows(self, firsts: list[str], seconds: list[str], max_length: int,
             contexts: list[str] | None = None) -> list[tuple[list[int], list[int]]]:
        """(ids, token types) per pair, at most max_length ids each."""
        a_ids = self.pieces(firsts)
        b_ids = self.pieces(seconds)
        c_ids = self.pieces(contexts) if contexts is not None else [[] for _ in firsts]
        return [self.assemble(a, b, c, max_length) for a, b, c in zip(a_ids, b_ids, c_ids)]

    def assemble(self, a: list[int], b: list[int], c: list[int], max_length: int) -> tuple[list[int], list[int]]:
        a = a[: max(1, max_length // 2 - 2)]
        room = max_length - len(a) - 3
        b = b[: max(room, 1)]
        room -= len(b)
        ids = [self.cls, *a, self.sep, *b, self.sep]
        types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        if c and room - 1 >= MIN_CONTEXT:
            c = c[-(room - 1):]
            ids += [*c, self.sep]
            types += [1] * (len(c) + 1)
        return ids[:max_length], types[:max_length]

    def batch(self, rows: list[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
        """Rows padded to the longest: input_ids, attention_mask, token_type_ids (int64)."""
        width = max(len(ids) for ids, _ in rows)
        ids = np.full((len(rows), width), self.pad, dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, (r, t) in enumerate(rows):
            ids[i, : len(r)] = r
            types[i, : len(t)] = t
            mask[i, : len(r)] = 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def context_before(sentence: str, paragraph: str | None) -> str:
    """The paragraph's text before the sentence (all of it when the sentence is not found in it)."""
    if not paragraph:
        return ""
    i = paragraph.find(sentence) if sentence else -1
    if i < 0:
        i = " ".join(paragraph.split()).find(" ".join(sentence.split())) if sentence else -1
        return " ".join(paragraph.split())[:i] if i >= 0 else paragraph
    return paragraph[:i]
