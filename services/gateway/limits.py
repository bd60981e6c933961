"""Limits at the edge: header count and size, body size, and how long a body may take to arrive.

A pure ASGI middleware, outermost, so a refused request costs no database work and no parsing:

- more than ``max_headers`` headers, or more than ``max_header_bytes`` of them → 431;
- a ``Content-Length`` over ``max_body_bytes`` → 413 before any of the body is read; a body without a length
  (chunked) is counted as it arrives and refused with 413 as soon as it passes the limit;
- a body that has not fully arrived ``body_timeout`` seconds after the request started → 408 (a slow sender
  holds a connection for at most this long).

The body is read here and handed on whole; every answer is problem+json and closes the connection.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["EdgeLimits", "EdgeLimitsMiddleware"]


@dataclass(frozen=True)
class EdgeLimits:
    max_body_bytes: int = 1024 * 1024
    body_timeout: float = 10.0
    max_headers: int = 100
    max_header_bytes: int = 16 * 1024


class _Refused(Exception):
    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


class EdgeLimitsMiddleware:
    def __init__(self, app: ASGIApp, limits: EdgeLimits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check_headers(scope["headers"])
            body = await self._read_body(scope["headers"], receive)
        except _Refused as refused:
            await _answer(send, refused)
            return
        await self.app(scope, _replay(body, receive), send)

    def _check_headers(self, headers: list[tuple[bytes, bytes]]) -> None:
        limits = self.limits
        if len(headers) > limits.max_headers:
            raise _Refused(431, "Request Header Fields Too Large",
                           f"{len(headers)} headers; at most {limits.max_headers} are accepted")
        size = sum(len(k) + len(v) for k, v in headers)
        if size > limits.max_header_bytes:
            raise _Refused(431, "Request Header Fields Too Large",
                           f"{size} bytes of headers; at most {limits.max_header_bytes} are accepted")
        for key, value in headers:
            if key == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise _Refused(400, "Bad Request", "Content-Length is not a number") from None
                if length > limits.max_body_bytes:
                    raise _Refused(413, "Content Too Large", _too_large(limits.max_body_bytes))

    async def _read_body(self, headers: list[tuple[bytes, bytes]], receive: Receive) -> list[Message]:
        """Every ``http.request`` message of the body (a disconnect is passed on as received)."""
        limits, size = self.limits, 0
        messages: list[Message] = []

        async def read() -> None:
            nonlocal size
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    return
                size += len(message.get("body", b""))
                if size > limits.max_body_bytes:
                    raise _Refused(413, "Content Too Large", _too_large(limits.max_body_bytes))
                if not message.get("more_body", False):
                    return

        try:
            await asyncio.wait_for(read(), limits.body_timeout)
        except TimeoutError:
            raise _Refused(408, "Request Timeout", f"the request body did not arrive within "
                                                   f"{limits.body_timeout:g} s") from None
        return messages


def _too_large(limit: int) -> str:
    return f"the request body is larger than {limit} bytes"


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()  # after the body: wait for the disconnect, as the server would say it

    return replayed


async def _answer(send: Send, refused: _Refused) -> None:
    body = json.dumps({"type": "about:blank", "title": refused.title, "status": refused.status,
                       "detail": refused.detail}).encode()
    await send({"type": "http.response.start", "status": refused.status, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
