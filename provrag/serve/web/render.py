"""Templates to responses: the one Jinja2 environment (autoescape on for every template, so every
value a page shows is escaped), whole pages or the fragment a script asked for, and the error
page a person sees instead of a JSON line.

A script that swaps part of a page asks with `X-Provrag-Fragment: 1` and gets the page's main
block alone; a browser without script gets the whole page, so every view also works as a plain
link or form. Every response carries guard.HEADERS (CSP and friends).
"""
from __future__ import annotations

from functools import lru_cache

from fastapi import Request
from fastapi.responses import HTMLResponse

from provrag.serve.web.guard import HEADERS

FRAGMENT_HEADER = "x-provrag-fragment"


@lru_cache(maxsize=1)
def environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("provrag.serve.web", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = number
    env.filters["pct"] = lambda x: "—" if not isinstance(x, (int, float)) else f"{100 * float(x):.0f} %"
    env.filters["short"] = short
    return env


def warm() -> None:
    """Compile every template now, at start-up, so that no reader's first page waits for it."""
    env = environment()
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)


def number(x, digits: int = 2) -> str:
    if isinstance(x, bool) or x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def short(text, n: int = 160) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[:n - 1] + "…"


def is_fragment(request: Request) -> bool:
    return request.headers.get(FRAGMENT_HEADER) == "1"


def page(request: Request, template: str, status: int = 200, headers: dict | None = None, **context) -> HTMLResponse:
    """The template rendered as a whole page, or its main block for a script (is_fragment)."""
    context.setdefault("title", "provrag")
    context.setdefault("nav", "")
    html = environment().get_template(template).render(fragment=is_fragment(request), **context)
    return HTMLResponse(html, status_code=status, headers=HEADERS | (headers or {}))


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    """A refusal or failure as a page (or fragment): the one line the API would have sent."""
    return page(request, "error.html", status=status, title=f"provrag: error {status}", status_code=status,
                message=message)
