"""The app's reading views: the evidence (a page image with the quote highlighted, or a page-less
unit's text with the quote marked), the Index (documents with their status, pages, units and
OCR'd pages), a document, and the community reports with their findings' sources.

The page image is the API's own endpoint (/v1/documents/{id}/pages/{n}?quote=…), which draws
only a file that is still the one indexed (its sha256) and says whether the quote was found;
the evidence view names the page by document, physical page and printed label, and links the
previous and next page (static/app.js puts them one key away: ← and →).
"""
from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import Response

from provrag.serve.service import MAX_QUOTE_CHARS, DocumentNotFound
from provrag.serve.web import present
from provrag.serve.web.pages import checked
from provrag.serve.web.render import page

MAX_PAGE = 100_000
PAGE_LINKS = 60            # pages linked on a document's view (the rest through "open page")
KEY = dict(min_length=1, max_length=200)


def is_paged(doc) -> bool:
    """A document whose pages can be drawn: a PDF with a page count."""
    return bool(doc.n_pages) and str(doc.path or "").lower().endswith((".pdf", ".pdf.gz"))


def evidence_url(**params) -> str:
    return "/evidence?" + urlencode({k: v for k, v in params.items() if v not in (None, "")})


def page_context(doc, page_no: int, quote: str, unit: str) -> dict:
    """A PDF page: its image's URL, its name (physical page, printed label, OCR) and its neighbours."""
    if not 1 <= page_no <= doc.n_pages:
        raise DocumentNotFound(f"{doc.name} has pages 1–{doc.n_pages}; there is no page {page_no}")
    labels = doc.page_labels or []
    label = labels[page_no - 1] if page_no <= len(labels) else None
    image = f"/v1/documents/{doc.id}/pages/{page_no}" + (f"?{urlencode({'quote': quote})}" if quote else "")
    near = {"doc": doc.id, "quote": quote, "unit": unit}
    return {"image": image, "page": page_no, "label": label if label not in (None, "", str(page_no)) else None,
            "ocr": page_no in doc.ocr_pages,
            "prev": evidence_url(page=page_no - 1, **near) if page_no > 1 else None,
            "next": evidence_url(page=page_no + 1, **near) if page_no < doc.n_pages else None}


def add_routes(app: FastAPI, service) -> None:
    router = APIRouter(include_in_schema=False, dependencies=[Depends(checked)])

    @router.get("/evidence")
    def evidence(request: Request, unit: str = Query("", max_length=200), doc: str = Query("", max_length=200),
                 page_no: int | None = Query(None, alias="page", ge=1, le=MAX_PAGE),
                 quote: str = Query("", max_length=MAX_QUOTE_CHARS)) -> Response:
        """One source: its page with the quote highlighted, or its unit's text with the quote marked."""
        if not unit and not doc:
            raise DocumentNotFound("name a text unit (unit=) or a document (doc=)")
        found = service.unit(unit) if unit and not doc else None
        document = found.document if found is not None else service.document(doc)
        ctx = {"doc": document, "quote": quote, "unit": unit, "shown": None, "marked": None}
        if is_paged(document) and (page_no or (found and found.page_start)):
            ctx["shown"] = page_context(document, page_no or found.page_start, quote, unit)
        else:
            if found is None and unit:
                found = service.unit(unit)
            if found is None:
                return page(request, "document.html", nav="index", title=f"provrag: {document.name}",
                            doc=document, units=service.units(document.id), paged=False, pages=[])
            from provrag.audit.documents import mark_in

            ctx["found"] = found
            ctx["marked"] = mark_in(found.text, quote) if quote else None
        return page(request, "evidence.html", nav="", title=f"provrag: {document.name}", **ctx)

    @router.get("/index")
    def index(request: Request) -> Response:
        o = service.overview()
        failed = [d for d in o.documents if d.status != "ok"]
        return page(request, "index.html", nav="index", title="provrag: the index", overview=o, failed=failed,
                    health=service.health())

    @router.get("/documents/{key}")
    def document(request: Request, key: str = PathParam(**KEY), offset: int = Query(0, ge=0, le=10_000_000)) -> Response:
        d = service.document(key)
        paged = is_paged(d)
        pages = [{"n": n, "href": evidence_url(doc=d.id, page=n),
                  "label": (d.page_labels or [None] * n)[n - 1] if n <= len(d.page_labels or []) else None}
                 for n in range(1, min(d.n_pages or 0, PAGE_LINKS) + 1)] if paged else []
        units = [] if paged or d.status != "ok" else service.units(d.id, offset=offset)
        return page(request, "document.html", nav="index", title=f"provrag: {d.name}", doc=d, paged=paged,
                    pages=pages, units=units)

    @router.get("/reports")
    def reports(request: Request, level: int | None = Query(None, ge=0, le=1000),
                offset: int = Query(0, ge=0, le=10_000_000)) -> Response:
        found, total, levels = service.reports(level=level, offset=offset, limit=50)
        return page(request, "reports.html", nav="index", title="provrag: community reports", reports=found,
                    total=total, levels=levels, level=level, offset=offset, limit=50)

    @router.get("/reports/{community}")
    def report(request: Request, community: int = PathParam(ge=0, le=10**12)) -> Response:
        r = service.report(community)
        findings = []
        for f in r.findings:
            text = f.get("explanation") or ""
            res = service.resolve(text).to_json() if "[Data:" in text else {"sources": [], "unresolved": []}
            findings.append({"summary": f.get("summary"),
                             "segments": present.answer_segments(text, res["sources"], res["unresolved"])})
        return page(request, "report.html", nav="index", title=f"provrag: {r.title}", report=r, findings=findings)

    app.include_router(router)
