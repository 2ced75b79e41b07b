"""/docs: the API's OpenAPI schema in Swagger UI, every file of it served from the wheel
(static/swagger/, the npm package swagger-ui-dist, see its SOURCE.txt), so the page works on a
machine without internet access. FastAPI's own /docs page inlines its start-up script and loads
Swagger UI from a CDN; this one loads static/docs.js, so the app's Content-Security-Policy
(scripts from this server only) holds on it too. And the sign-in form for `--token-env`.
"""
from __future__ import annotations

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from provrag.serve.web.guard import COOKIE, HEADERS, login_page, safe_next, session_value

DOCS_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>provrag API</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/static/swagger/swagger-ui.css"></head>
<body><p class="docs-home"><a href="/">provrag web app</a> · <a href="/openapi.json">OpenAPI schema (JSON)</a></p>
<div id="swagger-ui"></div>
<script src="/static/swagger/swagger-ui-bundle.js"></script><script src="/static/docs.js"></script>
</body></html>
"""


def add_routes(app: FastAPI) -> None:
    @app.get("/docs", include_in_schema=False)
    def docs_page() -> HTMLResponse:
        return HTMLResponse(DOCS_HTML, headers=HEADERS)

    @app.post("/login", include_in_schema=False)
    def login(request: Request, token: str = Form("", max_length=512),
              next: str = Form("/", max_length=2000)) -> HTMLResponse:
        """Sign in with the server's token: a session cookie (an HMAC of the token), then back to
        the page asked for. Only reachable without a token when the server has one (gate.Gate)."""
        import hmac

        session = request.app.state.web_session
        if session is None:
            return RedirectResponse(safe_next(next), status_code=303)
        if not hmac.compare_digest(session_value(token).encode(), session.encode()):
            return HTMLResponse(login_page("That is not this server's token.", next), status_code=401,
                                headers={"Cache-Control": "no-store"})
        done = RedirectResponse(safe_next(next), status_code=303)
        done.set_cookie(COOKIE, session, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https")
        return done
