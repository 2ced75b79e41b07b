"""`extract_units`: the offline engine's answer to `Engine.extract_graph` for one batch.

Mentions of every unit (mentions.py) are pooled over the batch, key phrases selected by
TF-IDF, lone given names merged into full person names, and each unit then reports its
entities (with description and type) and the relationships between entities sharing a
sentence, in GraphRAG's per-unit format (engines/base.py).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

from provrag.config import Config
from provrag.engines.offline.extract.lexicon import (
    ABSTRACT_SUFFIXES,
    DEMONYM_SUFFIXES,
    GEO_PREPS,
    GEO_WORDS,
    SPEECH_VERBS,
    stop_words,
)
from provrag.engines.offline.extract.mentions import name_spans, phrase_runs, type_of
from provrag.engines.offline.extract.text import trim
from provrag.engines.offline.extract.tokens import Batch
from provrag.text.words import title_key

_WINDOW = 8  # a "sentence" naming more entities than this is a list or a table row


def extract_units(units: list[tuple[str, str]], cfg: Config) -> list[dict]:
    """Entities and relationships of each (unit_id, text), GraphRAG's format, input order."""
    ecfg = cfg.extract
    cap = int(ecfg.max_entities_per_unit)
    max_phrases = int(ecfg.keyphrases_per_unit)
    desc_chars = int(ecfg.description_max_chars)
    stop = stop_words()
    b = Batch(units, stop)

    # 1. mentions per unit: (sentence, key, surface, kind, token position) + type cues per key;
    #    phrase runs per unit: (sentence, words, token position)
    mentions: list[list[tuple[int, str, str, str, int]]] = []
    cues: dict[str, Counter] = defaultdict(Counter)
    runs_all: list[list[tuple[int, list[str], int]]] = []
    for u, tl in enumerate(b.toks):
        ms, rs = [], []
        for si, toks in enumerate(tl):
            taken: set[int] = set()
            for s0, s1, hon in name_spans(toks, b, stop):
                words = [t.text for t in toks[s0:s1]]
                acr = s1 - s0 == 1 and toks[s0].acr
                surface = words[0][:-1] if acr and words[0].endswith("s") and words[0][:-1].isupper() else " ".join(words)
                key = title_key(surface)
                if not key:
                    continue
                ms.append((si, key, surface, "acronym" if acr else "name", s0))
                taken.update(range(s0, s1))
                c = cues[key]
                c["n"] += 1
                c["hon"] += hon
                prev = toks[s0 - 1].low if s0 and not toks[s0].brk else ""
                nxt = [t.low for t in toks[s1:s1 + 2] if not t.brk or t is toks[s1]]
                c["speech"] += prev in SPEECH_VERBS or any(w in SPEECH_VERBS for w in nxt)
                # "in Dulce", "the Dulce base": place cues (a following place noun counts double)
                c["geo"] += (prev in GEO_PREPS) + 2 * (s1 < len(toks) and not toks[s1].brk
                                                      and toks[s1].text.islower() and toks[s1].low in GEO_WORDS)
                c["the"] += prev == "the"
                c["attr"] += (s1 < len(toks) and not toks[s1].brk and toks[s1].text.islower()
                              and toks[s1].low not in stop)
            for a, e in phrase_runs(toks, taken, b, stop):
                rs.append((si, [toks[k].low for k in range(a, e)], a))
        mentions.append(ms)
        runs_all.append(rs)

    # 2. key phrases: the longest suffix (≤ 3 words) of each run — the head noun ends an
    #    English noun phrase — shortened to a nested suffix the batch uses more often
    #    ("sterile briefing room" → "briefing room"), plural → singular when the batch has both
    suffix_freq = Counter()
    for rs in runs_all:
        for _, words, _ in rs:
            for k in range(1, min(3, len(words)) + 1):
                suffix_freq[" ".join(words[-k:])] += 1
    unit_phrases: list[Counter] = []
    phrase_sent: list[dict[str, list[tuple[int, int]]]] = []  # (sentence, token position)
    phrase_surf: dict[str, Counter] = defaultdict(Counter)
    for rs in runs_all:
        tf, where = Counter(), defaultdict(list)
        for si, words, pos in rs:
            w = words[-3:]
            while len(w) > 2 and suffix_freq[" ".join(w[1:])] > suffix_freq[" ".join(w)]:
                w = w[1:]
            if len(w) == 1 and (w[0] in stop or len(w[0]) < 4 or w[0].endswith(ABSTRACT_SUFFIXES)
                                or not (b.head_cue[w[0]] or w[0].endswith("s"))):
                continue  # a one-word phrase must be a concrete-ish noun: seen after a determiner, or plural
            p = _singular(" ".join(w), suffix_freq)
            phrase_surf[p][" ".join(w)] += 1
            tf[p] += 1
            where[p].append((si, pos))
        unit_phrases.append(tf)
        phrase_sent.append(where)

    # 3. lone given names / surnames → the one person name of the batch they belong to
    person_names: dict[str, set[str]] = defaultdict(set)
    all_names = {k for ms in mentions for _, k, _, kind, _ in ms if kind == "name"}
    for k in all_names:
        parts = k.split()
        if len(parts) >= 2 and type_of(parts, cues[k], b, True, False) == "PERSON":
            person_names[parts[0]].add(k)
            person_names[parts[-1]].add(k)
    alias = {k: next(iter(person_names[k])) for k in all_names
             if " " not in k and len(person_names.get(k, ())) == 1
             and type_of([k], cues[k], b, True, False) in ("PERSON", "CONCEPT")}
    for k, full in alias.items():
        cues[full].update(cues[k])
    name_surf: dict[str, Counter] = defaultdict(Counter)
    for ms in mentions:
        for _, key, surface, _, _ in ms:
            if title_key(surface) == alias.get(key, key):
                name_surf[key][surface] += 1
    name_keys = {alias.get(k, k) for ms in mentions for _, k, _, _, _ in ms}

    # 4. selection: TF-IDF over the batch × log(1 + batch count) (a phrase the batch repeats is
    #    more likely a term than a one-off) × length bonus (multi-word phrases are more specific)
    df = Counter(p for tf in unit_phrases for p in tf)
    cf = Counter()
    for tf in unit_phrases:
        cf.update(tf)
    n = max(1, len(units))
    score = {p: (math.log((1 + n) / (1 + df[p])) + 1) * math.log1p(cf[p]) * (1 + 0.5 * p.count(" ")) for p in cf}
    ranked = [sorted((p for p in tf if p not in name_keys), key=lambda p: (-tf[p] * score[p], p)) for tf in unit_phrases]
    vocab = {p for r in ranked for p in r[:max_phrases]}

    results = []
    for u, (_, text) in enumerate(units):
        spans = b.sents[u]
        sents_of: dict[str, list[tuple[int, int]]] = defaultdict(list)  # (sentence, position)
        kinds: dict[str, str] = {}
        for si, key, _, kind, pos in mentions[u]:
            key = alias.get(key, key)
            kinds.setdefault(key, kind)
            sents_of[key].append((si, pos))
        # a demonym only ever used before a noun ("British subjects") is an adjective, not a name
        keys = [k for k in kinds if not (kinds[k] == "name" and " " not in k and k.endswith(DEMONYM_SUFFIXES)
                                         and cues[k]["attr"] == cues[k]["n"])][:cap]
        for p in ranked[u]:
            if len(keys) >= cap:
                break
            if p in vocab:
                keys.append(p)
                kinds[p] = "phrase"
                sents_of[p] = phrase_sent[u][p]
        records, title_of = [], {}
        for key in keys:
            kind, sids = kinds[key], sorted({si for si, _ in sents_of[key]})
            surf = name_surf.get(key) or phrase_surf.get(key)  # the most frequent surface form
            title = sorted(surf.items(), key=lambda x: (-x[1], x[0]))[0][0] if surf else key
            title_of[key] = title
            desc = " ".join(text[spans[s][0]:spans[s][1]] for s in sids[:2])
            records.append({"title": title, "description": trim(desc, desc_chars),
                            "type": type_of(title.split(), cues[key], b, kind != "phrase", kind == "acronym")})
        # 5. relationships: entities sharing a sentence; weight = number of such sentences
        by_sent: dict[int, dict[str, int]] = defaultdict(dict)  # sentence -> entity -> first position
        for key in keys:
            for si, pos in sents_of[key]:
                by_sent[si][key] = min(pos, by_sent[si].get(key, pos))
        pairs: dict[tuple[str, str], list[int]] = {}  # first-seen orientation -> sentences
        oriented: dict[tuple[str, str], tuple[str, str]] = {}
        for si in sorted(by_sent):
            ks = sorted(by_sent[si], key=lambda k: (by_sent[si][k], k))
            # a "sentence" naming more than _WINDOW entities is a list or a table row (PDF text
            # without punctuation): there each entity is linked to its next _WINDOW neighbours
            # in reading order instead of to all of them, so lists do not become huge cliques
            reach = len(ks) if len(ks) <= _WINDOW else _WINDOW
            for i in range(len(ks)):
                for j in range(i + 1, min(len(ks), i + 1 + reach)):
                    pair = oriented.setdefault((min(ks[i], ks[j]), max(ks[i], ks[j])), (ks[i], ks[j]))
                    pairs.setdefault(pair, []).append(si)
        rels = [{"source": title_of[a], "target": title_of[c], "weight": float(len(ss)),
                 "description": trim(" ".join(text[spans[s][0]:spans[s][1]] for s in ss[:2]), desc_chars)}
                for (a, c), ss in pairs.items()]
        results.append({"entities": records, "relationships": rels})
    return results


def _singular(p: str, freq: Counter) -> str:
    """"protocols" → "protocol" when the batch also uses the singular (so both merge)."""
    for plural, single in (("ies", "y"), ("es", ""), ("s", "")):
        if p.endswith(plural) and not p.endswith("ss"):
            cand = p[: -len(plural)] + single
            if freq[cand] > 0:
                return cand
    return p
