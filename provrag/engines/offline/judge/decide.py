"""The verdict on one evidence text: fitted logistic scores over the named features and the
reader's claim head's reading of the text (head.py; weights in config.toml [verify], fitted by
bench/fit_judge.py), the vetoes that keep a conflicting span from supporting a claim, the
contradiction rule, and a readable reason."""
from __future__ import annotations

import math

from provrag.config import VerifySettings
from provrag.engines.offline.judge.analysis import analyse
from provrag.engines.offline.judge.features import FEATURES, features
from provrag.engines.offline.judge.head import HEAD_FEATURES, UNREAD, head_readings, reads_head, said

SUPPORT_FEATURES = FEATURES + HEAD_FEATURES


def _linear(feat: dict, weights: dict[str, float], bias: float, names=SUPPORT_FEATURES) -> float:
    """Logistic score of the named features; `weights` maps each feature name to its weight (a
    name it lacks weighs 0: a user's config.toml written before the head's features)."""
    z = float(bias) + sum(float(weights.get(n, 0.0)) * float(feat.get(n, 0.0)) for n in names)
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


# what keeps a span from supporting a claim whatever the overlap (bench/fit_judge.py applies them too)
VETOES = ("negation_mismatch", "antonym", "number_conflict", "subject_conflict", "slot_swap")

CONTRA_FEATURES = ("coverage", "name_coverage", "number_conflict", "name_conflict",
                   "negation_mismatch", "antonym", "similarity", "order") + HEAD_FEATURES


def _reason(feat: dict, label: str) -> str:
    # a share "covered" beside the words it lacks reads as a contradiction of itself: say one
    bits = [] if feat["missing_words"] or feat["swaps"] else [f"covers {feat['coverage']:.0%} of the claim"]
    if feat["focus_coverage"] != feat["coverage"]:
        bits.append(f"answer words {feat['focus_coverage']:.0%}")
    if feat["missing_numbers"] and label == "contradicted" and feat["stated_numbers"] and not feat["swaps"]:
        # a contradiction says what the text states instead; "not stated" alone reads as no contradiction
        bits.append(f"states {', '.join(feat['stated_numbers'][:2])} where the claim has "
                    + ", ".join(feat["missing_numbers"][:3]))
    elif feat["missing_numbers"] and not (label == "contradicted"
                                          and set(feat["missing_numbers"]) <= {c for c, _ in feat["swaps"]}):
        # (a swap below already says what the text states in the number's place)
        bits.append("not stated: " + ", ".join(feat["missing_numbers"][:3]))
    if feat["missing_words"]:
        bits.append("missing: " + ", ".join(feat["missing_words"][:5]))
    if feat["negation_mismatch"]:
        bits.append("negation differs")
    if feat["antonyms"]:
        bits.append("opposite: " + ", ".join(feat["antonyms"][:2]))
    if feat["name_conflict"]:
        bits.append("other names in span")
    if feat["subject_conflict"]:
        bits.append("said of another subject")
    if feat["swaps"]:
        bits.append("says " + ", ".join(f"{s} where the claim has {c}" for c, s in feat["swaps"][:2]))
    return f"{label}: " + "; ".join(bits)


def decide(feat: dict, vcfg: VerifySettings) -> tuple[str, float, float]:
    """(label, support score, contradiction score) from one span's features and [verify] settings."""
    s = _linear(feat, vcfg.support_weights, vcfg.support_bias)
    c = _linear(feat, vcfg.contradict_weights, vcfg.contradict_bias, CONTRA_FEATURES)
    # vetoes: a span that states the claim's content with the opposite polarity, an opposite
    # word, or another value for one of its numbers cannot support it, whatever the overlap
    veto = any(feat[n] for n in VETOES)
    if veto:
        s = min(s, vcfg.support_threshold - 0.01)
    if s >= vcfg.support_threshold:
        return "supported", s, c
    # a contradiction needs a positive conflict signal on a span that otherwise matches: a veto
    # (a claim's negation only where the span states the negated words), or a name of the claim
    # replaced by other names with a high contradiction score
    # another number is a contradiction only in a span about the same thing: one that names all the
    # claim names (a page about the plant's owner that gives other dates does not deny an issue date;
    # it does not state it)
    number_conflict = feat["number_conflict"] and feat["name_coverage"] >= 1.0
    # an opposite word contradicts only in the sentence that says the rest of the claim (the
    # turned sentence: `slot_swap` below); anywhere in the span it is a veto, not a contradiction: a page of
    # examples holding "last" and the package's name does not deny that it was "first presented"
    conflict = feat["negation_conflict"] or number_conflict or feat["subject_conflict"]
    # a name replaced by another is a contradiction only where the span says the rest of the claim
    swapped_name = feat["name_conflict"] and not feat.get("missing_other", 0) and c >= vcfg.contradict_threshold
    # the sentence that says the rest of the claim has another name or number in its place (slots.py)
    if feat["slot_swap"] and feat["swap_coverage"] >= vcfg.contradict_min_coverage:
        return "contradicted", s, max(c, vcfg.contradict_threshold)
    if feat["coverage"] >= vcfg.contradict_min_coverage and (conflict or swapped_name):
        return "contradicted", s, max(c, vcfg.contradict_threshold) if conflict else c
    return "unsupported", s, c


def judge(claim: str, evidence: list[str], vcfg: VerifySettings, *, focus: str | None = None,
          reader="auto") -> list[dict]:
    """One verdict per evidence text, never one joined premise: {"label", "score", "reason",
    "span": [start, end] of the best span in that text, "contradiction": score}. `score` is the
    support score in [0, 1]. Bad input (None, non-strings, empty) gives "unsupported". `reader`:
    the learned reader whose claim head reads each text (head.py) when the weights use it ("auto":
    the process's, when installed); None: the head's features stay at even odds (UNREAD) and
    the reason says so."""
    out, texts = verdicts(claim, evidence, vcfg, focus, reader)
    return outweigh(out, texts)


def verdicts(claim, evidence, vcfg: VerifySettings, focus: str | None = None,
             reader="auto") -> tuple[list[dict], list[tuple]]:
    """Each text's verdict on its own, and (text, its features) beside it (features None where
    there was nothing to compare): what `outweigh` weighs across the texts."""
    if isinstance(reader, str):
        reader = installed_reader()
    claim = claim if isinstance(claim, str) else ("" if claim is None else str(claim))
    evidence = [ev if isinstance(ev, str) else ("" if ev is None else str(ev)) for ev in evidence or []]
    comparable = bool(claim.strip() and (analyse(claim).stems or analyse(claim).numbers))
    wanted = comparable and reads_head(vcfg)
    readings = head_readings(claim, evidence, vcfg.max_window, reader) \
        if wanted and reader is not None else [dict(UNREAD) for _ in evidence]
    out, texts = [], []
    for ev, reading in zip(evidence, readings):
        if not comparable or not ev.strip():
            out.append({"label": "unsupported", "score": 0.0, "reason": "nothing to compare",
                        "span": [0, 0], "contradiction": 0.0})
            texts.append((ev, None))
            continue
        feat = {**features(claim, ev, vcfg.max_window, focus), **reading}
        label, s, c = decide(feat, vcfg)
        # a swap is shown where it is: the sentence with the other name or number
        span = feat["swap_span"] if label == "contradicted" and feat["slot_swap"] else feat["span"]
        reason = _reason(feat, label)
        if wanted:
            reason += "; the claim head did not read (no reader)" if reader is None else "; " + said(reading)
        out.append({"label": label, "score": round(s, 4), "reason": reason,
                    "span": list(span), "contradiction": round(c, 4)})
        texts.append((ev, feat))
    return out, texts


def installed_reader():
    """The process's learned reader (provrag/learned, loaded once), or None when it is not installed
    or does not load."""
    try:
        from provrag.learned import reader as learned

        return learned.get() if learned.available() else None
    except Exception:  # a missing runtime or damaged weights: the judge reads without the head, and says so
        return None


def outweigh(out: list[dict], texts: list[tuple[str, dict | None]], fitted: list[dict] | None = None) -> list[dict]:
    """A text that states the claim otherwise (an opposite word or two terms the other way round
    in the sentence that says all the rest of the claim; or the claim's words under a negation,
    in a span that says most of the claim) outweighs a text
    whose span supports the claim without stating the words in question: RefChecker's rule takes
    any support, and a span that covers the claim's other words ("…how to deal with name clashs
    while using both svgnames and dvipsnames…") must not confirm "dvipsnames colors always
    overrule svgnames colors" against the sentence that says the opposite. A span that states
    them still supports (then the swap is about another thing). A swapped name or number
    (slots.py) does not outweigh: its alignment may take a run of the claim's names for another
    document's one ("Charles Lennox Duke of Richmond … 1651" for "Henry VII"), and a supporting
    text that states the answer is not overruled by it (HaluEval he-dev-0179)."""
    fitted = out if fitted is None else fitted   # the fitted judge's own labels (the learned judge's differ)
    contested = [(c, feat["swap_coverage"], feat["swap_order"]) for v, (_, feat) in zip(fitted, texts)
                 if feat and v["label"] == "contradicted" and feat["turned"] for c, _ in feat["swaps"]]
    # …or that states the claim's words under a negation ("bug reports do not count for copyright
    # purposes" against a span on copyright purposes that never says what counts); each where it
    # says as much of the claim as the supporting span
    contested += [(" ".join(feat["negated_words"]), feat["coverage"], feat["order"]) for v, (_, feat) in zip(fitted, texts)
                  if feat and v["label"] == "contradicted" and not feat["slot_swap"] and feat["negation_conflict"]
                  and feat["negated_words"]]
    if not contested:
        return out
    from provrag.engines.offline.judge.features import states

    for v, (ev, feat) in zip(out, texts):
        if v["label"] != "supported" or feat is None:
            continue
        # …where the other text says as much of the claim (unless this span states the words in
        # question too), or says it more nearly in the claim's order: "It should be loaded after
        # any other maths or font-related package" (the claim's words in its order, but for its
        # name) outweighs a span that merely holds them all, "before" among them ("…only loads a
        # default maths setup … Before you use the range option you must first load…")
        span = ev[v["span"][0]:v["span"][1]]
        stated = {c: states(c, span, ev) for c, _, _ in contested}
        lacking = list(dict.fromkeys(c for c, cov, order in contested if order > feat["order"] + 1e-9
                                     or (cov >= feat["coverage"] - 1e-9 and not stated[c])))
        if lacking:
            v["label"] = "unsupported"
            v["reason"] = ((f"another source states {', '.join(lacking[:2])} otherwise, in more of the claim's own words; "
                            if stated[lacking[0]] else
                            f"not stated: {', '.join(lacking[:2])}, which another source states otherwise; ")
                           + v["reason"].removeprefix("supported: "))
    return out
