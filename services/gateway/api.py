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
from fastapi.responses import JSONResponse
from psycopg_pool import AsyncConnectionPool

from npcworld.db import apply_migrations, database_reachable, open_pool
from npcworld.errors import InfraError
from npcworld.messaging.reconnect import Backoff
from npcworld.settings import resolve_endpoints
from services.gateway.auth import RateLimiter
from services.gateway.console import router as console_router
from services.gateway.deps import WorldCache
from services.gateway.freshness import ReadModelLagHeader, ReadModelWatch
from services.gateway.holder import RequestHolder
from services.gateway.idempotency import IdempotencyMiddleware
from services.gateway.limits import EdgeLimitsMiddleware
from services.gateway.notifier import AppendNotifier
from services.gateway.openapi import install_openapi
from services.gateway.problems import install_http_problem_handler, install_problem_handlers
from services.gateway.repository import IdempotencyStore, KeyRepository
from services.gateway.routes import routers
from services.gateway.schemas import NotReady
from services.gateway.settings import Settings
from services.gateway.unavailable import RETRY_AFTER_SECONDS, DatabaseCircuit, DatabaseUnavailableMiddleware

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

# How long a request waits for a pooled connection: while Postgres is down, it answers 503 after this
# instead of hanging for the pool's default 30 s (under load a connection frees up in milliseconds).
_POOL_WAIT_S = 5.0
_START_PATIENCE_S = 300.0

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
        # Postgres away at start is waited out (for up to _START_PATIENCE_S); later outages answer 503.
        await _start_when_reachable(url)
        app.state.pool = await open_pool(url, max_size=8, name="gateway", timeout=_POOL_WAIT_S)
        app.state.db_circuit.database_url = url
        app.state.settings = cfg
        app.state.worlds = WorldCache()
        app.state.views = ReadModelWatch()
        app.state.limiter = RateLimiter(cfg.gateway_rate_limit_per_second, cfg.gateway_rate_limit_burst)
        app.state.notifier = AppendNotifier(url)
        app.state.notifier.start()
        app.state.holder = RequestHolder(url)
        await app.state.holder.start()
        purge = asyncio.create_task(_purge_expired(app.state.pool))
        yield
        purge.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await purge
        await app.state.notifier.stop()
        await app.state.holder.stop()
        waiter = getattr(app.state, "reply_waiter", None)
        if waiter is not None:
            await waiter.close()
        await app.state.pool.close()

    app = FastAPI(title="npcworld", version="1", lifespan=lifespan, description=_DESCRIPTION)
    app.add_middleware(ReadModelLagHeader)
    app.add_middleware(IdempotencyMiddleware)
    app.state.db_circuit = DatabaseCircuit()
    # Sees the middlewares' queries too; answers 503 at once while the database is known to be away.
    app.add_middleware(DatabaseUnavailableMiddleware, circuit=app.state.db_circuit)
    # Outermost: an oversized, slow or header-stuffed request is refused before any other work.
    app.add_middleware(EdgeLimitsMiddleware, limits=(settings or Settings()).edge_limits())
    install_problem_handlers(app)
    install_http_problem_handler(app)
    _ops(app)
    for router in routers():
        app.include_router(router)
    app.include_router(console_router)  # the ops console's pages (not in the API contract)
    install_openapi(app)
    return app


async def _purge_expired(pool: AsyncConnectionPool, every: float = 600.0) -> None:
    """Expired idempotency keys (replaced on reuse anyway) and expired player session tokens are deleted,
    so neither table grows without bound."""
    while True:
        try:
            async with pool.connection() as conn:
                await IdempotencyStore(conn).purge_expired()
                await KeyRepository(conn).purge_expired_sessions()
        except psycopg.Error:
            logger.warning("purging expired idempotency keys and sessions failed; will retry", exc_info=True)
        await asyncio.sleep(every)


def _ops(app: FastAPI) -> None:
    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"], response_model=dict[str, str],
             responses={503: {"model": NotReady, "description": "not ready: the database is unreachable"}})
    async def readyz(request: Request) -> JSONResponse:
        if await database_reachable(request.app.state.pool):
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "not ready", "database": False}, status_code=503,
                            headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


async def _start_when_reachable(url: str) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(_START_PATIENCE_S, stop.set)
    await Backoff("gateway start-up").call(lambda: asyncio.to_thread(apply_migrations, url), stop)
    if stop.is_set():
        raise InfraError(f"PostgreSQL unreachable for {_START_PATIENCE_S:.0f} s at start")
