"""Claim checking against an index: evidence by two routes, one verdict per unit, metrics.

For each claim of an answer (provrag/verify/claims.py):
- *cited* evidence: the text units its own `[Data: …]` citations reach (CONTRACT.md §4, through
  provrag/query/resolve.py), resolved one citation id at a time so each id's contribution is known
  (needed for ALCE's citation precision), the best `top_k_cited` per id by claim-aware ranking;
- *retrieved* evidence: the top `top_k_retrieved` units of the whole index by hybrid retrieval
  (provrag/query/retrieve.py: BM25 + embeddings), so a true claim with a wrong citation — or none —
  is still found.
Every unit is judged on its own (its best span; never one joined premise, which would lose
the page), and the claim's verdict follows RefChecker: *supported* if any unit supports it,
else *contradicted* if any contradicts it, else *unsupported*.

Metrics per answer: verdict counts; `cited_supports` per claim (one of its own cited units
supports it); ALCE citation recall = share of claims whose citations support them; ALCE citation
precision = share of citations (one cited id of one claim) that help: with single-unit verdicts
a citation helps exactly when one of the units it reaches supports the claim (ALCE's "the others
do not entail it without this one" case reduces to that), with the judge in place of ALCE's NLI.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.results import Verdict
from provrag.verify.claims import Claim, split_claims

LABEL_ORDER = {"supported": 0, "contradicted": 1, "unsupported": 2}
SOURCE_KEYS = ("document", "path", "page_start", "page_end", "page_label", "text_unit_id", "quote", "via", "score")


def _page_label(labels, page):
    try:
        if labels is not None and page and 1 <= int(page) <= len(labels):
            return labels[int(page) - 1]
    except (TypeError, ValueError):
        pass
    return None


def fetch_units(reader, ids: list[str]) -> dict[str, dict]:
    """Unit text + page span + document title/path/page labels for the given ids (one query)."""
    ids = [i for i in dict.fromkeys(ids) if i]
    if not ids:
        return {}
    sql = """
        SELECT t.id, t.human_readable_id, t.text, t.page_start, t.page_end, t.char_start,
               d.title, d.path, d.page_labels, t.document_id
        FROM text_units t LEFT JOIN documents d ON d.id = t.document_id
        WHERE t.id IN (SELECT unnest(?::VARCHAR[]))
    """
    out = {}
    for r in reader.con.execute(sql, [ids]).fetchall():
        out[r[0]] = {"id": r[0], "human_readable_id": r[1], "text": r[2] or "", "page_start": r[3],
                     "page_end": r[4], "char_start": r[5], "document": r[6] or r[7] or r[9] or "(unknown document)",
                     "path": r[7], "page_labels": r[8], "document_id": r[9]}
    return out


def seam_units(units: dict[str, dict]) -> list[dict]:
    """A unit-like record for each pair of the given units that follow each other in one
    document: the text around their boundary (resolve.seam_text), pages of both. A claim
    made of a sentence that runs from one page onto the next is in neither unit whole."""
    from provrag.query.resolve import seam_text

    by_doc: dict = {}
    for u in units.values():
        if u.get("char_start") is not None and u.get("document_id") is not None:
            by_doc.setdefault(u["document_id"], []).append(u)
    out = []
    for us in by_doc.values():
        us.sort(key=lambda u: u["char_start"])
        for a, b in zip(us, us[1:]):
            seam = seam_text(a, b)
            if seam is None:
                continue
            text, cut, offset, _ = seam
            out.append(dict(a, id=f"{a['id']}+{b['id']}", parts=(a["id"], b["id"]), cut=cut, text=text, char_start=offset,
                            page_start=a["page_start"], page_end=b["page_end"]))
    return out


class Judge:
    """The engine's judge, with verdicts cached per (claim, unit) within one run."""

    def __init__(self, engine):
        self.engine = engine
        self.method = "offline" if engine.name == "offline" else f"{engine.name}:{engine.model}".rstrip(":")
        self._cache: dict[tuple, dict] = {}

    def __call__(self, claim: Claim, units: list[dict]) -> list[dict]:
        todo = [u for u in units if (claim.text, claim.focus, u["id"]) not in self._cache]
        if todo:
            verdicts = self.engine.judge(claim.text, [u["text"] for u in todo], focus=claim.focus)
            for u, v in zip(todo, verdicts):
                self._cache[(claim.text, claim.focus, u["id"])] = _normalise_verdict(v, claim.text, u["text"])
        return [self._cache[(claim.text, claim.focus, u["id"])] for u in units]


def _normalise_verdict(v: Verdict, claim: str, text: str) -> dict:
    """Any engine's verdict → label/score/reason/span (a model gives no span: find the best one)."""
    label = v.label if v.label in LABEL_ORDER else "unsupported"
    try:
        score = float(v.score)
    except (TypeError, ValueError):
        score = 0.0
    span = v.span
    if not (isinstance(span, (list, tuple)) and len(span) == 2):
        from provrag.text.similarity import best_span

        _, a, b, _ = best_span(claim, text)
        span = [a, b]
    return {"label": label, "score": round(score, 4), "reason": str(v.reason or "")[:300],
            "span": [int(span[0]), int(span[1])]}


def _source(u: dict, verdict: dict, via: str, route: str) -> dict:
    from provrag.text.sentences import display_quote

    a, b = verdict["span"]
    # one line, as shown; a page number inside a quote across two pages reads as the break it is
    quote = display_quote(u["text"][a:b] if b > a else u["text"][:300],
                          u["page_end"] not in (None, u["page_start"]))
    cs = u.get("char_start")
    return {
        "document": u["document"], "path": u["path"], "page_start": u["page_start"], "page_end": u["page_end"],
        "page_label": _page_label(u.get("page_labels"), u["page_start"]),
        # a seam (a quote across two units) names the unit it starts in, and lists both
        "text_unit_id": u["parts"][0] if "parts" in u else u["id"],
        **({"text_unit_ids": list(u["parts"])} if "parts" in u else {}),
        "text_unit": u["human_readable_id"], "quote": quote, "via": via, "score": verdict["score"],
        "label": verdict["label"], "reason": verdict["reason"], "route": route,
        "char_start": cs + a if cs is not None and b > a else None,
        "char_end": cs + b if cs is not None and b > a else None,
    }


def _rank(sources: list[dict]) -> list[dict]:
    return sorted(sources, key=lambda s: (LABEL_ORDER[s["label"]], -s["score"], str(s["text_unit_id"])))


def verdict_of(labels: list[str]) -> str:
    """RefChecker's rule across units."""
    if "supported" in labels:
        return "supported"
    if "contradicted" in labels:
        return "contradicted"
    return "unsupported"


def _retrieve(reader, query: str, cfg: Config, k: int) -> list[tuple[str, float]]:
    """Top-k (unit id, score) by hybrid retrieval. When the fused scores are not numbers (a query
    whose words are all outside the embedder's vocabulary embeds to a zero vector, and a zero
    vector's cosine is NaN, which breaks the ranking) the BM25 channel alone ranks."""
    import math

    from provrag.store import terms as lexical
    from provrag.query.retrieve import retrieve_units

    try:
        r = retrieve_units(reader, query, cfg, k=k)
        out = [(c["text_unit_id"], float(c.get("score") if c.get("score") is not None else 0.0)) for c in r.candidates]
    except Exception:  # no term table and no embeddings: cited evidence still stands
        out = []
    if any(not math.isfinite(s) for _, s in out):
        try:
            stats = lexical.ensure_terms(reader.con, getattr(reader, "path", None))
            terms, _ = lexical.match_terms(reader.con, query)
            out = [(u, float(s)) for u, s in lexical.bm25(reader.con, stats, terms, limit=k)]
        except Exception:
            out = [(u, s) for u, s in out if math.isfinite(s)]
    return out


def check_claim(reader, claim: Claim, judge: Judge, cfg: Config) -> dict:
    """One claim → its verdict, cited and retrieved evidence, and per-citation support."""
    from provrag.query.citations import Ref
    from provrag.query.resolve import resolve_refs

    vcfg = cfg.verify
    k_cited, k_retr = int(vcfg.top_k_cited), int(vcfg.top_k_retrieved)

    # cited route: one citation id at a time (precision needs each id's own units)
    per_citation: list[tuple[str, int, list[tuple[str, str]]]] = []
    unresolved = []
    for ref in claim.refs:
        for i in dict.fromkeys(ref.ids):
            try:
                sources, unres = resolve_refs(reader, [Ref(ref.kind, [i])], claim.text, top_k=k_cited)
            except Exception as e:  # a broken table must not take the whole check down
                sources, unres = [], [{"kind": ref.kind, "id": i, "reason": str(e).splitlines()[0][:120]}]
            unresolved.extend(unres)
            per_citation.append((ref.kind, i, [(s["text_unit_id"], s.get("via") or "") for s in sources]))

    # retrieved route: the whole index
    query = claim.text if not claim.focus else f"{claim.text} {claim.focus}"
    retrieved = _retrieve(reader, query, cfg, k_retr)

    ids = [uid for _, _, us in per_citation for uid, _ in us] + [uid for uid, _ in retrieved]
    units = fetch_units(reader, ids)
    order = [uid for uid in dict.fromkeys(ids) if uid in units]
    verdicts = dict(zip(order, judge(claim, [units[u] for u in order])))

    cited_vias: dict[str, list[str]] = {}
    for _, _, us in per_citation:
        for uid, via in us:
            if uid in units:
                cited_vias.setdefault(uid, []).append(via)
    retrieved_rank = {uid: n + 1 for n, (uid, _) in enumerate(retrieved) if uid in units}

    # a claim cut by a page break is whole only across two neighbouring units: judge the seam,
    # and keep it where it supports the claim better than either unit alone
    seams = seam_units(units)
    seam_support: set[str] = set()   # units whose seam with a neighbour supports the claim
    for s, v in zip(seams, judge(claim, seams)):
        parts = [verdicts[p] for p in s["parts"]]
        if v["label"] != "supported" or not v["span"][0] < s["cut"] < v["span"][1] \
                or any(p["label"] == "supported" and p["score"] >= v["score"] for p in parts):
            continue  # not supported, not across the boundary, or one unit says it as well
        units[s["id"]], verdicts[s["id"]] = s, v
        order.append(s["id"])
        a, b = s["parts"]
        if a in cited_vias or b in cited_vias:
            cited_vias[s["id"]] = cited_vias.get(a, []) + cited_vias.get(b, [])
        if a in retrieved_rank or b in retrieved_rank:
            retrieved_rank[s["id"]] = min(retrieved_rank.get(a, 1 << 30), retrieved_rank.get(b, 1 << 30))
        seam_support.update(s["parts"])  # the citations of either part take part in the support

    cited = _rank([_source(units[u], verdicts[u], "; ".join(dict.fromkeys(v))[:300], "cited")
                   for u, v in cited_vias.items()])
    evidence = []
    for u in order:
        route = "both" if u in cited_vias and u in retrieved_rank else ("cited" if u in cited_vias else "retrieved")
        via = "; ".join(dict.fromkeys(cited_vias.get(u, [])))[:300]
        if u in retrieved_rank:
            via = (via + "; " if via else "") + f"retrieved #{retrieved_rank[u]} (hybrid search)"
        evidence.append(_source(units[u], verdicts[u], via, route))
    evidence = _rank(evidence)

    labels = [verdicts[u]["label"] for u in order]
    citations = [{"kind": kind, "id": i,
                  "supports": any(uid in seam_support or (uid in verdicts and verdicts[uid]["label"] == "supported")
                                  for uid, _ in us)}
                 for kind, i, us in per_citation]
    return {
        "text": claim.text,
        "verdict": verdict_of(labels),
        "score": max((v["score"] for v in verdicts.values()), default=0.0),
        "method": judge.method,
        "cited": cited,
        "evidence": evidence,
        "cited_supports": any(s["label"] == "supported" for s in cited),
        "citations": citations,
        "unresolved": unresolved,
        "focus": claim.focus,
        "span": list(claim.span),
    }


def summarise(claims: list[dict]) -> dict:
    n = len(claims)
    count = {lab: sum(c["verdict"] == lab for c in claims) for lab in LABEL_ORDER}
    cits = [x for c in claims for x in c.get("citations", [])]
    return {
        "claims": n,
        **count,
        "supported_ratio": round(count["supported"] / n, 4) if n else None,
        # ALCE: every claim counts in recall (an uncited claim has no citation that supports it)
        "citation_recall": round(sum(c["cited_supports"] for c in claims) / n, 4) if n else None,
        "citation_precision": round(sum(x["supports"] for x in cits) / len(cits), 4) if cits else None,
        "cited_claims": sum(bool(c.get("citations")) for c in claims),
        "citations": len(cits),
    }


def verify_answer(reader, answer: str, cfg: Config, question: str | None = None, engine=None,
                  progress=None) -> dict:
    """The verify --json document (CONTRACT.md §5) for one answer over an open index."""
    if engine is None:
        from provrag.engines import get_engine

        engine = get_engine(cfg)
    claims = split_claims(answer, question)
    judge = Judge(engine)
    results = []
    for c in claims:
        results.append(check_claim(reader, c, judge, cfg))
        if progress is not None:
            progress()
    return {"claims": results, "summary": summarise(results), "method": judge.method}
