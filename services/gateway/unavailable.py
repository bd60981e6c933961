"""Postgres away: the gateway answers 503 (problem+json, ``Retry-After``) instead of a 500.

The routes' errors are mapped in ``problems.py``; this middleware, outermost, catches the same outage when
it surfaces in a middleware (the API-key lookup of ``Idempotency-Key`` requests) where no exception handler
runs. The pool replaces broken connections itself, so requests succeed again once Postgres is back.
"""

from __future__ import annotations

import json
import logging

import psycopg
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["RETRY_AFTER_SECONDS", "DatabaseUnavailableMiddleware", "unavailable_body"]

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2


def unavailable_body(exc: BaseException) -> dict[str, object]:
    """The problem document of a request refused because the database cannot be reached."""
    return {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": f"the database is unreachable ({type(exc).__name__}); retry in a few seconds",
    }


class DatabaseUnavailableMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except psycopg.OperationalError as exc:
            logger.warning("%s %s: database unreachable: %s", scope["method"], scope["path"],
                           str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
            if started:  # too late to answer differently; the client sees the connection end
                return
            body = json.dumps(unavailable_body(exc)).encode()
            await send({"type": "http.response.start", "status": 503, "headers": [
                (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(RETRY_AFTER_SECONDS).encode())]})
            await send({"type": "http.response.body", "body": body})
