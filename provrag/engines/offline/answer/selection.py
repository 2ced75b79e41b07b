"""The offline answerer's selection: the few best distinct sentences of the ranking, optionally
re-ordered by a small sentence encoder.

Near-duplicates are dropped (the same sentence quoted from two overlapping units, or in
two documents) so an answer never says one thing twice. With [search] rerank = "minilm" (the
default) the best few distinct sentences are then re-ordered with all-MiniLM-L6-v2: its
cosine to the question, which sees paraphrase, its token-level MaxSim, which matches the
question word by word, and the cosine of the sentence's paragraph to the question (`select`).
On the dev split (bench/ask_quality.py) the lexical ranking puts a sentence holding the gold
answer first for ~75 % of questions, the reranker ~78 %, at ~0.4 s per question (p95 0.7 s).
"""
from __future__ import annotations

from provrag.config import Config
from provrag.engines.offline.answer.scoring import rank_sentences
from provrag.engines.offline.answer.wording import said_already


def select(question: str, records: list[dict], n: int, idf: dict[str, float] | None = None,
           min_score: float = 0.05, qterms: list[str] | None = None, ranked: list[dict] | None = None,
           cfg: Config | None = None, info: dict | None = None) -> list[dict]:
    """The n best distinct sentences (see rank_sentences), best first.

    With [search] rerank = "minilm", the best `rerank_sentences` distinct candidates are
    re-ordered by lexical score + rerank_weight · cosine(question, sentence)
    + rerank_maxsim_weight · MaxSim(question, sentence) under all-MiniLM-L6-v2 (shipped
    weights, run with numpy). The cosine compares whole sentences and sees paraphrase
    ("picks" for "interceptions") that no word overlap can; MaxSim (ColBERT's late
    interaction, on the same forward pass) lets every content word of the question find its
    best-matching word in the sentence in context and averages those similarities, so a
    sentence must match the question's words one by one, not only its topic ("Which mountain
    range influenced the split of the regions?" finds "Another influence is … the Tehachapis,
    which would split the southern region off"). On the dev split it puts the gold page
    first ~1 point more often than the cosine alone (bench/ask_quality.py).
    + rerank_paragraph_weight · cosine(question, the sentence's paragraph) reads the sentence
    in its passage, as the lexical score does with the paragraph's words; the two together
    put the gold page first for 91.3 % of the 300 dev questions instead of 90.3 %, at
    ~0.2 s more per question (the paragraphs go through the same pass, in their own batches).
    `info` receives what was done (for the trace).
    """
    scfg = cfg.search if cfg is not None else None  # no settings: word overlap only
    mode = scfg.rerank.lower() if scfg is not None else "none"
    k = max(scfg.rerank_sentences, n) if mode == "minilm" else n
    kept: list[dict] = []
    for cand in (ranked if ranked is not None else rank_sentences(question, records, idf, qterms=qterms)):
        if len(kept) >= k:
            break
        if cand["score"] < min_score:
            break
        if said_already(cand["sentence"], [x["sentence"] for x in kept]):
            continue
        kept.append(cand)
    if mode == "minilm" and len(kept) > 1:
        kept = _rerank_minilm(question, kept, scfg.rerank_weight, info, scfg.rerank_maxsim_weight,
                              scfg.rerank_paragraph_weight, scfg.meaning_int8)
    elif info is not None:
        info["rerank"] = "none"
    return kept[:n]


def minilm_meaning(question: str, cands: list[dict], weight: float, maxsim_weight: float = 0.0,
                   paragraph_weight: float = 0.0, int8: bool = False) -> list[float] | None:
    """Each candidate's meaning score under all-MiniLM-L6-v2 (select's docstring): weight ·
    cosine(question, sentence) + maxsim_weight · MaxSim + paragraph_weight · cosine(question,
    paragraph), scaled like the lexical score for a sentence without the asked-for quantity.
    Sets "cosine", "maxsim", "paragraph_cosine" on each candidate; None when MiniLM is missing.
    `int8`: MiniLM's passes run with int8 matmuls ([search] meaning_int8: embeddings/minilm.py)."""
    paras = list(dict.fromkeys(c.get("paragraph") or c["sentence"] for c in cands)) if paragraph_weight else []
    import numpy as np

    from provrag.embeddings.minilm import MiniLMEmbedder, content_pieces
    from provrag.embeddings.remembered import STORE

    # the question and the sentences with their token vectors, the paragraphs pooled only; texts
    # an earlier question read already come from the process's store (embeddings/remembered.py)
    embedder = MiniLMEmbedder(int8=int8)
    vecs, toks = STORE.embed_tokens(embedder, [question] + [c["sentence"] for c in cands])
    if paras:
        vecs = np.concatenate([vecs, STORE.embed(embedder, paras)])
    cos = vecs[1:] @ vecs[0]
    para_cos = dict(zip(paras, cos[len(cands):].tolist()))
    qv = content_pieces(*toks[0])
    out = []
    for c, x, (_, sv) in zip(cands, cos, toks[1:]):
        c["cosine"] = round(float(x), 4)
        c["maxsim"] = round(float((qv @ sv.T).max(1).mean()), 4) if len(qv) and len(sv) else 0.0
        pc = para_cos.get(c.get("paragraph") or c["sentence"])  # None when not asked for (weight 0)
        c["paragraph_cosine"] = None if pc is None else round(pc, 4)
        out.append(c.get("type_factor", 1.0) * (weight * float(x) + maxsim_weight * c["maxsim"]
                                                 + paragraph_weight * (pc or 0.0)))
    return out


def _rerank_minilm(question: str, cands: list[dict], weight: float, info: dict | None,
                   maxsim_weight: float = 0.0, paragraph_weight: float = 0.0, int8: bool = False) -> list[dict]:
    import time

    t0 = time.perf_counter()
    try:
        meaning = minilm_meaning(question, cands, weight, maxsim_weight, paragraph_weight, int8)
    except Exception as e:  # model package missing or damaged: the lexical order stands, and the trace says why
        if info is not None:
            info["rerank"] = f"none (minilm unavailable: {str(e).splitlines()[0][:160]})"
        return cands
    for c, m in zip(cands, meaning):
        c["lexical_score"] = c["score"]
        c["score"] = round(c["score"] + m, 6)
    out = sorted(cands, key=lambda c: (-c["score"], c["record"], c["start"]))
    if info is not None:
        info["rerank"] = "minilm"
        info["rerank_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    return out
