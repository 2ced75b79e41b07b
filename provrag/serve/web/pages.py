"""The app's working views: Ask, Audit an answer, History, and one stored trace.

Every view is the service's typed result (`to_json()`) or a stored trace, placed by present.py:
an ask shows its answer at once, then its sentences' verdicts when `verify` of its trace comes
back (a second request the page makes by itself, so the answer is never held up by the check,
and an ask through the app costs what /v1/ask costs); an audit is a verify result; a trace
reopens as the view that made it. Forms post, then redirect to the trace (so reloading never asks
again); a script posts the same forms and swaps the answer in place (static/app.js).
"""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, FastAPI, Form, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import RedirectResponse, Response

from provrag.audit.cards import evidence_of
from provrag.audit.markup import verdict_of
from provrag.errors import UsageError
from provrag.serve.service import MAX_ANSWER_CHARS, MAX_QUESTION_CHARS, MAX_TRACES
from provrag.serve.web import present
from provrag.serve.web.render import is_fragment, page

MAX_TRACE_ID = 64
EVIDENCE_SHOWN = 5        # evidence listed per claim; the rest behind "more"
VERIFY_LOOKBACK = 30      # verify traces searched for an earlier check of a reopened ask

Method = Literal["auto", "global", "local", "basic"]
TraceId = PathParam(min_length=1, max_length=MAX_TRACE_ID, pattern=r"^[A-Za-z0-9_.-]+$")


def checked(request: Request) -> None:
    """Every page request: served on loopback, it must name a loopback host; a post must come
    from this app's own pages (guard.py)."""
    from provrag.serve.web.guard import refusal
    from starlette.exceptions import HTTPException

    why = refusal({k.lower(): v for k, v in request.headers.items()}, request.app.state.web_on_loopback,
                  request.method == "POST")
    if why:
        raise HTTPException(403, why)


def ask_context(asked: dict, verified: dict | None, threshold) -> dict:
    """The ask view: the answer (its sentences marked once verified), sources, confidence in words."""
    from provrag.results import FURTHER_VIA

    sources = [s for s in asked.get("sources") or [] if isinstance(s, dict)]
    claims = (verified or {}).get("claims")
    segments = present.answer_segments(asked.get("answer") or "", sources, asked.get("unresolved") or [], claims)
    return {"asked": asked, "verified": verified, "segments": segments,
            "sources": [present.source_facts(s, n) for n, s in enumerate(sources, 1) if s.get("via") != FURTHER_VIA],
            # the pages retrieval ranked next, which the answer does not cite (pipelines/ask.py)
            "further": [present.source_facts(s, n) for n, s in enumerate(sources, 1) if s.get("via") == FURTHER_VIA],
            "unresolved": asked.get("unresolved") or [],
            "confidence_words": present.confidence_words(asked.get("confidence"), bool(asked.get("abstained")),
                                                         asked.get("abstained_by"), threshold),
            "removed": present.removed_sentences(asked), "claims": claim_cards(verified) if verified else []}


def claim_cards(verified: dict) -> list[dict]:
    """Each claim of a verify result with its verdict in words and its evidence, best first."""
    cards = []
    for i, c in enumerate(verified.get("claims") or []):
        if not isinstance(c, dict):
            continue
        v = verdict_of(c)
        ev = [present.source_facts(s, route=route) for route, s in evidence_of(c)]
        cards.append({"n": i + 1, "text": c.get("text"), "verdict": v, "words": present.VERDICT_WORDS[v],
                      "score": c.get("score"), "cited_supports": c.get("cited_supports"),
                      "citations": [x for x in c.get("citations") or [] if isinstance(x, dict)],
                      "unresolved": [x for x in c.get("unresolved") or [] if isinstance(x, dict)],
                      "evidence": ev[:EVIDENCE_SHOWN], "more_evidence": ev[EVIDENCE_SHOWN:]})
    return cards


def audit_context(answer: str, question: str | None, verified: dict) -> dict:
    claims = verified.get("claims") or []
    return {"answer": answer, "question": question, "verified": verified, "claims": claim_cards(verified),
            "segments": present.answer_segments(answer, [], [u for c in claims if isinstance(c, dict)
                                                              for u in c.get("unresolved") or []], claims),
            "summary": verified.get("summary") or {}}


def earlier_check(service, asked: dict) -> dict | None:
    """The newest stored verify run of this ask trace (its input names the trace), if any."""
    tid = asked.get("trace_id")
    for row in service.traces(n=VERIFY_LOOKBACK, text=(asked.get("question") or "")[:200] or None, kind="verify"):
        if row.get("answer") != asked.get("answer"):
            continue
        t = service.trace(row["trace_id"])
        for s in t.get("stages") or []:
            if isinstance(s, dict) and s.get("name") == "input" and (s.get("data") or {}).get("trace_id") == tid:
                return t
    return None


def add_routes(app: FastAPI, service) -> None:
    router = APIRouter(include_in_schema=False, dependencies=[Depends(checked)])
    threshold = service.cfg.search.abstain_below

    @router.get("/")
    def ask_page(request: Request, q: str = Query("", max_length=MAX_QUESTION_CHARS)) -> Response:
        return page(request, "ask.html", nav="ask", question=q, method="auto")

    @router.post("/ask")
    def ask(request: Request, question: str = Form(min_length=1, max_length=MAX_QUESTION_CHARS),
            method: Method = Form("auto")) -> Response:
        result = service.ask(question, method=method)
        stored = not result.trace_error      # else the answer is shown here: there is no trace to go to
        if stored and not is_fragment(request):
            return RedirectResponse(f"/trace/{result.trace_id}", status_code=303)
        return page(request, "ask_result.html", headers={"X-Provrag-Location": f"/trace/{result.trace_id}"}
                    if stored else None, **ask_context(result.to_json(), None, threshold))

    @router.post("/trace/{trace_id}/check")
    def check(request: Request, trace_id: str = TraceId) -> Response:
        asked = service.trace(trace_id)
        if asked.get("kind") != "ask":
            raise UsageError(f"trace {trace_id} is a {asked.get('kind')} run, not an ask: there is no answer to check")
        verified = service.verify(trace_id=asked["trace_id"])
        if not is_fragment(request):
            return RedirectResponse(f"/trace/{asked.get('trace_id')}", status_code=303)
        return page(request, "ask_result.html", **ask_context(asked, verified.to_json(), threshold))

    @router.get("/audit")
    def audit_page(request: Request) -> Response:
        return page(request, "audit.html", nav="audit", title="provrag: audit an answer")

    @router.post("/audit")
    def audit(request: Request, answer: str = Form(min_length=1, max_length=MAX_ANSWER_CHARS),
              question: str = Form("", max_length=MAX_QUESTION_CHARS)) -> Response:
        result = service.verify(answer=answer, question=question.strip() or None)
        stored = bool(result.trace_id) and not result.trace_error
        if stored and not is_fragment(request):
            return RedirectResponse(f"/trace/{result.trace_id}", status_code=303)
        # a trace that could not be stored is still the result: shown, never lost behind a redirect
        return page(request, "audit_result.html", headers={"X-Provrag-Location": f"/trace/{result.trace_id}"}
                    if stored else None, **audit_context(answer, question.strip() or None, result.to_json()))

    @router.get("/history")
    def history(request: Request, text: str = Query("", max_length=200), kind: Literal["", "ask", "verify"] = "",
                n: int = Query(50, ge=1, le=MAX_TRACES)) -> Response:
        rows = service.traces(n=n, text=text or None, kind=kind or None)
        return page(request, "history.html", nav="history", title="provrag: history", rows=rows, text=text,
                    kind=kind, n=n)

    @router.get("/trace/{trace_id}")
    def trace(request: Request, trace_id: str = TraceId) -> Response:
        t = service.trace(trace_id)
        rows = service.retrievals(t["trace_id"])
        why = present.why_rows([r for r in rows if r.get("claim_index") is None])
        why_by_unit = present.why_by_unit(rows)
        title = f"provrag: {t.get('question') or t.get('trace_id')}"
        if t.get("kind") == "verify":
            verified = t.get("verify") if isinstance(t.get("verify"), dict) else {"claims": [], "summary": {}}
            verified = verified | {"trace_id": t.get("trace_id"), "question": t.get("question")}
            claim_why = present.why_rows([r for r in rows if r.get("claim_index") is not None], limit=200)
            return page(request, "trace.html", nav="history", title=title, trace=t, why=why, claim_why=claim_why,
                        why_by_unit=why_by_unit,
                        **audit_context(t.get("answer") or "", t.get("question"), verified))
        check = earlier_check(service, t)
        return page(request, "trace.html", nav="history", title=title, trace=t, why=why, claim_why=[],
                    why_by_unit=why_by_unit,
                    **ask_context(t, (check or {}).get("verify"), threshold))

    @router.get("/trace/{trace_id}/report")
    def report(trace_id: str = TraceId) -> Response:
        """`provrag report --trace ID`: the self-contained HTML audit file, as a download."""
        html = service.html_report(trace_id)
        return Response(html, media_type="text/html; charset=utf-8", headers={
            "Content-Disposition": f'attachment; filename="provrag-report-{trace_id}.html"',
            "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})

    app.include_router(router)
