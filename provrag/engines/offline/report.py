"""The offline engine's community report: extractive, structured, and citing the index.

Same JSON as GraphRAG's report prompt asks an LLM for (title, summary, rating,
rating_explanation, findings), built without a model. What a report says is quoted from the
community's own text units, never written: a global answer is made of its findings, and a
person can only use a finding that is a statement the documents make, with its page.

- **findings** (3 to `max_findings`): first one per document part the community's units are in
  (its sub-themes, named by the part: "R FAQ › R and Emacs", largest first, citing the part's
  units), then the community's other most *central* statements, distinct from each other. Candidates are the sentences of its text units that read as statements (they
  open with a capital, end with a full stop, hold 6–60 words, mostly words; no heading, no
  table row) and name one of its top entities. Centrality = cosine of a sentence's TF-IDF
  vector to the centroid of all candidates — chosen over TextRank: n similarities instead of
  n², and on the dense similarity graph of a community's sentences TextRank's stationary
  scores rank them almost as their similarity to the centroid does anyway. Findings are then
  taken by maximal marginal relevance (`_MMR_LAMBDA`: centrality, minus the similarity to the
  findings already taken), so the report covers the community's several subjects rather than
  quoting one paragraph eight times; at most `_PER_UNIT` findings come from one text unit.
  Each finding's explanation is the sentence, with the one after it when that is a statement
  too (context: "This restriction…" reads well there), quoted as the unit has them, then
  `[Data: Sources (n)]`, its unit, so the resolver reaches document and page; its summary is a
  short label, the community entities the sentence names.
- **title**: the community's distinctive key phrases (up to three: c-TF-IDF of its units against
  the other communities of its level, computed by index/reports.py as BERTopic names topics),
  written as the text writes them; without any, its top entities by degree.
- **summary**: one line saying what it is about, how much of the index it covers and its
  largest parts, then the `summary_sentences` most central statements, each with its citation.
- **rating** (0–10, GraphRAG's "impact"): how much of the corpus it covers, 10 × √(its text
  units ÷ the index's): a community holding a quarter of the text rates 5. (Without those
  counts, 10 × (½·S + ½·D) over its entities' number and mean degree, as before.)
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from provrag.config import Config
from provrag.engines.offline.answer.focus import points_elsewhere
from provrag.engines.offline.answer.wording import clean, closed
from provrag.text.sentences import TERMINAL, is_heading, split_sentences
from provrag.text.words import title_key

_MIN_WORDS, _MAX_WORDS = 6, 60   # a statement, not a fragment nor a run-on table
_PROSE = 0.6                     # share of a statement's tokens that are words (not numbers, symbols, paths)
_MMR_LAMBDA = 0.7                # centrality against novelty when taking findings (MMR)
_PER_UNIT = 2                    # findings quoted from one text unit at most
_RESTATEMENT = 0.9              # TF-IDF cosine at or above which two candidates say the same thing
_NAMED = 10                      # the community's top entities (by degree) a candidate must name one of
_TOKEN = re.compile(r"\S+")
# list bullets, elisions and runs of upper-case words: list items, running heads and headings
# glued to a sentence by the PDF's text layer
_GLUED = re.compile(r"[•…▪◦]|\b[A-Z]{2,}\W+[A-Z]{2,}\W+[A-Z]{2,}\b")
_WORDISH = re.compile(r"^[\"'“‘(]?[A-Za-z][a-z'’-]*[,;:.!?\"'”’)]*$")


def cite_sources(unit_ids: list[int]) -> str:
    """`[Data: Sources (…)]` for the text units a statement is quoted from (≤ 5, `+more` when cut)."""
    ids = list(dict.fromkeys(int(i) for i in unit_ids))
    if not ids:
        return ""
    return f"[Data: Sources ({', '.join(map(str, ids[:5]))}{', +more' if len(ids) > 5 else ''})]"


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


def is_statement(sentence: str) -> bool:
    """Whether a cleaned sentence reads as a statement a person can use: whole (a capital first,
    terminal punctuation last, brackets balanced), 6–60 tokens, mostly words — not a heading, a
    contents line, a list or table row, or a fragment of one cut by the chunker."""
    toks = _TOKEN.findall(sentence)
    if not (_MIN_WORDS <= len(toks) <= _MAX_WORDS) or not TERMINAL.search(sentence):
        return False
    first = sentence.lstrip("\"'“‘(")[:1]
    if not first.isupper() or is_heading(sentence) or _GLUED.search(sentence):
        return False
    depth = 0
    for ch in sentence:  # a ")" before its "(": the sentence starts inside a bracket (a fragment of one)
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    if depth:  # a "(" left open: the sentence ends inside a bracket
        return False
    return reads_as_prose(sentence)


def reads_as_prose(sentence: str) -> bool:
    """Whether most of the sentence's tokens are words, not numbers, symbols, paths or settings
    (a configuration file's "gnuplot*background: black gnuplot*textGray: white …")."""
    toks = _TOKEN.findall(sentence)
    return bool(toks) and sum(1 for t in toks if _WORDISH.match(t)) >= _PROSE * len(toks)


# a statement that leans on the one before it ("This restriction…", "In that case…") or points
# elsewhere in the document ("listed above") makes a poor finding: a finding is read alone
_LEANS_BACK = re.compile(r"^(?:this|that|these|those|it|its|they|their|them|he|his|she|her|such|so|both|"
                         r"in (?:that|this|such) case|in addition|instead|however|also|otherwise|then|the latter|"
                         r"the former|the same)\b", re.I)
_POINTS_AWAY = re.compile(r"\b(?:above|below|the following)\b", re.I)  # "listed above", "see below"
# … or to another part ("See also set view (p. 212), and set zeroaxis (p. 225).": the "statement"
# gnuplot's manual gave its Commands chapter): focus.points_elsewhere


@lru_cache(maxsize=8192)
def unit_statements(text: str) -> tuple[tuple[str, str, str | None], ...]:
    """(statement, its title_key padded with spaces, the statement with the one right after it
    when that is a statement too, else None) of one text unit, in order, quoted as the text has
    them; units recur across communities and levels, so each is read once."""
    spans = split_sentences(text)
    sents = [clean(text[a:b]) for a, b in spans]
    ok = [is_statement(x) for x in sents]
    return tuple((x, f" {title_key(x)} ", clean(text[spans[i][0]:spans[i + 1][1]]) if i + 1 < len(sents) and ok[i + 1]
                  else None) for i, x in enumerate(sents) if ok[i])


@lru_cache(maxsize=1)
def _hasher():
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(stop_words="english", alternate_sign=False, norm=None, n_features=2 ** 20)


@lru_cache(maxsize=8192)
def _unit_counts(text: str) -> tuple:
    """Hashed term counts of a unit's statements, (term hashes, counts) per statement (tokenised
    once per unit; rows kept as arrays: slicing a sparse matrix row by row costs more than the rest)."""
    m = _hasher().transform([s for s, _, _ in unit_statements(text)])
    return tuple((m.indices[a:b], m.data[a:b]) for a, b in zip(m.indptr[:-1], m.indptr[1:]))


def _candidates(context: dict, names: list[str]) -> tuple[list[tuple[int, str, int | None]], object]:
    """(tier, statement, text unit human_readable_id) of the community's units, each once, and
    their hashed term counts. Tier 0 names one of `names` and reads alone (a report talks about
    its own entities, in sentences that stand by themselves), 1 names one but leans on the
    sentence before it or points elsewhere, 2 and 3 name none."""
    import numpy as np

    keys = [f" {title_key(n)} " for n in names if title_key(n)]
    cands, rows, seen = [], [], set()
    for u in context.get("text_units") or []:
        text, hrid = u.get("text") or "", u.get("human_readable_id")
        counts = None
        for i, (sent, key, follow) in enumerate(unit_statements(text)):
            if key in seen:
                continue
            seen.add(key)
            counts = _unit_counts(text) if counts is None else counts
            tier = 2 * (not any(k in key for k in keys)) + bool(_LEANS_BACK.match(sent) or _POINTS_AWAY.search(sent)
                                                                or points_elsewhere(sent))
            cands.append((tier, sent, None if hrid is None else int(hrid), follow))
            rows.append(counts[i])
    if not cands:
        return [], None
    indptr = np.cumsum([0] + [len(i) for i, _ in rows])
    return cands, (np.concatenate([i for i, _ in rows]), np.concatenate([d for _, d in rows]), indptr)


def central_statements(context: dict, k: int, names: list[str]) -> list[tuple[str, int | None, str | None]]:
    """Up to k statements of the community's units, central and distinct (MMR over TF-IDF; see
    the module docstring), most central first, with the unit each is quoted from and the
    statement quoted with the one that follows it there (None when that is no statement or is
    a finding itself)."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    cands, counts = _candidates(context, names)
    if not cands:
        return []
    tier = np.array([c[0] for c in cands], dtype=float)
    pool = [c[1:] for c in cands]
    hashes, data, indptr = counts
    cols, inv = np.unique(hashes, return_inverse=True)  # the hashed terms present, numbered 0..
    m = sp.csr_matrix((1.0 + np.log(data.astype(np.float64)), inv, indptr),
                      shape=(len(pool), len(cols)))  # sublinear tf
    idf = np.log((1 + len(pool)) / (1 + np.bincount(inv, minlength=len(cols)))) + 1.0  # scikit-learn's smoothed idf
    m = normalize(m.multiply(idf).tocsr())
    sim = (m @ m.T).toarray()
    best_tier = tier == tier.min()
    central = sim[:, best_tier].mean(axis=1)  # cosine to the best tier's centroid, up to its norm
    central = central / (central.max() or 1.0)
    central -= 10.0 * tier  # a lower tier only once the better ones are used up
    units = np.array([-1 if u is None else u for _, u, _ in pool])
    chosen: list[int] = []
    blocked = np.zeros(len(pool), dtype=bool)  # taken, or its unit has given _PER_UNIT findings
    novelty = np.zeros(len(pool))  # each candidate's largest similarity to a chosen one
    while len(chosen) < k and not blocked.all():
        gain = np.where(blocked, -np.inf, _MMR_LAMBDA * central - (1 - _MMR_LAMBDA) * novelty)
        best = int(np.argmax(gain))
        chosen.append(best)
        blocked[best] = True
        if units[best] >= 0 and sum(units[i] == units[best] for i in chosen) >= _PER_UNIT:
            blocked |= units == units[best]
        blocked |= sim[best] >= _RESTATEMENT  # a sentence a text repeats with a word changed: one finding
        novelty = np.maximum(novelty, sim[best])
    taken = [pool[i][0] for i in chosen]
    return [(sent, unit, None if pair and any(t != sent and t in pair for t in taken) else pair)
            for sent, unit, pair in (pool[i] for i in chosen)]


def _rating(entities: list[dict], coverage: dict | None) -> tuple[float, str]:
    """GraphRAG's 0–10 "impact" as how much of the corpus the community covers: 10 × √(its text
    units ÷ the index's); without those counts, its entities' number and degree (as before)."""
    if coverage and coverage.get("of"):
        n, of = int(coverage.get("text_units") or 0), int(coverage["of"])
        share = min(1.0, n / of)
        r = round(10 * math.sqrt(share), 1)
        return r, (f"Rating {r} = 10 × √({n} text units ÷ the index's {of}): the community covers "
                   f"{share:.1%} of the indexed text.")
    n = len(entities)
    mean_deg = sum(float(e.get("degree") or 0) for e in entities) / n if n else 0.0
    s, d = 1 - math.exp(-n / 10), 1 - math.exp(-mean_deg / 5)
    r = round(10 * (0.5 * s + 0.5 * d), 1)
    return r, (f"Rating {r} = 10 × (0.5 × size term {s:.2f} + 0.5 × degree term {d:.2f}): size term "
               f"1 − e^(−{n}/10) for the {n} entities reported on, degree term 1 − e^(−{mean_deg:.1f}/5) for their "
               f"mean degree {mean_deg:.1f} in the whole graph.")


def _label(sentence_key: str, names: list[tuple[str, str]], show) -> str:
    """A finding's short label: the community entities its sentence names (as the text writes them)."""
    named = [show(title) for title, key in names if key in sentence_key][:3]
    return _join(named) if named else ""


def _sub_themes(context: dict, pool: list[tuple[str, int | None, str | None]], want: int) -> list[tuple]:
    """(document part, statement, unit, pair, the part's units) for the parts the community's units
    are in, most units first: each part's best-ranked statement in `pool` (MMR order)."""
    from collections import Counter

    part_of = {int(u["human_readable_id"]): u["section"] for u in context.get("text_units") or []
               if u.get("section") and u.get("human_readable_id") is not None}
    sizes = Counter(part_of.values())
    if len(sizes) < 2:  # one part: its statements are findings of their own
        return []
    out, used = [], set()
    for part, _ in sizes.most_common():
        best = next((i for i, (_, unit, _) in enumerate(pool) if i not in used and part_of.get(unit) == part), None)
        if best is None:
            continue
        used.add(best)
        sent, unit, pair = pool[best]
        members = [unit] + [u for u, p in part_of.items() if p == part and u != unit]
        out.append((part, sent, unit, pair, members))
        if len(out) >= want:
            break
    return out


def write_report(context: dict, cfg: Config) -> dict:
    """A GraphRAG-shaped report dict for one community context (engines/base.py).

    title: the community's key phrases (`key_phrases`, c-TF-IDF of its units against the other
    communities of its level, index/reports.py), as the text writes them; its top entities when
    it has none. findings: one per document part its units are in (`section` of a unit: "R FAQ
    › R and Emacs"), most units first, each that part's most central statement citing the
    statement's unit and the part's other units; then the community's other central statements.
    summary: the share of the index it covers and its largest parts, then its most central
    statements. rating: 10 × √(share of the index's text units)."""
    rcfg = cfg.reports
    ents = sorted(context.get("entities") or [],
                  key=lambda e: (-int(e.get("degree") or 0), int(e.get("human_readable_id") or 0)))
    texts = [u.get("text") or "" for u in context.get("text_units") or []]
    titles = [str(e.get("title") or "") for e in ents if e.get("title")]
    shown: dict[str, str] = {}

    def show(title: str) -> str:
        if title not in shown:
            shown[title] = _display(title, texts)
        return shown[title]

    phrases = [show(p) for p in (context.get("key_phrases") or [])[:3]]
    top = [show(t) for t in titles[:3]]
    title = _join(phrases) if phrases else (_join(top) if top else f"Community {context.get('community', '')}".strip())
    want = min(max(1, int(rcfg.max_findings)), max(3, 3 + len(ents) // 5))
    names = [(t, f" {title_key(t)} ") for t in titles[:_NAMED] if title_key(t)]
    pool = central_statements(context, want * 2, titles[:_NAMED])
    findings, central, taken = [], [], set()
    for part, sent, unit, pair, members in _sub_themes(context, pool, want):
        findings.append({"summary": part, "explanation": f"{closed(pair or sent)} {cite_sources(members)}".strip()})
        taken.add(sent)
    for sent, unit, pair in pool:
        if len(findings) >= want:
            break
        if sent in taken:
            continue
        words, cite = sent.split(), cite_sources([] if unit is None else [unit])
        label = _label(f" {title_key(sent)} ", names, show) or " ".join(words[:8]).rstrip(",;:.!?") + ("…" if len(words) > 8 else "")
        findings.append({"summary": label, "explanation": f"{closed(pair or sent)} {cite}".strip()})
    for sent, unit, _ in pool[:max(1, int(rcfg.summary_sentences))]:
        central.append(f"{closed(sent)} {cite_sources([] if unit is None else [unit])}".strip())
    coverage = context.get("coverage") or {}
    parts = [f.get("summary") for f in findings[:3] if " › " in str(f.get("summary"))]
    lead = f"This community is about {_join(phrases or top)}" if (phrases or top) else ""
    if lead and coverage.get("of"):
        lead += f", in {int(coverage.get('text_units') or 0)} of the index's {int(coverage['of'])} text units"
    if lead and parts:
        lead += f", mostly {_join(parts)}"
    summary = " ".join([lead + "." if lead else ""] + central).strip()
    rating, why = _rating(ents, coverage)
    return {"title": title, "summary": summary, "findings": findings, "rating": rating, "rating_explanation": why}
