"""Key phrases of groups of texts: class-based TF-IDF, as BERTopic names its topics.

A section of a document or a community of the graph is a *class*: the texts of its units
together. A phrase names the class when it is frequent there and rare in the other classes:
c-TF-IDF weighs a term's frequency in the class (its count over the class's words) by
log(1 + A / f), A the mean number of words per class and f the term's count in all classes
(Grootendorst 2022, BERTopic). Phrases are the 1–2 word n-grams of scikit-learn's
CountVectorizer (English stop words out, words of two letters or more, no digits), counted
once per unit: a class is a set of units, so overlapping classes (the levels of a hierarchy,
sections sharing a unit) reuse one count matrix instead of tokenising again.
"""
from __future__ import annotations

import re

# addresses name no theme: their "https", "html", "www" would top a section's phrases
_ADDRESSES = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+|\S+@\S+\.\w+|(?:/[\w.-]+){2,}/?")
# a word of two letters or more, no digits; "add-on" and "package's" stay one word
_TOKEN = r"(?u)\b[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*[^\W\d_]\b"
_UNIT_CHARS = 4000  # text of one unit counted at most (bounds the work on run-on units)


def unit_counts(texts: list[str]):
    """(unit × phrase count matrix (CSR), the phrases), addresses removed first."""
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(ngram_range=(1, 2), stop_words="english", lowercase=True, token_pattern=_TOKEN,
                          dtype=np.float64)
    try:
        counts = vec.fit_transform([_ADDRESSES.sub(" ", t[:_UNIT_CHARS]) for t in texts])
    except ValueError:  # no phrase at all (empty texts, only stop words)
        return None, []
    return counts.tocsr(), vec.get_feature_names_out()


def class_phrases(counts, terms, classes: list[list[int]], top: int = 5) -> list[list[str]]:
    """The `top` most distinctive phrases of each class (a list of row indices of `counts`),
    against the other classes given; a phrase said once in its class names nothing."""
    import numpy as np
    import scipy.sparse as sp

    if counts is None or not classes:
        return [[] for _ in classes]
    rows = [i for c in classes for i in c]
    cols = [k for k, c in enumerate(classes) for _ in c]
    member = sp.csr_matrix((np.ones(len(rows)), (cols, rows)), shape=(len(classes), counts.shape[0]))
    per_class = (member @ counts).tocsr()
    freq = np.asarray(per_class.sum(axis=0)).ravel()
    words = np.asarray(per_class.sum(axis=1)).ravel()
    idf = np.log(1.0 + max(1.0, float(words.mean())) / np.maximum(freq, 1.0))
    out = []
    for r in range(per_class.shape[0]):
        lo, hi = per_class.indptr[r], per_class.indptr[r + 1]
        idx, data = per_class.indices[lo:hi], per_class.data[lo:hi]
        if not len(idx):
            out.append([])
            continue
        scores = data / max(1.0, data.sum()) * idf[idx] * (data >= 2)
        picked: list[str] = []
        for j in np.argsort(-scores, kind="stable")[: top * 6]:
            if scores[j] <= 0:
                break
            phrase = str(terms[idx[j]])
            if any(phrase in p or p in phrase for p in picked):
                continue  # "package" beside "debian package": one of them
            picked.append(phrase)
            if len(picked) == top:
                break
        out.append(picked)
    return out
