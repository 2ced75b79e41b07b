"""What the reader's claim head (provrag/learned) reads of an evidence text, for both judges.

The learned judge (learned.py) decides on the head's probabilities alone. The fitted judge
(decide.py) adds the head's reading of each text to its hand-made features, as two more features
of its linear scores (`HEAD_FEATURES`, weighted in config.toml [verify.support_weights] and
[verify.contradict_weights], fitted with the others by bench/fit_judge.py). Why both kinds of
signal: the features see what a word match can (a number the span does not state, a negation on
one side, a name in another's place) and the head reads what they cannot (a paraphrase, a fact
stated in other words). Cross-validated on ../shared/eval/dev (bench/results/judge-head-*.md),
the two together beat either alone; a linear model over them did as well as gradient boosting.

Why spans and not the whole text: a unit is ~300 tokens, the model reads ~256 word pieces with
the claim, and a swapped word that stands elsewhere in a unit must not make the unit support
the claim. The spans read are those that share most of the claim's words (cheap to find).
"""
from __future__ import annotations

import math

from provrag.engines.offline.judge.analysis import heading, spans
from provrag.text.similarity import lexical_score

# the head's logits of the text's best span: P(supported), P(contradicted)
HEAD_FEATURES = ("head_supported", "head_contradicted")
# what the features hold when the head did not read (its weights 0, or the reader missing): even odds
UNREAD = {name: 0.0 for name in HEAD_FEATURES}
_CLIP = 1e-4   # a probability of exactly 0 or 1 has no logit; ±9.2 is already certainty here


def candidate_spans(claim: str, text: str, max_window: int, keep: int) -> list[tuple[int, int]]:
    """The `keep` spans of `text` sharing most of the claim's words (earliest of equals)."""
    cands = spans(text, max_window)
    scored = sorted(cands, key=lambda sp: (-lexical_score(claim, text[sp[0]:sp[1]]), sp[0], sp[1] - sp[0]))
    return scored[:keep]


def span_text(text: str, span: tuple[int, int]) -> str:
    """The span as the model reads it: one line, after the page's heading when it has one (a
    page's subject is often only in its title)."""
    head, _ = heading(text)
    body = " ".join(text[span[0]:span[1]].split())
    return f"{head}: {body}" if head and head not in body else body


def logit(p: float) -> float:
    p = min(max(float(p), _CLIP), 1.0 - _CLIP)
    return math.log(p / (1.0 - p))


def said(reading: dict) -> str:
    """The head's reading as a reason shows it: its probabilities, so a reader of the verdict sees
    what the model said beside what the words matched."""
    p = {n: 1.0 / (1.0 + math.exp(-reading[n])) for n in HEAD_FEATURES}
    return f"claim head: supported {p['head_supported']:.2f}, contradicted {p['head_contradicted']:.2f}"


def reads_head(vcfg) -> bool:
    """Whether the fitted judge's weights give the head's reading any weight (else it is not run)."""
    return any(float(w.get(n, 0.0) or 0.0) for w in (vcfg.support_weights, vcfg.contradict_weights)
               for n in HEAD_FEATURES)


def head_readings(claim: str, texts: list[str], max_window: int, reader) -> list[dict]:
    """Per text, the head's reading of its span that shares most of the claim's words, as the
    logits `HEAD_FEATURES` (UNREAD for an empty text). One call to the reader for all texts."""
    chosen = [candidate_spans(claim, t, max_window, 1) if claim.strip() and t.strip() else [] for t in texts]
    pairs = [span_text(t, sp[0]) for t, sp in zip(texts, chosen) if sp]
    probs = iter(reader.claim_probs(claim, pairs) if pairs else [])
    out = []
    for sp in chosen:
        if not sp:
            out.append(dict(UNREAD))
            continue
        p = next(probs)
        out.append({"head_supported": logit(p[0]), "head_contradicted": logit(p[1])})
    return out
