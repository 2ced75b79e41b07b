"""`summarize`: the offline engine's answer to `Engine.summarize_descriptions`.

An entity or relationship met in several text units has several descriptions; GraphRAG asks
an LLM to merge them. Offline, the merged description is extractive: the most central of
their sentences, so every word of it is still a quote of the corpus.
"""
from __future__ import annotations

import math
import re
from collections import Counter

from provrag.config import Config
from provrag.engines.offline.extract.lexicon import stop_words
from provrag.engines.offline.extract.text import sentences, trim
from provrag.text.words import title_key


def summarize(title: str, descriptions: list[str], cfg: Config) -> str:
    """Extractive summary: the description sentences closest to their centroid, kept in first-seen
    order, up to [extract].description_max_chars.

    Descriptions are split into sentences and de-duplicated first (overlapping text units
    yield the same sentence twice). Centrality by shared content words (a bag-of-words
    centroid) is written by hand: inputs are a handful of sentences, where a vectorizer's
    set-up cost would dominate.
    """
    limit = int(cfg.extract.description_max_chars)
    stop = stop_words()
    seen, sents = set(), []
    for d in descriptions:
        d = " ".join(str(d or "").split())
        for a, b in sentences(d):
            sent = d[a:b].rstrip("…").strip()
            key = title_key(sent)
            if key and key not in seen:
                seen.add(key)
                sents.append(sent)
    if not sents:
        return ""
    bags = [{w for w in re.findall(r"\w+", x.lower()) if w not in stop} for x in sents]
    dfreq = Counter(w for bag in bags for w in bag)
    score = [sum(dfreq[w] for w in bag) / math.sqrt(len(bag) or 1) for bag in bags]
    chosen, size = [], 0
    for i in sorted(range(len(sents)), key=lambda i: (-score[i], i)):
        if chosen and size + len(sents[i]) + 1 > limit:
            continue
        chosen.append(i)
        size += len(sents[i]) + 1
    return trim(" ".join(sents[i] for i in sorted(chosen)), limit)
