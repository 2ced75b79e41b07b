"""What a broad question is about, and the themes that answer it: one document's parts, or the collection's.

Global search answers "what is this about?" in themes. Which themes depends on what "this" is:

- **scope**: a question that names documents ("…covered in the R FAQ?") is about those
  documents, whatever else the index holds. A document is named when the question says most
  of its title or file name, each word weighted by how few documents' names hold it (idf over
  the names), so "R FAQ" picks R-FAQ.pdf over "The Debian GNU/Linux FAQ", or when it says a
  word of four letters or more that only that document's name holds ("Lincoln's message");
  ties keep every document tied. No name said: the whole collection.
- **one document**: its level-0 sections (index/sections.py: the outline its authors wrote,
  else the parts where its topic shifts), largest first, each with its central statement and
  the text unit quoted (`[Data: Sources (n)]`), and the community report behind that unit
  (`Reports (r)`: the most specific community of level ≤ [search] global_level holding it).
- **the collection**: documents grouped by the top-level community report holding most of
  their text units (Leiden's broadest themes, titled by their key phrases), largest theme
  first; each document named with its largest parts and cited by one unit that report's
  community holds (`[Data: Reports (r); Sources (u)]`: the statement of its earliest part the
  community holds), so every document is cited, or named among those left out, and files
  that could not be read are said to be.

Each theme is a report-shaped dict (engines/base.py map input: community, title, summary,
full_content, findings, rank, score) plus `line`, the offline engine's cited statement for it,
and `label`, its short name.
"""
from __future__ import annotations

import math
import re
from pathlib import PurePosixPath

from provrag.text.words import ENGLISH_STOP_WORDS

_NAME_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# words of a broad question that name no document ("main topics covered in …")
_GENERIC = frozenset("""main key major overall central general common recurring top topic topics theme themes idea ideas
point points issue issues subject subjects cover covers covered covering discuss discusses discussed document documents
doc docs file files text texts collection corpus folder summary summarise summarize overview gist pdf pdfs about
describe describes described""".split())
_MIN_SHARE = 0.5     # share of a document's name (idf-weighted) the question must say
_LABEL_WORDS = 12    # words of a document's part names in a collection answer, at most
_MAX_THEMES = 7      # themes of a collection answer under their report's title; smaller ones go together
_BRIEF_ABOVE = 12    # more documents than this: each is named by its file name alone
_WORDS = 270         # what the theme lines of a collection answer may spend (reduce's budget less a margin)


def name_words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _NAME_WORD.finditer(text or ""))
            if w not in ENGLISH_STOP_WORDS and w not in _GENERIC}


def _stem_of(path: str) -> str:
    name = PurePosixPath(path or "").name
    for ext in (".gz",):
        name = name[: -len(ext)] if name.lower().endswith(ext) else name
    return name.rsplit(".", 1)[0] if "." in name else name


def all_documents(con) -> list[dict]:
    """Every document row (ok, failed, skipped) with what a theme answer needs; read once per
    connection (store/facts.py), so shared: read it, never change it."""
    from provrag.store.facts import remembered

    def read() -> list[dict]:
        rows = con.execute("""SELECT id, human_readable_id, title, path, status, error, n_pages FROM documents
                              ORDER BY human_readable_id""").fetchall()
        return [{"id": r[0], "hrid": r[1], "title": r[2] or _stem_of(r[3]), "path": r[3] or "",
                 "status": r[4] or "ok", "error": r[5], "n_pages": r[6]} for r in rows]

    return remembered(con, "all documents", read)


def _raw_words(text: str) -> set[str]:
    return {m.group(0).lower() for m in _NAME_WORD.finditer(text or "")} - _GENERIC


def named_documents(question: str, documents: list[dict]) -> list[dict]:
    """The documents the question names (see the module docstring), best first; [] when none.
    Ties on the weighted share go to the name that accounts for more of the question's words,
    then to the name with fewer words left unsaid, stop words included ("chemarrow" is
    chemarrow.pdf, "chemarrow de" chemarrow-de.pdf)."""
    asked = name_words(question)
    if not asked or len(documents) < 2:
        return []
    raw_asked = _raw_words(question)
    names = [document_names(d) for d in documents]
    df: dict[str, int] = {}
    for title, stem in names:
        for w in title | stem:
            df[w] = df.get(w, 0) + 1
    n = len(documents)
    idf = {w: math.log(1 + n / c) for w, c in df.items()}
    scored = []
    for d, (title, stem) in zip(documents, names):
        best = None
        for name, raw in ((title, _raw_words(d["title"])), (stem, _raw_words(_spaced(_stem_of(d["path"]))))):
            total = sum(idf[w] for w in name)
            said = sum(idf[w] for w in name & asked)
            if total and said:
                # a word only this document's name holds ("lincoln" of sotu-1863-lincoln.txt) names it too
                own = any(df[w] == 1 and len(w) >= 4 and not w.isdigit() for w in name & asked)
                share = max(said / total, _MIN_SHARE if own else 0.0)
                key = (round(share, 6), round(said, 6), len(raw & raw_asked), len(raw & raw_asked) / len(raw))
                best = key if best is None else max(best, key)
        if best is not None and best[0] >= _MIN_SHARE:
            scored.append((best, d))
    if not scored:
        return []
    top = max(s for s, _ in scored)
    return [d for s, d in scored if s == top]


def _spaced(stem: str) -> str:
    return stem.replace("-", " ").replace("_", " ")


def document_names(d: dict) -> tuple[set[str], set[str]]:
    """A document's two names as content words: its title's, its file name's."""
    title, file = name_texts(d)
    return name_words(title), name_words(file)


def name_texts(d: dict) -> tuple[str, str]:
    """The two texts a document is named by: its title, and its file name without the extension,
    with - and _ read as spaces (what document_names takes its words from)."""
    return d["title"] or "", _spaced(_stem_of(d["path"]))


def specific_subject(con, question: str) -> list[str]:
    """The words of a broadly worded question that name neither an indexed document nor the
    collection (text/questions.broad_subject less the documents' names): the subject it asks
    about. None left: it asks what the documents cover, a question for global search's themes."""
    from provrag.text.questions import broad_subject

    names: set[str] = set()
    for d in all_documents(con):
        title, stem = document_names(d)
        names |= title | stem
    return [w for w in broad_subject(question) if w not in names]


def _plain(title: str) -> str:
    from provrag.index.sections import plain_heading

    return plain_heading(title)


def _reports_of_units(con, unit_hrids: list[int], level: int) -> dict[int, int]:
    """{unit number: the most specific community (level ≤ `level`) whose text units hold it}."""
    if not unit_hrids:
        return {}
    rows = con.execute("""
        SELECT t.human_readable_id, c.community, c.level FROM communities c, unnest(c.text_unit_ids) AS u(uid)
        JOIN text_units t ON t.id = u.uid
        WHERE c.level <= ? AND t.human_readable_id IN (SELECT unnest(?::BIGINT[]))
          AND c.community IN (SELECT community FROM community_reports)
        ORDER BY c.level DESC, c.community""", [int(level), list(unit_hrids)]).fetchall()
    out: dict[int, int] = {}
    for unit, community, _ in rows:
        out.setdefault(int(unit), int(community))
    return out


def cite(reports: list[int], sources: list[int]) -> str:
    from provrag.engines.offline.answer.mapreduce import format_citation

    return format_citation(reports, sources)


def document_themes(con, document: dict, level: int) -> list[dict]:
    """One document's level-0 sections as themes, largest first (module docstring)."""
    rows = con.execute("""
        SELECT s.human_readable_id, s.title, s.origin, s.key_phrases, s.statement, s.statement_unit, s.n_tokens,
               s.page_start, s.page_end,
               (SELECT list(c.title ORDER BY c.char_start) FROM sections c
                 WHERE c.parent = s.human_readable_id AND c.level = 1) AS subs
        FROM sections s WHERE s.document_id = ? AND s.level = 0 AND s.n_tokens > 0 AND s.origin <> 'apparatus'
        """, [document["id"]]).fetchall()
    total = sum(int(r[6] or 0) for r in rows) or 1
    reports = _reports_of_units(con, [int(r[5]) for r in rows if r[5] is not None], level)
    themes, said = [], set()
    rows.sort(key=lambda r: (-int(r[6] or 0), r[0]))
    for hrid, title, origin, phrases, statement, unit, n_tokens, p0, p1, subs in rows:
        if statement in said:  # small parts quoting one unit: the statement once, the others by name
            statement = None
        said.add(statement)
        name = _plain(title) if origin != "segments" else title
        share = int(n_tokens or 0) / total
        report = reports.get(int(unit)) if unit is not None else None
        citation = cite([report] if report is not None else [], [int(unit)] if unit is not None else [])
        pages = f"pp. {p0}–{p1}" if p0 is not None and p1 is not None and p1 != p0 else (f"p. {p0}" if p0 else "")
        text = f"{statement}" if statement else ""
        line = f"**{name}**{f' ({pages})' if pages else ''}{': ' + text if text else ''} {citation}".strip()
        short = f"{name} {cite([], [int(unit)])}" if unit is not None else name
        finding = {"summary": name, "explanation": f"{text} {citation}".strip()}
        sub_names = [_plain(s) for s in (subs or [])][:6]
        themes.append({
            "community": report, "section": int(hrid), "title": name, "summary": text, "findings": [finding],
            "full_content": f"# {name}\n\n{text} {citation}\n\n" + (f"Parts: {'; '.join(sub_names)}\n\n" if sub_names
                                                                     else "") + f"Key phrases: {', '.join(phrases or [])}",
            "rank": round(10 * share, 2), "score": round(share, 6), "size": int(n_tokens or 0),
            "line": line, "short": short, "label": name, "sources": [int(unit)] if unit is not None else [],
            "documents": [document["path"]],
        })
    themes.sort(key=lambda t: (-t["score"], t["section"]))
    return themes


def _document_parts(con, ids: list[str]) -> dict[str, list[tuple]]:
    """{document id: its level-0 sections (title, origin, statement unit, n_tokens, char_start), largest first}."""
    rows = con.execute("""SELECT document_id, title, origin, statement_unit, n_tokens, char_start FROM sections
                          WHERE level = 0 AND n_tokens > 0 AND origin <> 'apparatus'
                            AND document_id IN (SELECT unnest(?::VARCHAR[]))
                          ORDER BY document_id, n_tokens DESC, human_readable_id""", [ids]).fetchall()
    out: dict[str, list[tuple]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(r[1:])
    return out


def _dominant_reports(con, ids: list[str]) -> dict[str, tuple[int, int]]:
    """{document id: (top-level community holding most of its units, how many)}."""
    rows = con.execute("""
        WITH top AS (SELECT min(level) AS lv FROM communities WHERE community IN (SELECT community FROM community_reports)),
        held AS (SELECT t.document_id, c.community, count(*) AS n
                 FROM communities c, unnest(c.text_unit_ids) AS u(uid) JOIN text_units t ON t.id = u.uid
                 WHERE c.level = (SELECT lv FROM top) AND t.document_id IN (SELECT unnest(?::VARCHAR[]))
                   AND c.community IN (SELECT community FROM community_reports)
                 GROUP BY 1, 2)
        SELECT document_id, arg_max(community, n * 1000000 - community), max(n) FROM held GROUP BY 1""",
                       [ids]).fetchall()
    return {r[0]: (int(r[1]), int(r[2])) for r in rows}


def _units_in_communities(con, ids: list[str], communities: set) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """{(document id, community): [(unit number, char_start)] of its units the community holds}."""
    rows = con.execute("""
        SELECT t.document_id, c.community, t.human_readable_id, t.char_start
        FROM communities c, unnest(c.text_unit_ids) AS u(uid) JOIN text_units t ON t.id = u.uid
        WHERE c.community IN (SELECT unnest(?::BIGINT[])) AND t.document_id IN (SELECT unnest(?::VARCHAR[]))""",
                       [[int(c) for c in communities if c is not None], ids]).fetchall()
    out: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for doc, community, unit, start in rows:
        out.setdefault((doc, int(community)), []).append((int(unit), int(start or 0)))
    return out


def _representative(parts: list[tuple], held: list[tuple[int, int]]) -> int | None:
    """The unit a document is cited by under its theme: one its theme's community holds — the
    central statement of its earliest part that the community holds (what the document opens
    with says what it is about), else the community's earliest unit of it."""
    if not held:
        return None
    units = {u for u, _ in held}
    for part in sorted(parts, key=lambda p: p[4]):
        if part[2] is not None and int(part[2]) in units:
            return int(part[2])
    return min(held, key=lambda h: h[1])[0]


def collection_themes(con, documents: list[dict]) -> list[dict]:
    """The collection's themes: its documents grouped by their top-level community (see above)."""
    ok = [d for d in documents if d["status"] == "ok"]
    if not ok:
        return []
    ids = [d["id"] for d in ok]
    parts = _document_parts(con, ids)
    dominant = _dominant_reports(con, ids)
    sizes = dict(con.execute("""SELECT document_id, sum(n_tokens) FROM text_units
                                WHERE document_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1""", [ids]).fetchall())
    titles = dict(con.execute("SELECT community, title FROM community_reports").fetchall())
    held = _units_in_communities(con, ids, {c for c, _ in dominant.values()})
    groups: dict[int | None, list[dict]] = {}
    for d in ok:
        groups.setdefault(dominant.get(d["id"], (None, 0))[0], []).append(d)
    total = sum(int(v or 0) for v in sizes.values()) or 1
    size_of = {c: sum(int(sizes.get(d["id"]) or 0) for d in ds) for c, ds in groups.items()}
    named = sorted((c for c in groups if c is not None), key=lambda c: -size_of[c])
    for c in named[_MAX_THEMES:]:  # the smallest themes' documents: listed together, not each under a title
        groups.setdefault(None, []).extend(groups.pop(c))
    brief = len(ok) > _BRIEF_ABOVE  # many documents: each named by its file alone
    spare = _WORDS - 10 * min(len(groups), _MAX_THEMES + 1) - len(ok) * (5 if brief else 9)
    per_doc_words = max(0, min(_LABEL_WORDS, spare // max(1, len(ok))))
    themes = []
    for community, docs in groups.items():
        docs.sort(key=lambda d: -int(sizes.get(d["id"]) or 0))
        clauses, sources = [], []
        for d in docs:
            mine = parts.get(d["id"]) or []
            names, used = [], 0
            for title, origin, _, _, _ in mine:
                name = _plain(title) if origin != "segments" else title
                if used + len(name.split()) > per_doc_words:
                    break
                names.append(name)
                used += len(name.split())
            unit, report = _representative(mine, held.get((d["id"], community), [])), community
            if unit is None:  # no unit of it in the theme's community (a document of "other documents")
                unit, report = next((int(p[2]) for p in sorted(mine, key=lambda p: p[4]) if p[2] is not None), None), None
            file = PurePosixPath(d["path"]).name
            head = file if brief or _stem_of(d["path"]) == d["title"] else f"{d['title']} ({file})"
            if names:  # "R-FAQ.pdf (R Basics; R and Emacs)", "R FAQ (R-FAQ.pdf: R Basics; R and Emacs)"
                head = f"{head[:-1]}: {'; '.join(names)})" if head.endswith(")") else f"{head} ({'; '.join(names)})"
            clauses.append(f"{head} {cite([report] if report is not None else [], [unit] if unit is not None else [])}"
                           .strip())
            sources += [unit] if unit is not None else []
        share = sum(int(sizes.get(d["id"]) or 0) for d in docs) / total
        name = titles.get(community) if community is not None else None
        label = name or ("other documents" if len(groups) > 1 else "the documents")
        line = f"**{label}**: " + "; ".join(clauses) + "."
        themes.append({
            "community": community, "title": label, "summary": "; ".join(clauses),
            "findings": [{"summary": c.split(" (")[0], "explanation": c} for c in clauses],
            "full_content": f"# {label}\n\n" + "\n".join(f"- {c}" for c in clauses),
            "rank": round(10 * share, 2), "score": round(share, 6), "size": sum(int(sizes.get(d["id"]) or 0) for d in docs),
            "line": line, "label": label, "sources": sources, "documents": [d["path"] for d in docs],
        })
    themes.sort(key=lambda t: (t["community"] is None, -t["score"]))
    return themes


def left_out(documents: list[dict], cited_paths: set[str], most: int = 5) -> str:
    """The sentence saying which documents an answer about the whole collection leaves out:
    files that could not be read (with why), files not indexed, ok documents not cited."""
    def names(ds: list[dict], why: bool) -> str:
        shown = [f"{PurePosixPath(d['path']).name}" + (f" ({_short(d['error'])})" if why and d.get("error") else "")
                 for d in ds[:most]]
        return ", ".join(shown) + (f" and {len(ds) - most} more" if len(ds) > most else "")

    failed = [d for d in documents if d["status"] == "failed"]
    skipped = [d for d in documents if d["status"] == "skipped"]
    missing = [d for d in documents if d["status"] == "ok" and d["path"] not in cited_paths]
    parts = []
    if failed:
        parts.append(f"Could not be read: {names(failed, True)}.")
    if missing:
        parts.append(f"Not covered above: {names(missing, False)}.")
    by_reason: dict[str, list[dict]] = {}
    for d in skipped:  # "unsupported format .copyright" once for the four files it stands for
        by_reason.setdefault(_short(d.get("error") or "skipped"), []).append(d)
    for reason, ds in by_reason.items():
        parts.append(f"Not indexed ({reason}): {names(ds, False)}.")
    return " ".join(parts)


def _short(error: str) -> str:
    """The first clause of a load error ("encrypted PDF: a password is needed…" → "encrypted PDF")."""
    return re.split(r"[:;(]", str(error or ""), maxsplit=1)[0].strip()[:60]
