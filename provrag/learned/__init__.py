"""Learned models shipped with provrag (no torch at run time): `reader` is a small cross-encoder
with three heads — does a sentence state the answer, does a passage answer, does evidence
support a claim. Nothing loads at import: `reader.get()` loads the ONNX session on first use."""
