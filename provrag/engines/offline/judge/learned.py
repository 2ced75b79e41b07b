"""The learned judge: the reader's claim head (provrag/learned) reads a claim with the best spans
of one evidence text and says supported, contradicted or unsupported, each a probability.

Why spans and not the whole text: a unit is ~300 tokens and the model reads ~256 word pieces
with the claim, and a swapped word that stands elsewhere in a unit ("\\cline" three sentences
away from "\\cmidrule … \\hline") must not make the unit support the claim. So every window of
1..`max_window` consecutive sentences is a candidate span, the `judge_spans` that share most of
the claim's words (text/similarity.lexical_score, cheap) are read by the model, all evidence
texts of one call in one batch, and each text's verdict is its best span's:

- *supported* when the best P(supported) of its spans is at least `supported_min_prob`;
- else *contradicted* when a span's P(contradicted) is at least `contradicted_min_prob` — the
  text states something else — or when a veto keeps the span the model reads as supporting from
  supporting and the fitted judge (decide.py) finds the text says the claim otherwise (a swapped
  name or number, a turned word, a negation): the model reads those as supporting or "not
  supported", seldom as "contradicted" (taken wherever the model does not support, the fitted
  judge's contradictions called 4 more not-stated claims of eval/manuals contradicted);
- else *unsupported*: the text does not state the claim ("not stated"), which says nothing
  about whether the claim is false.
Across the texts, a text that states the claim turned or negated outweighs a supporting one that
never states the words in question (decide.outweigh), as in the fitted judge.
The score is P(supported) of the chosen span, the model's calibrated probability.
"""
from __future__ import annotations

from provrag.config import VerifySettings
from provrag.engines.offline.judge.decide import outweigh, verdicts
from provrag.engines.offline.judge.head import candidate_spans, span_text


def veto(claim: str, span: str, focus: str | None) -> str | None:
    """Why a span the model reads as supporting cannot (the fitted judge's vetoes, decide.VETOES,
    on the span's best sentence): a claim number the sentence does not state where it states
    another, a negation or an opposite word on one side only, the deed given to another
    subject — what the swapped word of a near-miss claim looks like. None: no veto."""
    from provrag.engines.offline.judge.decide import VETOES
    from provrag.engines.offline.judge.features import features

    feat = features(claim, span, 1, focus)
    fired = [n for n in VETOES if feat[n]]
    if not fired:
        return None
    if feat["missing_numbers"]:
        return "not stated: " + ", ".join(feat["missing_numbers"][:3])
    return fired[0].replace("_", " ")


def judge(claim: str, evidence: list[str], vcfg: VerifySettings, reader, focus: str | None = None) -> list[dict]:
    """One verdict per evidence text (decide.judge's shape): {"label", "score", "reason", "span",
    "contradiction"}."""
    claim = claim if isinstance(claim, str) else ("" if claim is None else str(claim))
    texts = [ev if isinstance(ev, str) else ("" if ev is None else str(ev)) for ev in evidence or []]
    per_text: list[list[tuple[int, int]]] = []
    pairs: list[str] = []
    for t in texts:
        sp = candidate_spans(claim, t, int(vcfg.max_window), int(vcfg.judge_spans)) if claim.strip() and t.strip() else []
        per_text.append(sp)
        pairs.extend(span_text(t, s) for s in sp)
    probs = reader.claim_probs(claim, pairs) if pairs else []
    # the fitted judge's word on each text: its contradictions (a swapped, turned or negated
    # statement) name what a vetoed span is, and it weighs the texts together
    fitted, feats = verdicts(claim, texts, vcfg, focus, reader)
    out, k = [], 0
    for t, sp, fit in zip(texts, per_text, fitted):
        if not sp:
            out.append({"label": "unsupported", "score": 0.0, "reason": "nothing to compare", "span": [0, 0],
                        "contradiction": 0.0})
            continue
        rows = [(float(probs[k + i][0]), float(probs[k + i][1]), s) for i, s in enumerate(sp)]
        k += len(sp)
        sup, _, sup_span = max(rows, key=lambda r: (r[0], -r[2][0]))
        con, con_sup, con_span = max(((c, s, x) for s, c, x in rows), key=lambda r: (r[0], -r[2][0]))
        vetoed = veto(claim, t[sup_span[0]:sup_span[1]], focus) \
            if vcfg.judge_vetoes and sup >= vcfg.supported_min_prob else None
        if sup >= vcfg.supported_min_prob and not vetoed:
            label, span, reason = "supported", sup_span, f"supported: the span states the claim (P {sup:.2f})"
        elif con >= vcfg.contradicted_min_prob and not vetoed:
            label, span = "contradicted", con_span
            reason = f"contradicted: the span states otherwise (P contradicted {con:.2f})"
            sup = con_sup
        elif vetoed and fit["label"] == "contradicted":
            label, span = "contradicted", tuple(fit["span"])
            reason = f"{fit['reason']} (P supported {sup:.2f})"
        elif vetoed:
            label, span = "unsupported", sup_span
            reason = f"not stated: the span reads alike, but {vetoed} (P supported {sup:.2f})"
        else:
            label, span = "unsupported", sup_span
            reason = f"not stated: the closest span does not state the claim (P supported {sup:.2f})"
        out.append({"label": label, "score": round(sup, 4), "reason": reason, "span": list(span),
                    "contradiction": round(con, 4)})
    return outweigh(out, feats, fitted)
