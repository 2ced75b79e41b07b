"""What an index holds, for a reader browsing it (the web app's Index view): its documents with
their status, pages, units and OCR'd pages; its community reports; one unit's text.

Read through the request's own reader (IndexService.reader), in SQL over the normalised views of
store/reader.py, so a GraphRAG folder browses like a provrag index (its documents have no status
column: every row it holds was indexed, so they read as ok). What is not there is None; the
service turns that into its "not found" error. Documents are named by the one rule
of store/units.document_name, so the Index view and every source name a document alike.
"""
from __future__ import annotations

from provrag.results import CommunityReport, DocumentInfo, IndexOverview, UnitText
from provrag.store.units import document_name

MAX_REPORTS = 200          # community reports (or units) per page of a list
PREVIEW = 240              # characters of a unit shown in a document's list of units

_DOCS_SQL = """
WITH d AS (SELECT *, count(*) OVER (PARTITION BY title) AS n_titled FROM documents),
     u AS (SELECT document_id, count(*) AS n_units,
                  list_sort(list_distinct(flatten(list(coalesce(ocr_pages, []))))) AS ocr
           FROM text_units GROUP BY document_id)
SELECT d.id, d.human_readable_id, d.title, d.path, d.mime_type, coalesce(d.status, 'ok'), d.error, d.n_pages,
       coalesce(u.n_units, 0), coalesce(u.ocr, []), d.page_labels, d.n_titled > 1
FROM d LEFT JOIN u ON u.document_id = d.id
"""


def _document(r) -> DocumentInfo:
    return DocumentInfo(id=r[0], human_readable_id=r[1], name=document_name(r[2], r[3], r[0], bool(r[11])),
                        title=r[2], path=r[3], mime_type=r[4], status=r[5], error=r[6], n_pages=r[7],
                        n_units=int(r[8] or 0), ocr_pages=[int(p) for p in r[9] or []], page_labels=r[10])


def overview(reader) -> IndexOverview:
    """Every document (failed and skipped ones too, with why), and rows per table."""
    rows = reader.con.execute(_DOCS_SQL + " ORDER BY d.status = 'ok', d.human_readable_id").fetchall()
    counts = {t: reader.count(t) for t, f in reader.tables.items() if f is not None}
    return IndexOverview(kind=reader.kind, index_version=reader.manifest().get("index_version"),
                         documents=[_document(r) for r in rows], counts=counts)


def document(reader, key: str) -> DocumentInfo | None:
    """The document whose id or human_readable_id is `key`."""
    rows = reader.con.execute(_DOCS_SQL + " WHERE d.id = $k OR CAST(d.human_readable_id AS VARCHAR) = $k "
                              "ORDER BY d.id = $k DESC LIMIT 1", {"k": key}).fetchall()
    return _document(rows[0]) if rows else None


def unit_text(reader, unit_id: str) -> UnitText | None:
    """One text unit (by id or human_readable_id) with its document."""
    rows = reader.con.execute(
        "SELECT id, human_readable_id, text, document_id, page_start, page_end FROM text_units "
        "WHERE id = $k OR CAST(human_readable_id AS VARCHAR) = $k ORDER BY id = $k DESC LIMIT 1",
        {"k": unit_id}).fetchall()
    if not rows:
        return None
    uid, hrid, text, doc_id, p0, p1 = rows[0]
    doc = document(reader, doc_id or "")
    if doc is None:
        return None
    return UnitText(text_unit_id=uid, text_unit=hrid, text=text or "", document=doc, page_start=p0, page_end=p1)


def units_of(reader, document_id: str, offset: int = 0, limit: int = 100) -> list[UnitText] | None:
    """A document's text units in reading order (their text cut to PREVIEW characters)."""
    doc = document(reader, document_id)
    if doc is None:
        return None
    rows = reader.con.execute(
        f"SELECT id, human_readable_id, substr(text, 1, {PREVIEW}), page_start, page_end FROM text_units "
        f"WHERE document_id = $d ORDER BY char_start NULLS LAST, human_readable_id "
        f"LIMIT {max(1, min(int(limit), MAX_REPORTS))} OFFSET {max(0, int(offset))}", {"d": doc.id}).fetchall()
    return [UnitText(text_unit_id=r[0], text_unit=r[1], text=r[2] or "", document=doc, page_start=r[3], page_end=r[4])
            for r in rows]


def _report(r) -> CommunityReport:
    findings = [{"summary": f.get("summary"), "explanation": f.get("explanation")}
                for f in r[7] or [] if isinstance(f, dict)]
    return CommunityReport(community=int(r[0]), level=r[1], title=r[2], summary=r[3], rank=r[4], size=r[5],
                           parent=r[6], findings=findings, children=[int(c) for c in r[8] or []])


_REPORT_COLS = "community, level, title, summary, rank, size, parent, findings, children"


def reports(reader, level: int | None = None, offset: int = 0, limit: int = 50) -> tuple[list[CommunityReport], int]:
    """Community reports, best rank first (of one level, or all): (this page of them, how many in all)."""
    limit = max(1, min(int(limit), MAX_REPORTS))
    where, params = ("WHERE level = $lvl", {"lvl": int(level)}) if level is not None else ("", {})
    total = reader.con.execute(f"SELECT count(*) FROM community_reports {where}", params).fetchone()[0]
    rows = reader.con.execute(
        f"SELECT {_REPORT_COLS} FROM community_reports {where} ORDER BY rank DESC NULLS LAST, community "
        f"LIMIT {limit} OFFSET {max(0, int(offset))}", params).fetchall()
    return [_report(r) for r in rows], int(total)


def levels(reader) -> list[int]:
    """The community levels the reports are at, lowest (broadest) first."""
    return [int(r[0]) for r in reader.con.execute(
        "SELECT DISTINCT level FROM community_reports WHERE level IS NOT NULL ORDER BY level").fetchall()]


def report(reader, community: int) -> CommunityReport | None:
    """The report of community `community` (the id a `[Data: Reports (n)]` citation names)."""
    rows = reader.con.execute(f"SELECT {_REPORT_COLS} FROM community_reports WHERE community = $c LIMIT 1",
                              {"c": int(community)}).fetchall()
    return _report(rows[0]) if rows else None
