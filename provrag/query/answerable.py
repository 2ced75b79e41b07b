"""Does the index answer the question at all? The evidence for "nothing in the index answers this".

Retrieval always returns something, and its scores are relative: the best of a bad lot still
scores ~0.9 after fusion, so a raw retrieval score cannot say "none of this answers you"
("Who won the 2018 FIFA World Cup?" over Debian manuals retrieves release dates of 2018).
What separates an answer from on-topic text is how much of the *question* the best passage
covers, in two ways:

  lexical   the share of the question's content terms, weighted by their idf, that the best
            passage holds. A term the index has never seen ("Kubernetes", "FIFA") weighs as
            much as the rarest indexed term: a question about something the collection never
            mentions cannot be answered from it.
  semantic  MiniLM's MaxSim of the question's content word pieces against the passage's
            pieces (ColBERT's late interaction: every question word finds its best match in
            context), which sees paraphrase that term matching misses.

Both are read at each passage's best window (the few consecutive sentences that hold most of
the question), over the best passages of the selected context, and combined by a logistic
model fitted on SQuAD-as-PDF with half the articles indexed (bench/fit_abstain.py refits it and
prints how): `confidence` is its estimate, 0–1, that the best passage answers the question, and
ask abstains below [search] abstain_below (chosen by measurement there). Without MiniLM (the
model package missing or broken) the lexical-only model of the same fit is used, and the trace
says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

# Logistic coefficients (intercept, lexical, semantic) and the lexical-only fallback
# (intercept, lexical), fitted by bench/fit_abstain.py on the dev split's SQuAD articles, half
# indexed: the other half's questions are the unanswerable ones. Refit there, never by hand.
# Out of fold on that split (bench/results/fit-abstain-2026-11-24.txt), at the threshold 0.4 of
# config.toml, the best of 10 passages: 92.7 % of unanswerable questions abstain, 6.0 % of
# answerable ones do (lexical only: 88.7 % and 8.0 %). 3, 5 or 10 passages make little difference
# there; 10 finds the answer of a technical manual that retrieval ranks lower.
WEIGHTS = (-11.213, 4.293, 15.12)
LEXICAL_ONLY_WEIGHTS = (-6.482, 11.835)

PASSAGES = 10  # how many of the best passages are read (each costs a MiniLM pass)
WINDOW = 3     # sentences of a passage read together


@dataclass
class Answerability:
    """How well the best evidence covers the question, and why (stored in the trace)."""

    confidence: float
    lexical: float
    semantic: float | None
    best: int | None = None               # index into the passages of the best-covering one
    missing_terms: list[str] = field(default_factory=list)
    note: str = ""

    def abstains(self, threshold: float) -> bool:
        return self.confidence < threshold

    def to_json(self) -> dict:
        return {"confidence": self.confidence, "lexical_coverage": self.lexical, "semantic_coverage": self.semantic,
                "best_passage": self.best, "missing_terms": self.missing_terms, "note": self.note}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 50.0), -50.0)))


def term_weights(question: str, idf: dict[str, float], n_units: int, fixes: dict[str, str] | None = None) -> dict[str, float]:
    """The question's content terms (stemmed) with their weight: the index's idf, or for a term the
    index does not hold, the idf of a term in no unit (the largest there is). A misspelt term the
    retriever corrected ("gaurentee" → "guarante") stands for its correction."""
    from provrag.text.words import query_terms

    fixes = fixes or {}
    unseen = math.log(1 + (max(n_units, 1) + 0.5) / 0.5)
    out: dict[str, float] = {}
    for t in query_terms(question):
        t2 = fixes.get(t, t)
        w = idf.get(t2)
        out[t2] = unseen if not w else float(w)
    return out


def lexical_coverage(weights: dict[str, float], passage: str) -> tuple[float, list[str]]:
    """Share of the question's term weight the passage holds, and the terms it lacks."""
    from provrag.text.words import terms_of

    if not weights:
        return 0.0, []
    held = set(terms_of(passage))
    total = sum(weights.values())
    missing = [t for t in weights if t not in held]
    return (total - sum(weights[t] for t in missing)) / total if total else 0.0, missing


def semantic_coverage(question: str, passages: list[str]) -> list[float] | None:
    """MaxSim of the question's content word pieces against each passage (None: no MiniLM)."""
    try:
        from provrag.embeddings.minilm import MiniLMEmbedder, content_pieces

        _, toks = MiniLMEmbedder().embed_tokens([question] + passages)
    except Exception:  # model package missing or damaged: the lexical model stands, the trace says why
        return None
    qv = content_pieces(*toks[0])
    if not len(qv):
        return [0.0 for _ in passages]
    return [float((qv @ sv.T).max(1).mean()) if len(sv) else 0.0 for _, sv in toks[1:]]


def best_window(weights: dict[str, float], passage: str) -> str:
    """The run of up to WINDOW consecutive sentences of the passage that holds most of the
    question's term weight (the earliest of equals): where an answer would stand. A text unit is
    a few hundred words; read whole, it covers terms scattered over unrelated sentences, and
    MiniLM would see only its first 256 word pieces."""
    from provrag.text.sentences import split_sentences

    spans = split_sentences(passage)
    if len(spans) <= WINDOW:
        return passage
    best, best_cov = passage[spans[0][0]:spans[WINDOW - 1][1]], -1.0
    for i in range(len(spans) - WINDOW + 1):
        text = passage[spans[i][0]:spans[i + WINDOW - 1][1]]
        cov = lexical_coverage(weights, text)[0]
        if cov > best_cov:
            best, best_cov = text, cov
    return best


def passage_features(question: str, passages: list[str], idf: dict[str, float], n_units: int,
                     fixes: dict[str, str] | None = None, semantic: bool = True):
    """Per passage, read at its best window: (lexical coverage, terms it lacks), and the semantic
    coverages (None without MiniLM)."""
    weights = term_weights(question, idf, n_units, fixes)
    windows = [best_window(weights, p) for p in passages]
    lex = [lexical_coverage(weights, w) for w in windows]
    return weights, lex, (semantic_coverage(question, windows) if semantic and windows else None)


def assess(question: str, passages: list[str], idf: dict[str, float], n_units: int,
           fixes: dict[str, str] | None = None, semantic: bool = True, limit: int = PASSAGES) -> Answerability:
    """The confidence that the best of `passages` (best retrieved first; the first `limit` are
    read) answers `question`."""
    passages = [p for p in passages if p and p.strip()][:limit]
    weights, lex, sem = passage_features(question, passages, idf, n_units, fixes, semantic)
    if not passages:
        return Answerability(0.0, 0.0, None, None, sorted(weights), "no passage retrieved")
    if sem is None:
        b0, b1 = LEXICAL_ONLY_WEIGHTS
        scores = [_sigmoid(b0 + b1 * c) for c, _ in lex]
        note = "lexical coverage only (MiniLM unavailable)" if semantic else "lexical coverage only"
    else:
        b0, b1, b2 = WEIGHTS
        scores = [_sigmoid(b0 + b1 * c + b2 * s) for (c, _), s in zip(lex, sem)]
        note = "lexical and semantic coverage"
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return Answerability(round(scores[best], 4), round(lex[best][0], 4),
                         None if sem is None else round(sem[best], 4), best, lex[best][1], note)
