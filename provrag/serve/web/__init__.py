"""The web app at / of `provrag serve`: for the people who audit, over the same IndexService as /v1.

Ask (answers with each sentence's verdict and citation chips), the evidence (a chip opens the
page image with the quote highlighted), Audit an answer (paste one, see each claim judged,
download the HTML report), History (stored traces and why each source was retrieved), the
Index (documents and their status, community reports), and /docs (Swagger UI from the wheel).

Server-rendered Jinja2 templates and one small script (static/app.js) that swaps fragments in
place; without script every view still works as links and forms. Everything a page loads comes
from this server (static/ is package data in the wheel); no page names another host. The HTML
routes are left out of the OpenAPI schema: it describes the API (/v1), which programs call.
"""
from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).parent / "static"


def add_web(app, service, on_loopback: bool = True, token: str | None = None) -> None:
    """Mount the app's pages, its static files and /docs on `app` (a FastAPI app over `service`).
    `token`: the server's bearer token, whose sign-in cookie /login hands out (guard.py)."""
    from fastapi.staticfiles import StaticFiles

    from provrag.serve.web import docs, pages, reading
    from provrag.serve.web.guard import session_value

    app.state.web_on_loopback = on_loopback
    app.state.web_session = session_value(token) if token else None
    app.mount("/static", StaticFiles(directory=STATIC, check_dir=True), name="static")
    docs.add_routes(app)
    pages.add_routes(app, service)
    reading.add_routes(app, service)
    from provrag.serve.web.render import warm

    warm()
