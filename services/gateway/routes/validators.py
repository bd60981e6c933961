"""Validator routes: a studio's webhook that sees each decided action of a world before it takes effect.

``PUT`` registers the world's validator (replacing any other) as one ``ActionValidatorSet`` event and keeps
its signing secret apart from the event log (``npcworld.egress.secrets``), shown once in the answer;
world-state POSTs every decided action the validator applies to, signed, within its deadline
(docs/studio-controls.md).
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from psycopg import AsyncConnection
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field

from npcworld.contracts import ActionValidator, ActionValidatorSet
from npcworld.egress import check_url, new_secret, store_secret
from npcworld.errors import EgressRefusedError, NotFoundError, ValidationError
from npcworld.eventstore import EventStore, UnitOfWork
from services.gateway.deps import Reader, Writer, live_world
from services.gateway.repository import ViewRepository
from services.gateway.routes._appending import append_at_end

__all__ = ["router"]

router = APIRouter(tags=["validators"])
PATH = "/v1/worlds/{world_id}/validator"


class ValidatorIn(BaseModel):
    """Where decided actions are POSTed, how long an answer is waited for and what applies without one."""

    model_config = ConfigDict(extra="forbid")

    url: AnyHttpUrl = Field(description="public http(s) endpoint that answers accept, veto or replace")
    deadline_ms: int = Field(default=1000, ge=10, le=10000, description="how long an answer is waited for")
    on_failure: Literal["accept", "veto"] = Field(
        default="accept", description="what applies on a timeout, an error or an answer that cannot be used"
    )
    npc_ids: list[str] = Field(default_factory=list, max_length=1000, description="empty: every NPC")
    places: list[str] = Field(default_factory=list, max_length=100,
                              description="places (or anything inside them); empty: anywhere")


class ValidatorOut(ValidatorIn):
    validator_id: str
    url: AnyHttpUrl


class ValidatorCreated(ValidatorOut):
    secret: str = Field(description="HMAC-SHA256 signing secret of the calls; shown only in this response")
    event_id: str = Field(description="the ActionValidatorSet event")


@router.put(PATH, status_code=201, response_model=ValidatorCreated)
async def set_validator(world_id: str, body: ValidatorIn, key: Writer, request: Request) -> ValidatorCreated:
    """Register the world's validator (replacing any other, whose secret stops working); it sees actions
    decided from now on. The receiver must be public, as for webhooks (422 otherwise)."""
    try:
        await check_url(str(body.url), request.app.state.settings.allow_list())
    except EgressRefusedError as exc:
        raise ValidationError(f"url: {exc}; validators must be public (see docs/webhooks.md)",
                              field="url") from exc
    validator = ActionValidator(validator_id=f"val_{secrets.token_hex(8)}", url=str(body.url),
                                deadline_ms=body.deadline_ms, on_failure=body.on_failure,
                                npc_ids=tuple(body.npc_ids), places=tuple(body.places))
    secret = new_secret("vsec")
    async with request.app.state.pool.connection() as conn, conn.transaction():
        event_id = await _store(conn, key.tenant_id, world_id, ActionValidatorSet(validator=validator))
        await store_secret(conn, key.tenant_id, validator.validator_id, secret)
    return ValidatorCreated(**validator.model_dump(), secret=secret, event_id=event_id)


@router.get(PATH, response_model=ValidatorOut)
async def get_validator(world_id: str, key: Reader, request: Request) -> ValidatorOut:
    """The world's validator (never its secret); 404 when it has none."""
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        validator = await _current(conn, key.tenant_id, world_id)
    return ValidatorOut(**validator.model_dump())


@router.delete(PATH, status_code=204)
async def delete_validator(world_id: str, key: Writer, request: Request) -> Response:
    """Remove the world's validator: actions decided from now on take effect unchecked (rules still apply)."""
    async with request.app.state.pool.connection() as conn, conn.transaction():
        await live_world(conn, key.tenant_id, world_id)
        await _current(conn, key.tenant_id, world_id)
        await _store(conn, key.tenant_id, world_id, ActionValidatorSet(validator=None))
    return Response(status_code=204)


async def _current(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> ActionValidator:
    """The last validator set, from the event store; NotFoundError when there is none (or it was removed)."""
    cur = await conn.execute(
        "SELECT payload FROM world_events(%s, %s) AS events"
        " WHERE type = 'ActionValidatorSet'"
        " ORDER BY seq DESC LIMIT 1",
        (tenant_id, world_id),
    )
    row = await cur.fetchone()
    validator = ActionValidatorSet.model_validate(row[0]).validator if row else None
    if validator is None:
        raise NotFoundError(f"world {world_id!r} has no validator")
    return validator


async def _store(
    conn: AsyncConnection[Any], tenant_id: str, world_id: str, change: ActionValidatorSet
) -> str:
    """Append ``change`` stamped with the world's current time; the event's id."""
    state = await live_world(conn, tenant_id, world_id)
    when = await ViewRepository(conn).world_time(tenant_id, world_id) or state.start_time
    assert when is not None
    uow = UnitOfWork(conn, EventStore())
    event = uow.new_event(change, tenant_id=tenant_id, world_id=world_id, world_time=when)
    await append_at_end(uow, f"validator-{world_id}", event)
    return str(event.event_id)
