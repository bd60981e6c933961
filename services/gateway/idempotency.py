"""``Idempotency-Key`` on POSTs: the same key and body replay the stored response; another body is a 409.

Runs as ASGI middleware before routing, keyed per tenant (found from the bearer key). A request that
fails on our side (5xx or an exception) or is refused before running (401, 403, 429) releases its key,
so the client's retry runs again. The answer is stored before it is sent: a client that retries the moment
it has the answer is replayed that answer, never told the request is still in progress. A request cut short
by its gateway process dying (killed, or its database lost) is run again by the next retry
(``services/gateway/holder.py``), making the same events, which are then not stored twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from npcworld.ids import ids_repeatable_from
from services.gateway.auth import find_key
from services.gateway.repository import Claimed, IdempotencyStore

__all__ = ["IdempotencyMiddleware"]

logger = logging.getLogger(__name__)

_KEPT_HEADERS = ("content-type", "location")
# Refused before the request ran (no key, no scope, over the rate limit): a retry may run it.
_NOT_RUN = (401, 403, 429)


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ())) if scope["type"] == "http" else {}
        key = headers.get(b"idempotency-key")
        if scope["type"] != "http" or scope["method"] != "POST" or key is None:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        replay = _replaying(body, receive)
        tenant = await self._tenant(scope, headers.get(b"authorization", b""))
        if tenant is None:  # authentication answers 401 downstream
            await self.app(scope, replay, send)
            return
        if not 1 <= len(key) <= 255:
            await _problem(
                send,
                422,
                "Invalid request",
                "Idempotency-Key must be 1-255 characters",
                errors=[{"field": "Idempotency-Key", "message": "1-255 characters"}],
            )
            return
        request = (scope["method"], scope["path"], hashlib.sha256(body).digest())
        await self._run(scope, (tenant, key.decode("latin-1"), request), replay, send)

    async def _run(
        self, scope: Scope, claim: tuple[str, str, tuple[str, str, bytes]], replay: Receive, send: Send
    ) -> None:
        tenant, key, request = claim
        app = scope["app"]
        async with app.state.pool.connection() as conn:
            ttl = app.state.settings.gateway_idempotency_ttl_seconds
            earlier = await IdempotencyStore(conn).claim(tenant, key, request, ttl, app.state.holder.name)
        if not isinstance(earlier, Claimed):
            if (earlier.method, earlier.path, earlier.body_hash) != request:
                await _problem(
                    send, 409, "Conflict", "this Idempotency-Key was used with a different request"
                )
            elif earlier.status_code is None:
                await _problem(
                    send, 409, "Conflict", "a request with this Idempotency-Key is still in progress"
                )
            else:
                await _respond(
                    send,
                    earlier.status_code,
                    {**earlier.headers, "idempotent-replayed": "true"},
                    earlier.body or b"",
                )
            return
        captured: dict[str, Any] = {"status": 500, "headers": {}, "body": b""}
        held: list[Message] = []  # the answer, sent once it is stored
        settled = False

        async def settle() -> None:
            nonlocal settled
            settled = True
            async with app.state.pool.connection() as conn:
                store = IdempotencyStore(conn)
                if captured["status"] < 500 and captured["status"] not in _NOT_RUN:
                    await store.complete(
                        tenant, key, captured["status"], captured["headers"], captured["body"]
                    )
                else:
                    await store.release(tenant, key)

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                captured["status"] = message["status"]
                captured["headers"] = {
                    k.decode("latin-1"): v.decode("latin-1")
                    for k, v in message["headers"]
                    if k.decode("latin-1").lower() in _KEPT_HEADERS
                }
                held.append(message)
                return
            if message["type"] == "http.response.body" and not settled:
                captured["body"] += message.get("body", b"")
                held.append(message)
                if message.get("more_body", False):
                    return
                try:
                    await settle()
                except Exception as exc:  # the request ran: its answer goes out even when it is not stored
                    logger.warning("storing the answer for an Idempotency-Key failed: %r", exc)
                for part in held:
                    await send(part)
                return
            await send(message)

        # Run again after a crash (the claim taken over), the request makes the events its first run made.
        seed = f"{tenant}\n{key}\n{request[0]} {request[1]}"
        try:
            with ids_repeatable_from(seed, int(earlier.since.timestamp() * 1000)):
                await self.app(scope, replay, capture)
        finally:
            if not settled:  # no complete answer: the request failed on our side, so a retry runs again
                captured["status"] = 500
                await settle()

    async def _tenant(self, scope: Scope, authorization: bytes) -> str | None:
        scheme, _, secret = authorization.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not secret:
            return None
        key = await find_key(scope, secret.strip())
        return key.tenant_id if key else None


async def _read_body(receive: Receive) -> bytes:
    chunks, more = [], True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replaying(body: bytes, downstream: Receive) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await downstream()

    return receive


async def _respond(send: Send, status: int, headers: dict[str, str], body: bytes) -> None:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _problem(send: Send, status: int, title: str, detail: str, **extra: object) -> None:
    body = json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail, **extra})
    await _respond(send, status, {"content-type": "application/problem+json"}, body.encode())
