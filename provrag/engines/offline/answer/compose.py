"""The offline engine's local/basic answer: the selected sentences written out, each followed by
the citation of the record it came from.

No model writes anything here. The citations use the same `[Data: …]` grammar GraphRAG's
models produce, so the resolver and verify treat offline and LLM answers alike. A sentence
that continues the one before it ("This was …", "They also …") is shown after that one.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.engines.offline.answer.focus import focus
from provrag.engines.offline.answer.selection import select
from provrag.engines.offline.answer.wording import NO_ANSWER, closed, normalised


def compose(picked: list[dict], records: list[dict]) -> str:
    """Sentences each followed by its record's citation (repeated per sentence, as GraphRAG's
    answers do, so every sentence resolves to its own source)."""
    parts: list[str] = []
    for text, cite in answer_texts(picked, records):
        parts.append(closed(text) + (f" {cite}" if cite else ""))
    return " ".join(parts)


def answer_texts(picked: list[dict], records: list[dict]) -> list[tuple[str, str]]:
    """(text, citation) per picked sentence; a sentence that continues the one before it
    ("This was …", "They also …") is shown with it, unless that one is in the answer already; a
    sentence of a definition under its term (text/definitions.py), the first of its entry's only."""
    shown = {normalised(x) for p in picked for x in (p["sentence"], p.get("plain", ""))} - {""}
    terms_shown: set[str] = set()
    out = []
    for p in picked:
        cite = p.get("citation") or records[p["record"]].get("citation", "")
        entry = p.get("entry")
        text = p.get("plain", p["sentence"]) if entry else p["sentence"]
        ante = p.get("antecedent")
        if ante and len(ante.split()) >= 4 and normalised(ante) not in shown:
            text = f"{closed(ante)} {text}"
            shown.add(normalised(ante))
        if entry:
            # the definition's first sentence, or one shown after it, names the term already
            if entry not in terms_shown and p["sentence"] != p.get("plain") and entry not in text:
                text = f"{entry}: {text}"
            terms_shown.add(entry)
        out.append((text, cite))
    return out


def answer(question: str, context: list[dict], cfg: Config, idf: dict[str, float] | None = None,
           qterms: list[str] | None = None, info: dict | None = None, reader=None, gate: float | None = None,
           unseen: list[str] | None = None) -> str:
    """Local/basic search: the best sentences of the context records, each with its citation.

    idf/qterms: the index-wide idf of the question's (spelling-corrected) terms, when the
    caller has them; otherwise idf is estimated from the context itself. `reader`: the learned
    reader (reading.py decides what answers), or None (the hand-set scores and focus rules);
    `gate`: the best passage's word coverage of the question, which the reader's decision weighs;
    `unseen`: the question's terms the index holds nowhere (the reader's asked-fact rule reads them).
    """
    n = int(cfg.search.answer_sentences)
    if reader is not None:
        from provrag.engines.offline.answer.reading import read

        picked, _ = read(question, context, cfg, reader, idf, qterms, info, gate, unseen)
    else:
        picked = focus(question, select(question, context, n, idf, qterms=qterms, cfg=cfg, info=info), context,
                       idf or {}, n)
    if info is not None:
        info["sentences"] = [{"record": p["record"], "score": p["score"], "cosine": p.get("cosine"), "maxsim": p.get("maxsim"),
                              "paragraph_cosine": p.get("paragraph_cosine"), "step": bool(p.get("step")),
                              "sentence": p["sentence"][:200], "whole": not p.get("citation"), "prob": p.get("prob")}
                             for p in picked]
    if not picked:
        return NO_ANSWER
    return compose(picked, context)
