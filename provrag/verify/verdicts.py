"""Verdicts: the judge every piece of evidence goes through, and the rules that turn single
verdicts into a claim's verdict and an answer's metrics.

- `Judge` calls the engine's judge (`Engine.judge`, offline or a model) and caches its word per
  (claim, unit) for one run: a unit reached by two citations, by a citation and by retrieval, or
  again as part of a seam is judged once.
- `normalise_verdict` makes any engine's verdict one shape: a known label, a rounded score, a
  short reason, and a span (a model names none: the best-matching one is found), because the
  span is the quote a reader is shown.
- `verdict_of` is RefChecker's rule across units: *supported* if any unit supports the claim,
  else *contradicted* if any contradicts it, else *unsupported*; `claim_verdict` applies it to the
  claim's cited units first, and to every unit only when those say neither.
- `summarise`: verdict counts, and ALCE's citation recall (share of claims whose own citations
  support them; an uncited claim counts, with no support) and citation precision (share of
  citations — one cited id of one claim — that help). With single-unit verdicts a citation helps
  exactly when one of the units it reaches supports the claim: ALCE's "the others do not entail
  it without this one" case reduces to that, with the judge in place of ALCE's NLI.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from provrag.results import ClaimCheck, Evidence, Verdict

if TYPE_CHECKING:
    from provrag.verify.claims import Claim

LABEL_ORDER = {"supported": 0, "contradicted": 1, "unsupported": 2}


class Judge:
    """The engine's judge, with verdicts cached per (claim, unit) within one run."""

    def __init__(self, engine):
        self.engine = engine
        self.method = "offline" if engine.name == "offline" else f"{engine.name}:{engine.model}".rstrip(":")
        self._cache: dict[tuple, Verdict] = {}

    def __call__(self, claim: Claim, texts: dict[str, str]) -> dict[str, Verdict]:
        """The verdict on the claim of each text, by the key it is given under (a unit id, or
        a seam's "a+b"): the engine sees only the texts it has not judged for this claim yet."""
        todo = [key for key in texts if (claim.text, claim.focus, key) not in self._cache]
        if todo:
            verdicts = self.engine.judge(claim.text, [texts[key] for key in todo], focus=claim.focus)
            for key, v in zip(todo, verdicts):
                self._cache[(claim.text, claim.focus, key)] = normalise_verdict(v, claim.text, texts[key])
        return {key: self._cache[(claim.text, claim.focus, key)] for key in texts}


def normalise_verdict(v: Verdict, claim: str, text: str) -> Verdict:
    """Any engine's verdict → a known label, a score rounded to 4 places, a reason of at most
    300 characters and a span (a model gives no span: the best-matching one is found)."""
    label = v.label if v.label in LABEL_ORDER else "unsupported"
    try:
        score = float(v.score)
    except (TypeError, ValueError):
        score = 0.0
    span = v.span
    if not (isinstance(span, (list, tuple)) and len(span) == 2):
        from provrag.text.similarity import best_span

        _, a, b, _ = best_span(claim, text)
        span = (a, b)
    return Verdict(label, round(score, 4), str(v.reason or "")[:300], (int(span[0]), int(span[1])))


def rank_evidence(evidence: list[Evidence]) -> list[Evidence]:
    """What decided first: supporting units, then contradicting, then the rest; by score within."""
    return sorted(evidence, key=lambda e: (LABEL_ORDER[e.label], -e.score, str(e.text_unit_id)))


def verdict_of(labels: list[str]) -> str:
    """RefChecker's rule across units."""
    if "supported" in labels:
        return "supported"
    if "contradicted" in labels:
        return "contradicted"
    return "unsupported"


def claim_verdict(cited: list[str], every: list[str]) -> str:
    """The claim's verdict: what its own citations say first — a claim whose cited text states
    it or states the opposite is judged by that text, not by a look-alike elsewhere (a /tmp
    sentence for a claim that cites the /var/tmp section) — and RefChecker's rule over every
    unit when the cited text says neither (a wrong citation, or none)."""
    first = verdict_of(cited)
    return first if first != "unsupported" else verdict_of(every)


def summarise(claims: list[ClaimCheck]) -> dict:
    """The answer's metrics: verdict counts, supported share, ALCE citation recall and precision."""
    n = len(claims)
    count = {lab: sum(c.verdict == lab for c in claims) for lab in LABEL_ORDER}
    cits = [x for c in claims for x in c.citations]
    return {
        "claims": n,
        **count,
        "supported_ratio": round(count["supported"] / n, 4) if n else None,
        # ALCE: every claim counts in recall (an uncited claim has no citation that supports it)
        "citation_recall": round(sum(c.cited_supports for c in claims) / n, 4) if n else None,
        "citation_precision": round(sum(x["supports"] for x in cits) / len(cits), 4) if cits else None,
        "cited_claims": sum(bool(c.citations) for c in claims),
        "citations": len(cits),
    }
