"""The webhooks service's internal HTTP API: the delivery log of a subscription and redelivery.

The gateway reaches it through ``npcworld.delivery_log.HttpDeliveryLog`` (WEBHOOKS_API_URL) after checking
that the subscription is the caller's. Errors are JSON bodies with ``title`` and ``detail``: 404 for a
delivery the named tenant, world and subscription do not have, 422 for a bad request.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg_pool import AsyncConnectionPool

from npcworld.delivery_log import DeliveryDetail, DeliveryStatus, DeliveryView
from npcworld.errors import NotFoundError
from npcworld.service_auth import internal_app
from services.webhooks.log import DeliveryLog

__all__ = ["MAX_PAGE", "create_app"]

MAX_PAGE = 10000
Id = Annotated[str, Query(min_length=1, max_length=200)]
DeliveryId = Annotated[int, Path(ge=1, le=2**62)]


def create_app(pool: AsyncConnectionPool, *, token: str | None = None) -> FastAPI:
    """The internal API on ``pool``. With ``token`` every route but /healthz answers 401 unless the request
    carries it as a bearer token (``npcworld.service_auth``)."""
    app = internal_app("npcworld webhooks (internal)", token)
    app.state.pool = pool
    _install_errors(app)
    _routes(app)
    return app


def _routes(app: FastAPI) -> None:
    @app.get("/internal/v1/deliveries", response_model=list[DeliveryView])
    async def deliveries(
        request: Request, tenant_id: Id, world_id: Id, webhook_id: Id,
        after: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        status: DeliveryStatus | None = None,
    ) -> list[DeliveryView]:
        async with request.app.state.pool.connection() as conn:
            return await DeliveryLog(conn, tenant_id, world_id, webhook_id).page(status, after, limit)

    @app.get("/internal/v1/deliveries/{delivery_id}", response_model=DeliveryDetail)
    async def delivery(
        request: Request, delivery_id: DeliveryId, tenant_id: Id, world_id: Id, webhook_id: Id
    ) -> DeliveryDetail:
        async with request.app.state.pool.connection() as conn:
            return await DeliveryLog(conn, tenant_id, world_id, webhook_id).get(delivery_id)

    @app.post("/internal/v1/deliveries/{delivery_id}/redeliver", response_model=DeliveryView)
    async def redeliver(
        request: Request, delivery_id: DeliveryId, tenant_id: Id, world_id: Id, webhook_id: Id
    ) -> DeliveryView:
        async with request.app.state.pool.connection() as conn, conn.transaction():
            return await DeliveryLog(conn, tenant_id, world_id, webhook_id).redeliver(delivery_id)


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": ("request",), "msg": "invalid"}
        field = ".".join(str(p) for p in first["loc"] if p not in ("body", "query", "path")) or "request"
        body = {"title": "Invalid request", "detail": f"{field}: {first['msg']}"}
        return JSONResponse(body, status_code=422)

    @app.exception_handler(NotFoundError)
    async def not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"title": "Not found", "detail": str(exc)}, status_code=404)
