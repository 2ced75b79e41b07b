"""Batch workflows: each a plain ordered list of stages over tables (index, ask, verify)."""
