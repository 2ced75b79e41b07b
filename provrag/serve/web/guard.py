"""What keeps the web app safe to open: the bearer token for a browser, the headers every page
carries, and the checks a form post must pass.

- A browser cannot send `Authorization: Bearer …` when it follows a link, so with `--token-env`
  a person signs in once: the token typed into the sign-in form becomes a cookie (HttpOnly,
  SameSite=Strict) holding an HMAC of the token, never the token itself. gate.Gate accepts either
  the header or that cookie, on every route (the app, /docs, /v1, /mcp); any other request is
  refused with 401 (a browser gets the sign-in form with it).
- Every page carries a Content-Security-Policy that allows scripts, styles and images from this
  server only (no inline script, no other host): a document's text that escaped escaping could
  neither run nor fetch anything. Pages are never framed (clickjacking) and send no referrer.
- A form post must come from this app's own pages (the browser's Sec-Fetch-Site / Origin), so
  another web site cannot make a visitor's browser ask or verify (CSRF); and served on loopback,
  a request must name a loopback host (a DNS-rebinding page names its own).
"""
from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

COOKIE = "provrag_session"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
       "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


def session_value(token: str) -> str:
    """The cookie's value for a token: an HMAC of it (the cookie never holds the token)."""
    return hmac.new(token.encode(), b"provrag web session", hashlib.sha256).hexdigest()


def cookie_of(headers: dict) -> str | None:
    """The session cookie's value in raw ASGI headers ({b"cookie": …}), if any."""
    raw = headers.get(b"cookie", b"").decode("latin-1")
    for part in raw.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return None


def wants_html(headers: dict) -> bool:
    """A browser navigating (Accept: text/html), not a program calling the API."""
    return b"text/html" in headers.get(b"accept", b"")


def host_name(host: str) -> str:
    """The name part of a Host header value ("127.0.0.1:8507" → "127.0.0.1", "[::1]:80" → "[::1]")."""
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def refusal(headers: dict, served_on_loopback: bool, post: bool) -> str | None:
    """Why a request to the app is refused (one line), or None. `headers`: the request's, by
    lower-case name (str)."""
    host = headers.get("host", "")
    if served_on_loopback and host_name(host) not in LOOPBACK_NAMES:
        return f"this server answers on loopback only; the request names host {host!r}"
    if not post:
        return None
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return "a form of another web site cannot post to provrag"
    origin = headers.get("origin")
    if origin not in (None, "null") and urlsplit(origin).netloc != host:
        return "a form of another web site cannot post to provrag"
    return None


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this app only (never another host)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def login_page(error: str | None = None, target: str = "/") -> str:
    """The sign-in form (a page of its own: the app's templates and styles need the token)."""
    import html

    msg = f'<p role="alert">{html.escape(error)}</p>' if error else ""
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
            "content=\"width=device-width, initial-scale=1\"><title>provrag: sign in</title><link rel=\"icon\" href=\"data:,\"></head>"
            "<body><main><h1>provrag</h1><p>This server asks for its access token (the value of the "
            "environment variable named by <code>--token-env</code>).</p>" + msg +
            "<form method=\"post\" action=\"/login\"><label for=\"token\">Access token</label> "
            "<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" required "
            "maxlength=\"512\"><input type=\"hidden\" name=\"next\" value=\"" + html.escape(safe_next(target)) +
            "\"> <button type=\"submit\">Sign in</button></form></main></body></html>")
