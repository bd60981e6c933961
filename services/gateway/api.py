"""The studio-facing REST API (FastAPI): the app factory, its lifespan, middleware and ops endpoints.

Resources live in ``services/gateway/routes/`` (one module per resource, listed in ROUTER_MODULES).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from fastapi import FastAPI, Request
from psycopg_pool import AsyncConnectionPool

from npcworld.db import apply_migrations, open_pool
from npcworld.settings import resolve_endpoints
from services.gateway.auth import RateLimiter
from services.gateway.idempotency import IdempotencyMiddleware
from services.gateway.notifier import AppendNotifier
from services.gateway.problems import install_http_problem_handler, install_problem_handlers
from services.gateway.repository import IdempotencyStore
from services.gateway.routes import routers
from services.gateway.settings import Settings

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

_DESCRIPTION = """Persistent, debuggable NPC worlds. Authenticate with `Authorization: Bearer <key>`.

Conventions: errors are `application/problem+json` naming the offending field; list endpoints take
`?cursor=&limit=` and answer `items` + `next_cursor`; POSTs accept an `Idempotency-Key` header (the same
key and body replay the first response, another body is a 409); over its rate limit a key gets `429` with
`Retry-After`."""


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; the database pool opens at start-up, never at import."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        cfg = settings or Settings()
        url = resolve_endpoints(cfg).database_url
        apply_migrations(url)
        app.state.pool = await open_pool(url, max_size=8, name="gateway")
        app.state.settings = cfg
        app.state.limiter = RateLimiter(cfg.gateway_rate_limit_per_second, cfg.gateway_rate_limit_burst)
        app.state.notifier = AppendNotifier(url)
        app.state.notifier.start()
        purge = asyncio.create_task(_purge_expired_idempotency_keys(app.state.pool))
        yield
        purge.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await purge
        await app.state.notifier.stop()
        waiter = getattr(app.state, "reply_waiter", None)
        if waiter is not None:
            await waiter.close()
        await app.state.pool.close()

    app = FastAPI(title="npcworld", version="1", lifespan=lifespan, description=_DESCRIPTION)
    app.add_middleware(IdempotencyMiddleware)
    install_problem_handlers(app)
    install_http_problem_handler(app)
    _ops(app)
    for router in routers():
        app.include_router(router)
    return app


async def _purge_expired_idempotency_keys(pool: AsyncConnectionPool, every: float = 600.0) -> None:
    """Expired keys are replaced on reuse anyway; this keeps the table from growing without bound."""
    while True:
        try:
            async with pool.connection() as conn:
                await IdempotencyStore(conn).purge_expired()
        except psycopg.Error:
            logger.warning("purging expired idempotency keys failed; retrying later", exc_info=True)
        await asyncio.sleep(every)


def _ops(app: FastAPI) -> None:
    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz(request: Request) -> dict[str, str]:
        async with request.app.state.pool.connection() as conn:
            await conn.execute("SELECT 1")
        return {"status": "ready"}
