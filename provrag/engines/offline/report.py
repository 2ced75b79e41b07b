"""The offline engine's community report: extractive, structured, and citing the index.

Same JSON as GraphRAG's report prompt asks an LLM for (title, summary, rating,
rating_explanation, findings), built without a model:

- **title**: the community's top entities by degree (up to three), written as the text
  writes them ("Alex Mercer, Taylor Cruz and Dulce Base" rather than the upper-case titles).
- **summary**: one line saying what the community holds, then the most *central* sentences of
  its text units. Centrality = cosine similarity of a sentence's TF-IDF vector to the centroid
  of all candidate sentences (those mentioning one of the community's entities). Chosen over
  TextRank: it needs n similarities instead of n², and on the dense similarity graph of a
  community's sentences TextRank's stationary scores rank sentences almost as their
  similarity to the centroid does anyway; it is also deterministic without iteration
  tolerances. Near-duplicate sentences (text units overlap) are dropped.
- **findings** (3 to `max_findings`): alternately the next entity by degree (its description
  and neighbours) and the next relationship by weight (its description), each explanation
  ending with `[Data: Entities (…); Relationships (…)]` — at most 5 ids per kind and
  `+more` when cut, as GraphRAG writes them. Every id comes from the context, i.e. the index.
- **rating** (0–10, GraphRAG's "impact"): 10 × (½·S + ½·D) with S = 1 − e^(−n/10) for the n
  entities of the context (size: 10 entities → 0.63, 30 → 0.95) and D = 1 − e^(−d/5) for their mean degree d
  in the whole graph (how connected the community's members are: 5 → 0.63). Big communities
  of hub entities rate high; a pair of rarely-mentioned terms rates low.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from provrag.config import Config
from provrag.engines.offline.extract.text import sentences, trim
from provrag.text.words import title_key

_MAX_IDS = 5


def cite(entities: list[int], relationships: list[int]) -> str:
    """`[Data: Entities (…); Relationships (…)]`, ≤ 5 ids per kind and `+more` when cut."""
    parts = []
    for kind, ids in (("Entities", entities), ("Relationships", relationships)):
        ids = list(dict.fromkeys(int(i) for i in ids))
        if ids:
            shown = ", ".join(str(i) for i in ids[:_MAX_IDS]) + (", +more" if len(ids) > _MAX_IDS else "")
            parts.append(f"{kind} ({shown})")
    return f"[Data: {'; '.join(parts)}]" if parts else ""


def _display(title: str, texts: list[str]) -> str:
    """The title as the text writes it (first case-insensitive match), else Title Case."""
    words = re.findall(r"\w+", title)
    if words:
        pat = re.compile(r"\b" + r"\W{1,3}".join(re.escape(w) for w in words) + r"\b", re.I)
        for t in texts:
            m = pat.search(t)
            if m:
                return " ".join(m.group().split())
    return title if len(title) <= 4 else title.title()


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@lru_cache(maxsize=4096)
def _unit_sentences(text: str) -> tuple[tuple[str, str], ...]:
    """(sentence, normalised key) pairs of one text unit; units recur across communities and levels."""
    out = []
    for a, b in sentences(text):
        sent = " ".join(text[a:b].split())
        key = title_key(sent)
        if 5 <= len(key.split()) <= 60:
            out.append((sent, key))
    return tuple(out)


def _central_sentences(context: dict, k: int, names: list[str]) -> list[str]:
    """The k sentences of the community's text units closest to their TF-IDF centroid."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    cands, seen = [], set()
    for u in context.get("text_units") or []:
        for sent, key in _unit_sentences(u.get("text") or ""):
            if key not in seen:
                seen.add(key)
                cands.append(sent)
    if not cands:
        return []
    alts = [r"\W{1,3}".join(map(re.escape, re.findall(r"\w+", n))) for n in names if re.findall(r"\w+", n)]
    pat = re.compile(r"\b(?:" + "|".join(alts) + r")\b", re.I) if alts else None
    about = [s for s in cands if pat.search(s)] if pat else []
    pool = about or cands
    try:
        m = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(pool)
    except ValueError:  # only stop words
        return pool[:k]
    centroid = np.asarray(m.mean(axis=0)).ravel()
    norm = np.linalg.norm(centroid) or 1.0
    scores = (m @ centroid) / norm
    best = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[:k]
    return [pool[i] for i in sorted(best)]


def _rating(entities: list[dict]) -> tuple[float, str]:
    n = len(entities)
    mean_deg = sum(float(e.get("degree") or 0) for e in entities) / n if n else 0.0
    s, d = 1 - math.exp(-n / 10), 1 - math.exp(-mean_deg / 5)
    r = round(10 * (0.5 * s + 0.5 * d), 1)
    return r, (f"Rating {r} = 10 × (0.5 × size term {s:.2f} + 0.5 × degree term {d:.2f}): size term "
               f"1 − e^(−{n}/10) for the {n} entities reported on, degree term 1 − e^(−{mean_deg:.1f}/5) for their "
               f"mean degree {mean_deg:.1f} in the whole graph.")


def write_report(context: dict, cfg: Config) -> dict:
    """A GraphRAG-shaped report dict for one community context (engines/base.py)."""
    rcfg = cfg.reports
    max_findings = max(1, int(rcfg.max_findings))
    n_sent = max(1, int(rcfg.summary_sentences))
    ents = sorted(context.get("entities") or [],
                  key=lambda e: (-int(e.get("degree") or 0), int(e.get("human_readable_id") or 0)))
    rels = sorted(context.get("relationships") or [],
                  key=lambda r: (-float(r.get("weight") or 0), int(r.get("human_readable_id") or 0)))
    texts = [u.get("text") or "" for u in context.get("text_units") or []]
    hrid = {title_key(str(e.get("title") or "")): int(e["human_readable_id"]) for e in ents}
    rel_keys = [(title_key(str(r.get("source") or "")), title_key(str(r.get("target") or ""))) for r in rels]
    shown: dict[str, str] = {}

    def show(title: str) -> str:
        if title not in shown:
            shown[title] = _display(title, texts)
        return shown[title]

    top = [show(str(e.get("title") or "")) for e in ents[:3] if e.get("title")]
    title = _join(top) if top else f"Community {context.get('community', '')}".strip()
    lead = f"This community centres on {_join(top)}." if top else ""
    central = _central_sentences(context, n_sent, [str(e.get("title") or "") for e in ents[:10]])
    summary = " ".join([lead] + central).strip()

    # findings: entity, relationship, entity, … until the budget or the material runs out
    want = min(max_findings, max(3, 3 + len(ents) // 5))
    findings = []
    ei = ri = 0
    while len(findings) < want and (ei < len(ents) or ri < len(rels)):
        if ei < len(ents) and (len(findings) % 2 == 0 or ri >= len(rels)):
            e = ents[ei]
            ei += 1
            name = show(str(e.get("title") or ""))
            key = title_key(str(e.get("title") or ""))
            mine = [r for r, ends in zip(rels, rel_keys) if key in ends]
            nb = [show(str(r["target"] if ends[0] == key else r["source"])) for r, ends in zip(rels, rel_keys) if key in ends]
            etype = str(e.get("type") or "").lower()
            desc = trim(str(e.get("description") or ""), 500)
            linked = ("" if not nb else _join(nb)) if len(nb) <= 5 else ", ".join(nb[:5]) + f" and {len(nb) - 5} more"
            text = (desc + " " if desc else "") + (f"Within this community it is linked to {linked}." if nb else "")
            findings.append({
                "summary": f"{name}" + (f" ({etype})" if etype else "") + (f", linked to {len(nb)} entit{'y' if len(nb) == 1 else 'ies'}" if nb else ""),
                "explanation": f"{text.strip()} {cite([e['human_readable_id']], [r['human_readable_id'] for r in mine])}".strip(),
            })
        elif ri < len(rels):
            r = rels[ri]
            ri += 1
            a, b = str(r.get("source") or ""), str(r.get("target") or "")
            ids = [hrid[k] for k in (title_key(a), title_key(b)) if k in hrid]
            w = float(r.get("weight") or 0)
            desc = trim(str(r.get("description") or ""), 500)
            findings.append({
                "summary": f"{show(a)} and {show(b)}",
                "explanation": (f"{desc} " if desc else "") + f"(relationship weight {w:g}) "
                               + cite(ids, [r["human_readable_id"]]),
            })
    rating, why = _rating(ents)
    return {"title": title, "summary": summary, "findings": findings, "rating": rating, "rating_explanation": why}
