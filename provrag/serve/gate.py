"""What stands in front of every route of `provrag serve`: the bearer token (or the web app's
sign-in cookie) and the body-size bound, and the one-line JSON bodies every refusal and error is
written as. Split from app.py so the routes read on their own; app.py and the web app import it."""
from __future__ import annotations

import hmac

from fastapi import HTTPException
from fastapi.responses import HTMLResponse, Response

from provrag.results import json_document

MAX_BODY_BYTES = 1 << 20          # a request body beyond this is refused before it is parsed


def json_body(obj, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json_document(obj) + "\n", status_code=status, media_type="application/json", headers=headers)


def error_body(status: int, message: str, headers: dict | None = None) -> Response:
    line = (message or "").strip().splitlines()
    return json_body({"error": line[0] if line else f"HTTP {status}"}, status, headers)


class BodyTooLarge(HTTPException):
    """A body streamed past the bound (no Content-Length, or one that lied). FastAPI re-raises an
    HTTPException met while reading a body, so the route answers 413 through `http_error`."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body over {limit:,} bytes")


class Gate:
    """ASGI middleware in front of everything (docs and /mcp too): the bearer token when one is
    set (constant-time comparison), and a body-size bound: a Content-Length over it is refused
    before any byte is read, and a body sent without one (chunked) is counted as it arrives and
    refused once it passes the bound, so no request holds more than the bound in memory."""

    def __init__(self, app, token: str | None, max_body: int = MAX_BODY_BYTES):
        from provrag.serve.web.guard import session_value

        self.app, self.max_body = app, max_body
        self.expected = f"Bearer {token}".encode() if token else None
        self.session = session_value(token) if token else None   # the web app's sign-in cookie

    def signed_in(self, scope, headers: dict) -> bool:
        """The bearer token, or the web app's session cookie (serve/web/guard.py); POST /login
        passes so that a browser can sign in."""
        from provrag.serve.web.guard import cookie_of

        if hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
            return True
        cookie = cookie_of(headers)
        if cookie is not None and hmac.compare_digest(cookie.encode("latin-1"), self.session.encode()):
            return True
        return scope.get("path") == "/login" and scope.get("method") == "POST"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        refusal = None
        length = headers.get(b"content-length", b"0")
        if self.expected is not None and not self.signed_in(scope, headers):
            from provrag.serve.web.guard import login_page, wants_html

            if wants_html(headers):   # a browser: the sign-in form, still a refusal
                target = scope.get("path", "/") + ("?" + scope["query_string"].decode("latin-1")
                                                   if scope.get("query_string") else "")
                refusal = HTMLResponse(login_page(target=target), status_code=401,
                                       headers={"WWW-Authenticate": "Bearer", "Cache-Control": "no-store"})
            else:
                refusal = error_body(401, "missing or wrong bearer token (Authorization: Bearer <token>)",
                                     {"WWW-Authenticate": "Bearer"})
        elif length.isdigit() and int(length) > self.max_body:
            refusal = error_body(413, f"request body over {self.max_body:,} bytes")
        if refusal is not None:
            return await refusal(scope, receive, send)
        received, started = 0, False

        async def counted_receive():
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge(self.max_body)
            return message

        async def watched_send(message):
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        try:
            return await self.app(scope, counted_receive, watched_send)
        except BodyTooLarge as e:      # a route outside FastAPI's handlers (/mcp) read past the bound
            if started:
                raise
            return await error_body(413, e.detail)(scope, receive, send)
