"""Webhook subscriptions per world, their delivery log and manual redelivery.

Each registration, change and deletion is also a ``WebhookRegistered`` / ``WebhookChanged`` /
``WebhookDeleted`` event of the world, appended in the same transaction; the webhooks service
(services/webhooks) folds them into its own subscriptions, turns each matching event stored after them into
a delivery and POSTs it, signed with the subscription's secret (kept apart from the event log by
``npcworld.egress.secrets`` and shown only in the creation's answer); see docs/webhooks.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Path, Query, Request, Response
from psycopg import AsyncConnection
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, field_validator

from npcworld.contracts import (
    EVENT_TYPES,
    EventPayload,
    WebhookChanged,
    WebhookDeleted,
    WebhookRegistered,
    WebhookSubscription,
)
from npcworld.delivery_log import AttemptView, DeliveryView, HttpDeliveryLog
from npcworld.egress import check_url, new_secret, store_secret
from npcworld.errors import EgressRefusedError, NotFoundError, ValidationError
from npcworld.eventstore import EventStore, UnitOfWork
from services.gateway.deps import Reader, Writer, live_world
from services.gateway.pagination import CursorParam, LimitParam, Page, decode_cursor, next_cursor
from services.gateway.repository import WebhookRecord, WebhookRepository
from services.gateway.routes._appending import append_at_end

__all__ = ["router"]

router = APIRouter(tags=["webhooks"])
PATH = "/v1/worlds/{world_id}/webhooks"
Status = Literal["pending", "delivered", "failed"]
DeliveryId = Annotated[int, Path(ge=1, le=2**62)]


def _known_types(value: list[str] | None) -> list[str] | None:
    unknown = sorted(set(value or ()) - set(EVENT_TYPES))
    if unknown:
        raise ValueError(f"unknown event types: {', '.join(unknown)}")
    return value


class WebhookIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: AnyHttpUrl = Field(description="http(s) endpoint that receives a signed POST per event")
    event_types: list[str] = Field(default_factory=list, max_length=100, description="empty = every type")
    description: str = Field(default="", max_length=500)

    _types = field_validator("event_types")(_known_types)


class WebhookPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: AnyHttpUrl | None = None
    event_types: list[str] | None = Field(default=None, max_length=100)
    description: str | None = Field(default=None, max_length=500)
    active: bool | None = None

    _types = field_validator("event_types")(_known_types)


class WebhookOut(BaseModel):
    webhook_id: str
    world_id: str
    url: str
    event_types: list[str]
    description: str
    active: bool
    created_at: datetime


class WebhookCreated(WebhookOut):
    secret: str = Field(description="HMAC-SHA256 signing secret; shown only in this response")


class DeliveryOut(BaseModel):
    delivery_id: int
    webhook_id: str
    event_id: UUID
    seq: int
    event_type: str
    status: Status
    attempts: int
    next_attempt_at: datetime | None = Field(description="when the next try is due (pending only)")
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


class AttemptOut(BaseModel):
    attempt: int
    status_code: int | None
    error: str | None
    duration_ms: float
    attempted_at: datetime


class DeliveryDetail(DeliveryOut):
    attempt_log: list[AttemptOut]


def _hook(r: WebhookRecord) -> WebhookOut:
    return WebhookOut(
        webhook_id=r.webhook_id,
        world_id=r.world_id,
        url=r.url,
        event_types=list(r.event_types),
        description=r.description,
        active=r.active,
        created_at=r.created_at,
    )


def _delivery(r: DeliveryView) -> DeliveryOut:
    fields = {k: getattr(r, k) for k in DeliveryOut.model_fields}
    return DeliveryOut(**fields | {"next_attempt_at": r.next_attempt_at if r.status == "pending" else None})


def _attempt(a: AttemptView) -> AttemptOut:
    return AttemptOut(
        attempt=a.attempt,
        status_code=a.status_code,
        error=a.error,
        duration_ms=a.duration_ms,
        attempted_at=a.attempted_at,
    )


async def _check_receiver(request: Request, url: str) -> None:
    """422 naming ``url`` when the egress policy refuses the receiver (deliveries check it again)."""
    try:
        await check_url(url, request.app.state.settings.allow_list())
    except EgressRefusedError as exc:
        raise ValidationError(
            f"url: {exc}; webhook receivers must be public (see docs/webhooks.md)", field="url"
        ) from exc


def _subscription(r: WebhookRecord) -> WebhookSubscription:
    return WebhookSubscription(webhook_id=r.webhook_id, url=r.url, event_types=r.event_types,
                               description=r.description, active=r.active)


async def _announce(conn: AsyncConnection[Any], tenant_id: str, world_id: str, webhook_id: str,
                    change: EventPayload) -> None:
    """Append the subscription's change to its stream, stamped with the latest world time of the world's
    events (a subscription exists only in a world that has some)."""
    when = await WebhookRepository(conn, tenant_id, world_id).world_time()
    if when is None:
        raise NotFoundError(f"world {world_id!r} not found")
    uow = UnitOfWork(conn, EventStore())
    event = uow.new_event(change, tenant_id=tenant_id, world_id=world_id, world_time=when)
    await append_at_end(uow, f"webhook-{webhook_id}", event)


@router.post(PATH, status_code=201, response_model=WebhookCreated)
async def create_webhook(world_id: str, body: WebhookIn, key: Writer, request: Request) -> WebhookCreated:
    """Subscribe to this world's events from now on (optionally only some types).

    The receiver must be a public http(s) address without credentials: loopback, private, link-local,
    unique-local, multicast, reserved and cloud metadata addresses are refused with a 422.
    """
    await _check_receiver(request, str(body.url))
    secret = new_secret("whsec")
    async with request.app.state.pool.connection() as conn, conn.transaction():
        await live_world(conn, key.tenant_id, world_id)
        hook = await WebhookRepository(conn, key.tenant_id, world_id).create(
            str(body.url), tuple(dict.fromkeys(body.event_types)), body.description
        )
        await store_secret(conn, key.tenant_id, hook.webhook_id, secret)
        registered = WebhookRegistered(subscription=_subscription(hook))
        await _announce(conn, key.tenant_id, world_id, hook.webhook_id, registered)
    return WebhookCreated(**_hook(hook).model_dump(), secret=secret)


@router.get(PATH, response_model=Page[WebhookOut])
async def list_webhooks(
    world_id: str, key: Reader, request: Request, cursor: CursorParam = None, limit: LimitParam = 100
) -> Page[WebhookOut]:
    after = decode_cursor("webhooks", cursor, "")
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        hooks = await WebhookRepository(conn, key.tenant_id, world_id).page(after, limit)
    return Page[WebhookOut](
        items=[_hook(h) for h in hooks],
        next_cursor=next_cursor("webhooks", hooks, limit, hooks[-1].webhook_id if hooks else ""),
    )


@router.get(PATH + "/{webhook_id}", response_model=WebhookOut)
async def get_webhook(world_id: str, webhook_id: str, key: Reader, request: Request) -> WebhookOut:
    async with request.app.state.pool.connection() as conn:
        return _hook(await WebhookRepository(conn, key.tenant_id, world_id).get(webhook_id))


@router.patch(PATH + "/{webhook_id}", response_model=WebhookOut)
async def update_webhook(
    world_id: str, webhook_id: str, body: WebhookPatch, key: Writer, request: Request
) -> WebhookOut:
    changes = body.model_dump(exclude_none=True, mode="json")
    if "url" in changes:
        await _check_receiver(request, changes["url"])
    async with request.app.state.pool.connection() as conn, conn.transaction():
        hooks = WebhookRepository(conn, key.tenant_id, world_id)
        before = await hooks.get(webhook_id)
        after = await hooks.update(webhook_id, changes)
        if after != before:
            changed = WebhookChanged(subscription=_subscription(after))
            await _announce(conn, key.tenant_id, world_id, webhook_id, changed)
    return _hook(after)


@router.delete(PATH + "/{webhook_id}", status_code=204)
async def delete_webhook(world_id: str, webhook_id: str, key: Writer, request: Request) -> Response:
    async with request.app.state.pool.connection() as conn, conn.transaction():
        await WebhookRepository(conn, key.tenant_id, world_id).delete(webhook_id)
        await _announce(conn, key.tenant_id, world_id, webhook_id, WebhookDeleted(webhook_id=webhook_id))
    return Response(status_code=204)


@router.get(PATH + "/{webhook_id}/deliveries", response_model=Page[DeliveryOut])
async def list_deliveries(
    world_id: str,
    webhook_id: str,
    key: Reader,
    request: Request,
    cursor: CursorParam = None,
    limit: LimitParam = 100,
    status: Annotated[Status | None, Query()] = None,
) -> Page[DeliveryOut]:
    """The delivery log, oldest first."""
    after = decode_cursor("deliveries", cursor, 0)
    scope = await _owned(request, key.tenant_id, world_id, webhook_id)
    rows = await _log(request).deliveries(scope, status, after, limit)
    return Page[DeliveryOut](
        items=[_delivery(d) for d in rows],
        next_cursor=next_cursor("deliveries", rows, limit, rows[-1].delivery_id if rows else 0),
    )


@router.get(PATH + "/{webhook_id}/deliveries/{delivery_id}", response_model=DeliveryDetail)
async def get_delivery(
    world_id: str, webhook_id: str, delivery_id: DeliveryId, key: Reader, request: Request
) -> DeliveryDetail:
    scope = await _owned(request, key.tenant_id, world_id, webhook_id)
    found = await _log(request).delivery(scope, delivery_id)
    attempts = [_attempt(a) for a in found.attempts]
    return DeliveryDetail(**_delivery(found.delivery).model_dump(), attempt_log=attempts)


@router.post(
    PATH + "/{webhook_id}/deliveries/{delivery_id}/redeliver", status_code=202, response_model=DeliveryOut
)
async def redeliver(
    world_id: str, webhook_id: str, delivery_id: DeliveryId, key: Writer, request: Request
) -> DeliveryOut:
    """Queue the delivery again now (the same event_id, so receivers can dedupe)."""
    scope = await _owned(request, key.tenant_id, world_id, webhook_id)
    return _delivery(await _log(request).redeliver(scope, delivery_id))


async def _owned(request: Request, tenant_id: str, world_id: str, webhook_id: str) -> tuple[str, str, str]:
    """The caller's subscription as (tenant, world, webhook) for the delivery log; 404 when it is not."""
    async with request.app.state.pool.connection() as conn:
        await WebhookRepository(conn, tenant_id, world_id).get(webhook_id)
    return tenant_id, world_id, webhook_id


def _log(request: Request) -> HttpDeliveryLog:
    log = getattr(request.app.state, "delivery_log", None)
    if log is None:
        log = request.app.state.delivery_log = HttpDeliveryLog(request.app.state.settings.webhooks_api_url)
    return log
