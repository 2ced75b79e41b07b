"""provrag: a provenance-first GraphRAG.

Indexes documents into Microsoft-GraphRAG-compatible parquet tables whose text units know
their document and page, resolves `[Data: …]` citations down to pages, and checks claims.
"""
import os

# Nothing provrag runs may wait on a model hub: the machine it runs on may have no network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__version__ = "0.1.0"
