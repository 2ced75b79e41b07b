"""An answer checked against an index: claims, then evidence and a verdict for each, then metrics.

The answer is cut into claims (provrag/verify/claims.py), each claim is checked on its own
(provrag/verify/evidence.py: cited and retrieved units, one verdict each) with one judge whose
cache spans the whole answer, and the answer's metrics are summed up (provrag/verify/verdicts.py).
"""
from __future__ import annotations

from contextlib import contextmanager

from provrag.config import Config
from provrag.results import VerifyResult
from provrag.verify.claims import split_claims
from provrag.verify.evidence import check_claim
from provrag.verify.verdicts import Judge, summarise


def verify_answer(reader, answer: str, cfg: Config, question: str | None = None, engine=None,
                  progress=None, retrievals: list | None = None) -> VerifyResult:
    """Each claim of `answer` with its verdict and evidence over an open index, and the metrics.
    `question` makes short answers checkable (claims.question_to_claim); `engine` defaults to
    the configured one; `progress()` is called after each claim; `retrievals` collects, per
    claim in order, why retrieval found its units (evidence.check_claim), for the trace."""
    if engine is None:
        from provrag.engines import get_engine

        engine = get_engine(cfg)
    judge = Judge(engine)
    checks = []
    with units_read_once(reader):
        for claim in split_claims(answer, question):
            checks.append(check_claim(reader, claim, judge, cfg, retrievals))
            if progress is not None:
                progress()
    return VerifyResult(method=judge.method, claims=checks, summary=summarise(checks), question=question)


@contextmanager
def units_read_once(reader):
    """Each unit row read from the index once per run: retrieval fetches a claim's units, then the
    check fetches the same units again for their pages and offsets, and the claims of one answer
    meet the same units (each fetch scans text_units.parquet: ~10 ms at 2,000 units, more at a
    million). A reader that keeps rows already (a server's, store/units.KeptUnits, shared by its
    requests) keeps them; any other keeps them for this run only. The rows are the index's, so
    no verdict changes."""
    if getattr(reader, "kept_units", None) is not None:
        yield
        return
    from provrag.store.units import KeptUnits

    reader.kept_units = KeptUnits()
    try:
        yield
    finally:
        reader.kept_units = None
