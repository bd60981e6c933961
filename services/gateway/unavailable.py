"""Postgres away: the gateway answers 503 (problem+json, ``Retry-After``) instead of a 500.

The routes' errors are mapped in ``problems.py``; this middleware, outermost, catches the same outage when
it surfaces in a middleware (the API-key lookup of ``Idempotency-Key`` requests) where no exception handler
runs. The pool replaces broken connections itself, so requests succeed again once Postgres is back.

The first request to meet an outage waits for the pool's timeout and makes the ``DatabaseCircuit`` probe
the database with a connection of its own: if that fails too (Postgres is away, not merely every pooled
connection busy), the circuit opens, and until a probe (every second) connects again every request but
``/healthz`` is answered 503 at once instead of each waiting that timeout.
"""

from __future__ import annotations

import asyncio
import json
import logging

import psycopg
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["RETRY_AFTER_SECONDS", "DatabaseCircuit", "DatabaseUnavailableMiddleware", "unavailable_body"]

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2


def unavailable_body(exc: BaseException | None) -> dict[str, object]:
    """The problem document of a request refused because the database cannot be reached."""
    cause = f" ({type(exc).__name__})" if exc is not None else ""
    return {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": f"the database is unreachable{cause}; retry in a few seconds",
    }


class DatabaseCircuit:
    """Open while the database is known to be away; probes with connections of its own decide."""

    def __init__(self, probe_every: float = 1.0) -> None:
        self.probe_every = probe_every
        self.open = False
        self.database_url: str | None = None  # set when the app starts
        self._probe: asyncio.Task[None] | None = None

    def trip(self) -> None:
        """A request found the database unreachable: probe it (one probe at a time)."""
        if self.database_url is not None and (self._probe is None or self._probe.done()):
            self._probe = asyncio.create_task(self._probing(self.database_url), name="database-probe")

    async def _probing(self, url: str) -> None:
        while not await _connects(url):
            if not self.open:
                logger.warning("database unreachable: answering 503 at once until it is back")
            self.open = True
            await asyncio.sleep(self.probe_every)
        if self.open:
            logger.info("database reachable again: requests are served")
        self.open = False


async def _connects(url: str) -> bool:
    try:
        conn = await psycopg.AsyncConnection.connect(url, connect_timeout=2)
    except psycopg.Error:
        return False
    await conn.close()
    return True


class DatabaseUnavailableMiddleware:
    def __init__(self, app: ASGIApp, circuit: DatabaseCircuit) -> None:
        self.app, self.circuit = app, circuit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.circuit.open and scope["path"] != "/healthz":  # liveness: the process itself is fine
            await _answer_unavailable(send, "the database is unreachable")
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
            self.circuit.trip()
            if started:  # too late to answer differently; the client sees the connection end
                return
            await _answer_unavailable(send, str(unavailable_body(exc)["detail"]))


async def _answer_unavailable(send: Send, detail: str) -> None:
    body = json.dumps({**unavailable_body(None), "detail": detail}).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(RETRY_AFTER_SECONDS).encode())]})
    await send({"type": "http.response.body", "body": body})
