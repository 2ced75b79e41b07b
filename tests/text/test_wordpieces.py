"""One MiniLM tokenizer per process (text/wordpieces.py): MiniLM's passes and the learned reader
share it, and MiniLM's own cut at 256 word pieces gives what the tokenizer's truncation gave."""
from __future__ import annotations

from pathlib import Path

from tests import components

ROOT = Path(__file__).resolve().parents[2]


def test_minilm_and_the_reader_share_one_tokenizer_whose_settings_stay_off():
    from provrag.embeddings.minilm import MiniLMEmbedder
    from provrag.learned import reader

    components.minilm_weights()
    if not reader.available():
        components.missing("the learned reader's weights", "provrag/learned/weights")
    emb = MiniLMEmbedder()
    pairs = reader.get().encoder
    assert emb._tok is pairs.tokenizer
    assert emb._tok.truncation is None and emb._tok.padding is None
    # the reader cuts a pair by its own rules: a long context is kept whole in its word pieces
    long = " ".join(["the commissioning team checks every valve before start-up"] * 60)
    assert len(pairs.pieces([long])[0]) > 256


def test_minilm_cuts_a_text_as_the_tokenizers_own_truncation_did():
    from tokenizers import Tokenizer

    from provrag.embeddings.minilm import MAX_SEQ_LENGTH, MiniLMEmbedder

    folder = components.minilm_weights()
    theirs = Tokenizer.from_file(str(folder / "tokenizer.json"))   # how minilm.py set it up before
    theirs.enable_truncation(max_length=MAX_SEQ_LENGTH)
    theirs.no_padding()
    files = [f.read_text(encoding="utf-8") for f in sorted((ROOT / "data").glob("*.md")) + sorted((ROOT / "data").glob("*.txt"))]
    texts = [p for text in files for p in text.split("\n\n")] + files   # paragraphs, and whole files
    texts += ["", "é", "[CLS] a literal special token [SEP]"]
    want = [(e.ids, e.tokens) for e in theirs.encode_batch(texts)]
    got = MiniLMEmbedder().pieces(texts)
    assert sum(len(ids) == MAX_SEQ_LENGTH for ids, _ in want) >= 2       # long texts are among them
    assert got == want
