"""A tiny HTTP endpoint per process: /healthz (alive), /readyz (dependencies reachable), /metrics."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

__all__ = ["HealthServer", "ReadinessCheck"]

logger = logging.getLogger(__name__)

ReadinessCheck = Callable[[], Awaitable[dict[str, bool]]]


class HealthServer:
    """Serves health, readiness and Prometheus metrics on ``port`` (0 picks a free one)."""

    def __init__(self, port: int, readiness: ReadinessCheck, host: str = "127.0.0.1") -> None:
        self.port = port
        self.host = host
        self.readiness = readiness
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        """Start listening; returns the bound port."""
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        logger.info("health endpoint on %s:%d", self.host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), 5)
            while (await reader.readline()).strip():
                pass
            path = request.decode(errors="replace").split(" ")[1] if request.count(b" ") >= 2 else "/"
            status, ctype, body = await self._route(path)
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n".encode() + body
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _route(self, path: str) -> tuple[str, str, bytes]:
        if path == "/healthz":
            return "200 OK", "application/json", b'{"status":"ok"}'
        if path == "/readyz":
            try:
                checks = await asyncio.wait_for(self.readiness(), 5)
            except Exception as exc:
                checks = {"error": False}
                logger.warning("readiness check failed: %r", exc)
            ok = all(checks.values())
            body = json.dumps({"status": "ready" if ok else "not ready", "checks": checks}).encode()
            return ("200 OK" if ok else "503 Service Unavailable"), "application/json", body
        if path == "/metrics":
            from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

            return "200 OK", CONTENT_TYPE_LATEST, generate_latest()
        return "404 Not Found", "application/json", b'{"error":"not found"}'
