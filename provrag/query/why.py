"""Why-provenance: why each retrieved candidate ranks where it does, kept in the trace.

The provenance-aware vector database paper keeps, for every retrieval, the token-level
influence of the query on it, so "why do my queries keep retrieving this chunk?" has an
answer. Here every candidate of hybrid retrieval (provrag/query/retrieve.py) gets a `why`:

- `rank` (1 = best) and `score`, with the score's `components` as retrieval really combines
  them: `lexical` (w · bm25 / max bm25) + `embedding` ((1 − w) · max(cos, 0) / max cos) +
  `entity_boost` (local search), beside the raw `bm25` and `cosine` they come from. There is
  no rerank component: the MiniLM reranker re-orders answer sentences, not candidates.
- `influence`: the question's words that drove it, with weights, per channel:
  `bm25` — each term's exact share of the unit's BM25 score (they sum to `bm25`);
  `embedding` — the paper's approximation, the cosine of each word's embedding (the index's
  own embedder, all words in one batch per question) with the unit's embedding.
  Terms are shown as the question wrote them (BM25 matches their stems).
Community reports (global search) get the same shape: their BM25 by word, the report's
rating, or for a broad question the share of the collection the community covers.
"""
from __future__ import annotations

from provrag.text.words import STOP_WORDS, WORD, terms_of

MAX_TERMS = 8      # influence items kept per channel and candidate (a question has few words)
_DIGITS = 4


def question_words(question: str) -> list[str]:
    """The question's distinct content words, lower-cased, in order: the tokens whose
    influence is measured."""
    out: list[str] = []
    for m in WORD.finditer((question or "").lower()):
        w = m.group(0)
        if w in STOP_WORDS or (len(w) == 1 and not w.isdigit()) or w in out:
            continue
        out.append(w)
    return out


def term_words(words: list[str], qterms, fixes: dict[str, str]) -> dict[str, str]:
    """index term → the question's word it stands for (a spelling fix maps the typed word)."""
    out: dict[str, str] = {}
    for w in words:
        for t in terms_of(w):
            t = t if t in qterms else fixes.get(t)
            if t and t not in out:
                out[t] = w
    return out


def word_vectors(emb, words: list[str]) -> dict:
    """Each word's unit-length embedding, all in one batch; words the embedder cannot place
    (a zero vector: no word of it in a TF-IDF vocabulary) are left out."""
    if emb is None or not words:
        return {}
    import numpy as np

    try:
        m = np.asarray(emb.embed(list(words)), dtype=np.float32)
    except Exception:  # the approximation is an explanation, never a reason for ask to fail
        return {}
    norms = np.linalg.norm(m, axis=1)
    return {w: m[i] / norms[i] for i, w in enumerate(words) if np.isfinite(norms[i]) and norms[i] > 0}


def _top(weights: dict[str, float], channel: str) -> list[dict]:
    items = sorted(((t, w) for t, w in weights.items() if w > 0), key=lambda x: (-x[1], x[0]))[:MAX_TERMS]
    return [{"term": t, "channel": channel, "weight": round(float(w), _DIGITS)} for t, w in items]


def explain_units(reader, cands: list[dict], question: str, qterms: dict, fixes: dict, stats: dict,
                  parts: dict, boost: dict | None, emb) -> None:
    """Add `why` to each retrieved unit (see the module docstring). `parts` holds each unit's
    (lexical, embedding) part of the fused score; `emb` is the index's embedder when the
    dense channel ranked (None: BM25 alone, no embedding influence)."""
    import numpy as np

    from provrag.query.resolve import unit_vectors
    from provrag.store import terms as lexical

    ids = [c["text_unit_id"] for c in cands]
    words = question_words(question)
    shown = term_words(words, qterms, fixes)
    contrib = lexical.term_contributions(reader.con, stats, qterms, ids) if qterms else {}
    wvecs = word_vectors(emb, words) if emb is not None else {}
    uvecs = unit_vectors(reader, ids) if wvecs else {}
    for c in cands:
        uid = c["text_unit_id"]
        lex_part, emb_part = parts.get(uid, (0.0, 0.0))
        comp = {"bm25": c["bm25"], "lexical": round(lex_part, 6)}
        if emb is not None:
            comp |= {"cosine": c["cosine"], "embedding": round(emb_part, 6)}
        if boost:
            comp["entity_boost"] = round(boost.get(uid, 0.0), 6)
        influence = _top({shown.get(t, t): s for t, s in (contrib.get(uid) or {}).items()}, "bm25")
        u = uvecs.get(uid)
        if u is not None and np.linalg.norm(u) > 0:
            u = u / np.linalg.norm(u)
            influence += _top({w: float(v @ u) for w, v in wvecs.items() if len(v) == len(u)}, "embedding")
        c["why"] = {"rank": int(c["rank"]) + 1, "score": c["score"], "components": comp, "influence": influence}


def report_why(rank: int, report: dict) -> dict:
    """A community report candidate's `why` (global search): rank (1 = best), score, its
    components and the question's words by their BM25 share (`report["terms"]`)."""
    return {"rank": rank, "score": report.get("score"), "components": dict(report.get("components") or {}),
            "influence": _top(report.get("terms") or {}, "bm25")}


def why_line(why: dict | None, terms: int = 4, head: bool = True) -> str:
    """One line a person reads: `#3 · score 0.812 = lexical 0.612 + embedding 0.200 · bm25:
    synopsis 4.10, package 1.20 · embedding: synopsis 0.52` ("" without a why). Without
    `head` the rank and score are left out (shown beside it already), the sum kept."""
    if not isinstance(why, dict):
        return ""
    comp = why.get("components") if isinstance(why.get("components"), dict) else {}
    addends = " + ".join(f"{k.replace('_', ' ')} {comp[k]:.3f}" for k in ("lexical", "embedding", "entity_boost",
                                                                         "rating", "size")
                         if isinstance(comp.get(k), (int, float)) and (comp[k] or k != "entity_boost"))
    score = why.get("score")
    first = ""
    if head:
        first = f"#{why.get('rank')}" if why.get("rank") is not None else ""
        if isinstance(score, (int, float)):
            first += f" · score {score:.3f}" + (f" = {addends}" if addends else "")
    elif addends:
        first = f"score = {addends}"
    parts = [first] if first else []
    infl = [x for x in why.get("influence") or [] if isinstance(x, dict)]
    for channel in ("bm25", "embedding"):
        items = [x for x in infl if x.get("channel") == channel][:terms]
        if items:
            parts.append(f"{channel}: " + ", ".join(f"{x.get('term')} {float(x.get('weight') or 0):.2f}" for x in items))
    return " · ".join(parts)


def retrieved_why(trace: dict, claim: int | None = None) -> dict[str, dict]:
    """{text_unit_id: why} of the units a stored trace retrieved: an ask's candidates, or a
    verify run's retrieved evidence — of claim `claim` (0-based), or of any claim (the first
    that retrieved the unit). Reads any trace defensively: old traces have no why."""
    out: dict[str, dict] = {}
    stages = [s for s in trace.get("stages") or [] if isinstance(s, dict)] if isinstance(trace, dict) else []
    for s in stages:
        data = s.get("data") if isinstance(s.get("data"), dict) else {}
        lists = [data.get("candidates")] if s.get("name") == "exploration" and claim is None else []
        if s.get("name") == "evidence":
            found = [r for r in data.get("retrievals") or [] if isinstance(r, dict)]
            lists += [r.get("candidates") for i, r in enumerate(found) if claim is None or i == claim]
        for cands in lists:
            for c in cands if isinstance(cands, list) else []:
                if isinstance(c, dict) and isinstance(c.get("why"), dict) and c.get("text_unit_id"):
                    out.setdefault(c["text_unit_id"], c["why"])
    return out
