"""GraphRAG's global search: map-reduce over community reports.

Reports of level ≤ [search] global_level are scored against the question in SQL (BM25 over
term counts taken with regexes inside DuckDB), the best are packed into batches, each batch is
mapped to scored points citing `[Data: Reports (…)]` (and the text unit a finding quotes), and
the best points are reduced into the answer. A broad question ("main themes") has no words to
match a report by: it reads the top-level reports (the broadest communities), largest first.

How relevant the best report is to the question is in the result's engine_details, for the
caller to decide whether anything answers it. `relevance` (0–1): of the best five points'
sentences, the largest share of the question's content-term weight one of them holds — each
term weighted by its idf in the index, a term the index never saw by the largest idf there is
(query/answerable.py's lexical coverage, as ask measures retrieved units), so "Kubernetes
ingress" questions over Debian manuals score low although the word "configure" matches. For a
broad question it is 1 when any report gives a theme. `best_reports` are that point's reports,
`passages` the best points' sentences, best first, and `query_terms`, `idf`, `n_units`,
`spelling` the question as the index reads it (for answerable.assess, say). Each point's own
score (0–100) is the engine's: offline, the idf-weighted share of the index terms of the
question its sentence holds; a model's own rating.
"""
from __future__ import annotations

import math
import re

from provrag.config import Config
from provrag.engines.base import QueryTerms
from provrag.query.context import ABSTENTION, CLOSEST, SearchResult
from provrag.query.themes import specific_subject
from provrag.query.why import report_why
from provrag.text.questions import is_broad
from provrag.text.words import STOP_WORDS, WORD, term_stem

_CHARS_PER_TOKEN = 4  # batching estimate (no tokenizer load per report: ~4 chars per cl100k token in English)
_RELEVANCE_POINTS = 5  # the best points whose sentences the relevance measure reads
_CITATION = re.compile(r"\[Data:[^\]]*\]", re.I)  # a point's citation, no words of its sentence


def _prefix(word: str) -> str:
    stem = term_stem(word)
    common = 0
    for a, b in zip(word, stem):
        if a != b:
            break
        common += 1
    return word[:max(common, min(len(word), 3))]


def score_reports(con, question: str, level: int) -> tuple[list[dict], str]:
    """Reports of level ≤ `level` (all levels if none), with a BM25 score against the question."""
    words, written = [], []   # the prefixes matched, and the question's word each stands for
    for m in WORD.finditer(question.lower()):
        w = m.group(0)
        if w in STOP_WORDS or len(w) < 2:
            continue
        p = _prefix(w) if not w[0].isdigit() else w
        if p not in words:
            words.append(p)
            written.append(w)
    where = "WHERE level <= ?"
    n_at = con.execute("SELECT count(*) FROM community_reports WHERE level <= ?", [int(level)]).fetchall()[0][0]
    note = f"reports of level <= {level}"
    if not n_at:
        where, note = "WHERE ? IS NOT NULL", "all reports (none at the configured level)"
    tf_cols = "".join(f", len(regexp_extract_all(txt, '\\b{re.escape(w)}')) AS tf{i}" for i, w in enumerate(words))
    rows = con.execute(f"""
        WITH r AS (SELECT community, level, title, rank, size,
                          lower(coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || coalesce(full_content, '')) AS txt
                   FROM community_reports {where})
        SELECT community, level, title, rank, len(string_split_regex(txt, '\\s+')) AS dl, size{tf_cols} FROM r
    """, [int(level)]).fetchall()
    if not rows:
        return [], note
    n = len(rows)
    avgdl = sum(r[4] for r in rows) / n or 1.0
    dfs = [sum(1 for r in rows if r[6 + i] > 0) for i in range(len(words))]
    out = []
    for r in rows:
        s, by_word = 0.0, {}
        for i, df in enumerate(dfs):
            tf = r[6 + i]
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                by_word[written[i]] = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * r[4] / avgdl))
                s += by_word[written[i]]
        out.append({"community": int(r[0]), "level": r[1], "title": r[2], "rank": r[3], "size": r[5], "bm25": s,
                    "terms": by_word})   # each word's share of the BM25 score: why the report ranks (query/why.py)
    top = max((x["bm25"] for x in out), default=0.0)
    for x in out:
        # relevance first; the report's own rating (0–10 "impact") breaks ties, as GraphRAG weighs rank
        lexical, rating = (x["bm25"] / top if top else 0.0) * 0.85, 0.15 * float(x["rank"] or 0) / 10.0
        x["score"] = round(lexical + rating, 6)
        x["components"] = {"bm25": round(x["bm25"], 6), "lexical": round(lexical, 6), "rating": round(rating, 6)}
    out.sort(key=lambda x: (-x["score"], x["community"]))
    return out, note


def fetch_reports(con, communities: list[int]) -> dict[int, dict]:
    if not communities:
        return {}
    rows = con.execute("""
        SELECT community, title, summary, full_content, rank, level, findings, size FROM community_reports
        WHERE community IN (SELECT unnest(?::BIGINT[]))
    """, [list(communities)]).fetchall()
    return {int(r[0]): {"community": int(r[0]), "title": r[1], "summary": r[2], "full_content": r[3],
                        "rank": r[4], "level": r[5], "findings": list(r[6] or []), "size": r[7]} for r in rows}


def question_terms(reader, question: str) -> tuple[QueryTerms, dict]:
    """The question's index terms (spelling fixed) and their BM25 idf, as retrieval reads them,
    and what a caller needs to weigh them (`n_units`, `spelling`)."""
    from provrag.store import terms as lexical

    stats = lexical.ensure_terms(reader.con, getattr(reader, "path", None))
    qterms, fixes = lexical.match_terms(reader.con, question)
    idf = lexical.idf_of(reader.con, stats, qterms)
    return QueryTerms(list(qterms), idf), {"n_units": int(stats.get("n_units") or 0), "spelling": fixes}


def relevance(question: str, points: list[dict], broad: bool, terms: QueryTerms, info: dict) -> dict:
    """How relevant the best report is to the question (see the module docstring): the largest
    share of the question's content-term weight that one of the best points' sentences holds."""
    from provrag.query.answerable import lexical_coverage, term_weights

    top = points[:_RELEVANCE_POINTS]
    passages = [" ".join(_CITATION.sub(" ", str(p.get("description") or "")).split()) for p in top]
    if broad:  # a question about the whole collection: any theme answers it
        covs = [1.0 for _ in passages]
    else:
        weights = term_weights(question, terms.idf, int(info.get("n_units") or 0), info.get("spelling") or {})
        covs = [lexical_coverage(weights, p)[0] for p in passages]
    best = max(range(len(covs)), key=lambda i: (covs[i], -i)) if covs else None
    return {"relevance": round(covs[best], 4) if best is not None else 0.0, "broad": broad,
            "best_reports": list(top[best].get("reports") or []) if best is not None else [],
            "passages": passages, "query_terms": list(terms.terms), "idf": terms.idf, **info}


def _batches(reports: list[dict], batch_tokens: int) -> list[list[dict]]:
    """Reports packed into map batches of about `batch_tokens` tokens each."""
    batches, cur, size = [], [], 0
    for r in reports:
        t = len(r.get("full_content") or "") // _CHARS_PER_TOKEN + 1
        if cur and size + t > batch_tokens:
            batches.append(cur)
            cur, size = [], 0
        cur.append(r)
        size += t
    if cur:
        batches.append(cur)
    return batches


def theme_search(reader, question: str, cfg: Config, engine, trace) -> SearchResult | None:
    """A question about what documents cover, answered in themes (query/themes.py): one
    document's parts when it names one, else the collection's themes with every document
    cited or named as left out. None when the index has no sections (a GraphRAG folder, an
    index made before them): the reports answer alone, as before."""
    from provrag.engines.offline.answer.mapreduce import cited_ids
    from provrag.query.themes import all_documents, collection_themes, document_themes, left_out, named_documents

    con = reader.con
    if not con.execute("SELECT count(*) FROM sections").fetchall()[0][0]:
        return None
    level = int(cfg.search.global_level)
    with trace.stage("exploration") as d:
        documents = all_documents(con)
        named = named_documents(question, documents)
        one = named[0] if len(named) == 1 else None
        if one is not None and one["status"] != "ok":
            answer = f"{one['path']} could not be read ({one.get('error') or one['status']}): nothing in the index covers it."
            d.update({"what": "the document the question names", "named": [one["path"]], "count": 0})
            return SearchResult(answer, "global", abstained=True, abstained_by="coverage", confidence=0.0,
                                engine_details={"named": [one["path"]], "broad": True,
                                                "final": "the document asked about could not be read: no "
                                                         "wider route reads it"})
        themes = document_themes(con, one, level) if one is not None else \
            collection_themes(con, named or documents)
        scope = [one["path"]] if one is not None else [x["path"] for x in (named or documents) if x["status"] == "ok"]
        d["what"] = (f"the parts of {one['path']}, largest first" if one is not None else
                     f"the themes of {'the documents named' if named else 'the collection'}: documents grouped by "
                     "their top-level community report, largest first")
        d["named"] = [x["path"] for x in named]
        d["candidates"] = [{"kind": "section" if one is not None else "report", "id": t.get("section", t["community"]),
                            "title": t["title"], "score": t["score"], "documents": t["documents"]} for t in themes]
        d["count"] = len(themes)
    if not themes:
        return None
    with trace.stage("focus") as d:
        batches = _batches(themes, int(cfg.search.map_batch_tokens))
        d["selected"] = [{"kind": "theme", "key": f"theme/{n}", "id": t["community"], "label": t["title"],
                          "score": t["score"]} for n, t in enumerate(themes)]
        d["batches"] = [[t["title"] for t in b] for b in batches]
    with trace.stage("synthesis") as d:
        terms, term_info = question_terms(reader, question)
        points = [p for b in batches for p in engine.map_points(question, b, terms)]  # in theme order
        body = engine.reduce_answer(question, points, terms)
        if "[data:" not in body.lower() and getattr(engine, "offline", None) is not None:
            # a model that found no theme in them: the offline engine's themes are the floor
            points = [p for b in batches for p in engine.offline.map_points(question, b, terms)]
            body = engine.offline.reduce_answer(question, points, terms)
            d["fallback"] = "the model's answer cited no theme: the offline engine listed them"
        n_docs = len(scope)
        ours = bool(points) and all(p.get("theme") for p in points)  # lines composed here, not a model's prose
        if not ours:
            head, tail = "", ""
        elif one is not None:
            by_file = one["path"].rsplit("/", 1)[-1].startswith(one["title"])  # its title is its file name
            about = ", ".join(x for x in ([] if by_file else [one["path"]])
                              + ([f"{one['n_pages']} pages"] if one.get("n_pages") else []))
            head = f"{one['path'] if by_file else one['title']}{f' ({about})' if about else ''} covers, largest part first:"
            tail = ""
        else:
            head = (f"The {n_docs} document{'s' if n_docs != 1 else ''} "
                    f"{'named' if named else 'indexed'} fall under these themes, largest first:")
            units = cited_ids(body)["Sources"]
            rows = con.execute("""SELECT DISTINCT d.path FROM text_units t JOIN documents d ON d.id = t.document_id
                                  WHERE t.human_readable_id IN (SELECT unnest(?::BIGINT[]))""", [units]).fetchall()
            tail = left_out([x for x in (named or documents)], {r[0] for r in rows})
        if not ours and one is None:  # a model's prose: the files that could not be read are still said
            tail = left_out([x for x in (named or documents) if x["status"] != "ok"], set())
        answer = "\n\n".join(x for x in (head, body, tail) if x)
        d["points"] = [{"description": p.get("description"), "score": p.get("score")} for p in points[:40]]
        d["answer"] = answer
        details = relevance(question, points, True, terms, term_info)
        details["scope"] = scope
        d["relevance"] = details["relevance"]
    confidence = answerability(question, details, cfg, trace)
    # lines composed here from the index's own outline (a document's part titles and the pages they
    # start on) state what the index holds, not claims a judge can find said on a page
    not_claims = "the answer lists documents' parts by their own headings (themes), not claims" if ours else None
    return SearchResult(answer, "global", context=themes, engine_details={"points": points, **details,
                                                                          "not_claims": not_claims},
                        confidence=confidence)


def global_search(reader, question: str, cfg: Config, engine, trace) -> SearchResult:
    scfg = cfg.search
    level = int(scfg.global_level)
    max_reports = int(scfg.global_max_reports)
    batch_tokens = int(scfg.map_batch_tokens)
    broad = is_broad(question)
    if broad and not specific_subject(reader.con, question):
        themed = theme_search(reader, question, cfg, engine, trace)
        if themed is not None:
            return themed
    with trace.stage("exploration") as d:
        terms, term_info = question_terms(reader, question)
        scored, note = score_reports(reader.con, question, level)
        if broad:  # no words to match: the broadest communities, largest first
            largest = max((int(x["size"] or 0) for x in scored), default=0) or 1
            for x in scored:  # a theme is as relevant as the share of the collection it covers
                x["score"] = round(int(x["size"] or 0) / largest, 6)
                x["components"] = {"bm25": x["components"]["bm25"], "size": x["score"]}
                x["terms"] = {}  # no word of the question ranked it: the community's size did
            scored.sort(key=lambda x: (x["level"], -x["score"], -float(x["rank"] or 0), x["community"]))
            note += "; broad question: top level first, largest first"
        d["what"] = f"community reports scored against the question ({note})"
        d["candidates"] = [{"kind": "report", "id": x["community"], "title": x["title"], "score": x["score"],
                            "bm25": round(x["bm25"], 4), "rank": x["rank"], "level": x["level"],
                            "why": report_why(n + 1, x)} for n, x in enumerate(scored[:50])]
        d["count"] = len(scored)
    with trace.stage("focus") as d:
        chosen = (scored if broad else [x for x in scored if x["bm25"] > 0] or scored)[:max_reports]
        texts = fetch_reports(reader.con, [x["community"] for x in chosen])
        reports = []
        for x in chosen:
            r = texts.get(x["community"])
            if r:
                r["score"] = x["score"]
                reports.append(r)
        batches = _batches(reports, batch_tokens)
        d["selected"] = [{"kind": "report", "key": f"report/{r['community']}", "id": r["community"],
                          "label": r["title"], "score": r["score"]} for r in reports]
        d["batches"] = [[r["community"] for r in b] for b in batches]
    with trace.stage("synthesis") as d:
        points = []
        for b in batches:
            points.extend(engine.map_points(question, b, terms))
        points.sort(key=lambda p: (-int(p.get("score") or 0), -float(p.get("strength") or 0)))
        answer = engine.reduce_answer(question, points, terms)
        d["points"] = [{"description": p.get("description"), "score": p.get("score")} for p in points[:40]]
        d["answer"] = answer
        details = relevance(question, points, broad, terms, term_info)
        d["relevance"] = details["relevance"]
    confidence = answerability(question, details, cfg, trace)
    if confidence < float(scfg.abstain_below):
        return SearchResult(ABSTENTION, "global", context=reports, engine_details={"points": points, **details},
                            abstained=True, abstained_by="coverage", confidence=confidence,
                            closest=cited_units(reader, points[:CLOSEST]))
    # the offline engine answers a report search with sentences of the cited reports, verbatim: what
    # they say is what the citation says (a GraphRAG report is its model's summary; `provrag verify`
    # traces each sentence down to text units and judges it there)
    quoted = "the sentences are the cited community reports' own, quoted" if engine.name == "offline" else None
    return SearchResult(answer, "global", context=reports, engine_details={"points": points, **details,
                                                                           "not_claims": quoted},
                        confidence=confidence)


def answerability(question: str, details: dict, cfg: Config, trace) -> float:
    """Does any report answer the question? Its best points' sentences are read as ask reads
    retrieved units (query/answerable.py: the same model, the same threshold). A broad question
    ("main themes") is answered by any theme the reports give."""
    from provrag.query.answerable import assess

    with trace.stage("answerability") as d:
        if details["broad"]:
            confidence = 1.0 if details["passages"] else 0.0
            d.update({"confidence": confidence, "note": "broad question: any theme of the reports answers it"})
        else:
            found = assess(question, details["passages"], details["idf"], int(details.get("n_units") or 0),
                           details.get("spelling") or {})
            confidence = found.confidence
            d.update(found.to_json())
        d["threshold"] = float(cfg.search.abstain_below)
        d["abstained"] = confidence < d["threshold"]
    return confidence


def cited_units(reader, points: list[dict]) -> list[str]:
    """The text units the points' sentences cite (`Sources (n)`), in order: when global search
    abstains, the nearest passages it shows (never as citations)."""
    from provrag.query.citations import parse_citations

    numbers = list(dict.fromkeys(i for p in points for r in parse_citations(str(p.get("description") or "")).refs()
                                 if r.kind == "Sources" for i in r.ids))
    if not numbers:
        return []
    rows = dict(reader.con.execute("SELECT human_readable_id, id FROM text_units WHERE human_readable_id IN "
                                   "(SELECT unnest(?::BIGINT[]))", [numbers]).fetchall())
    return [rows[n] for n in numbers if n in rows]

