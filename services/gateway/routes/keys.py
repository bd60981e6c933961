"""Tenants and API keys: a tenant's admins create, list and revoke its keys; operators create tenants.

Secrets are returned once, at creation; only their SHA-256 hashes are stored. The first tenant of a
deployment comes from ``npcworld tenant create`` (or ``POST /v1/tenants`` with GATEWAY_OPERATOR_KEY set).
"""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from npcworld.errors import ValidationError
from services.gateway.deps import Admin, Reader
from services.gateway.fields import Text, ZonedDatetime
from services.gateway.pagination import CursorParam, LimitParam, Page, decode_cursor, next_cursor
from services.gateway.repository import KeyRecord, KeyRepository

__all__ = ["router"]

router = APIRouter(tags=["tenants"])
_operator = HTTPBearer(auto_error=False, scheme_name="OperatorKey",
                       description="operator secret (GATEWAY_OPERATOR_KEY)")

Scope = Literal["read", "chat", "play", "write", "voice", "admin"]
WorldId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")]


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(min_length=1, max_length=200)
    scopes: list[Scope] = Field(
        min_length=1, max_length=6,
        description="chat (talk with NPCs), play (chat + perceptions: a game server), read, write (world"
        " administration; implies play), voice (inner voice), admin (keys; implies voice)",
    )
    worlds: list[WorldId] | None = Field(
        default=None, min_length=1, max_length=100, description="limit the key to these worlds (default: all)"
    )
    expires_at: ZonedDatetime | None = Field(default=None, description="the key stops working then")
    rate_per_second: float | None = Field(default=None, gt=0, le=100000, description="default: the gateway's")
    burst: int | None = Field(
        default=None, ge=1, le=100000, description="bucket size (default: the rate, ≥ 1)"
    )


class KeyOut(BaseModel):
    key_id: str
    name: str
    scopes: list[str]
    rate_per_second: float | None
    burst: int | None
    created_at: datetime
    revoked_at: datetime | None
    worlds: list[str] | None = None
    expires_at: datetime | None = None


class KeyCreated(KeyOut):
    secret: str = Field(description="the API key; shown only in this response")


class TenantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(min_length=1, max_length=200)


class TenantOut(BaseModel):
    tenant_id: str
    name: str
    created_at: datetime


class TenantCreated(TenantOut):
    admin_key: KeyCreated


def _key(record: KeyRecord) -> KeyOut:
    return KeyOut(
        key_id=record.key_id,
        name=record.name,
        scopes=list(record.scopes),
        rate_per_second=record.rate_per_second,
        burst=record.burst,
        created_at=record.created_at,
        revoked_at=record.revoked_at,
        worlds=list(record.worlds) if record.worlds is not None else None,
        expires_at=record.expires_at,
    )


def _check_operator(request: Request, creds: HTTPAuthorizationCredentials | None) -> None:
    expected = request.app.state.settings.gateway_operator_key
    if expected is None:
        raise HTTPException(403, "creating tenants over the API is disabled; use `npcworld tenant create`")
    if creds is None or not hmac.compare_digest(creds.credentials.encode(), expected.encode()):
        raise HTTPException(403, "only the operator key may create tenants")


@router.post("/v1/tenants", status_code=201, response_model=TenantCreated)
async def create_tenant(
    body: TenantIn,
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_operator)],
) -> TenantCreated:
    """A new tenant with one admin key (operator only)."""
    _check_operator(request, creds)
    async with request.app.state.pool.connection() as conn, conn.transaction():
        keys = KeyRepository(conn)
        tenant = await keys.create_tenant(body.name)
        record, secret = await keys.create_key(tenant.tenant_id, "admin", ("read", "write", "admin"))
    return TenantCreated(
        tenant_id=tenant.tenant_id,
        name=tenant.name,
        created_at=tenant.created_at,
        admin_key=KeyCreated(**_key(record).model_dump(), secret=secret),
    )


@router.get("/v1/tenant", response_model=TenantOut)
async def get_own_tenant(key: Reader, request: Request) -> TenantOut:
    """The tenant of the calling key."""
    async with request.app.state.pool.connection() as conn:
        tenant = await KeyRepository(conn).get_tenant(key.tenant_id)
    return TenantOut(tenant_id=tenant.tenant_id, name=tenant.name, created_at=tenant.created_at)


@router.post("/v1/keys", status_code=201, response_model=KeyCreated)
async def create_key(body: KeyIn, key: Admin, request: Request) -> KeyCreated:
    if body.expires_at is not None and body.expires_at <= datetime.now(UTC):
        raise ValidationError("expires_at must be in the future", field="expires_at")
    worlds = tuple(dict.fromkeys(body.worlds)) if body.worlds is not None else key.worlds
    if key.worlds is not None and worlds is not None and not set(worlds) <= key.worlds:
        raise HTTPException(403, "this API key is limited to other worlds")  # no wider key than its own
    async with request.app.state.pool.connection() as conn:
        record, secret = await KeyRepository(conn).create_key(
            key.tenant_id,
            body.name,
            tuple(dict.fromkeys(body.scopes)),
            rate_per_second=body.rate_per_second,
            burst=body.burst,
            worlds=tuple(sorted(worlds)) if worlds is not None else None,
            expires_at=body.expires_at,
        )
    return KeyCreated(**_key(record).model_dump(), secret=secret)


@router.get("/v1/keys", response_model=Page[KeyOut])
async def list_keys(
    key: Admin, request: Request, cursor: CursorParam = None, limit: LimitParam = 100
) -> Page[KeyOut]:
    after = decode_cursor("keys", cursor, "")
    async with request.app.state.pool.connection() as conn:
        records = await KeyRepository(conn).list_keys(key.tenant_id, after, limit)
    return Page[KeyOut](
        items=[_key(r) for r in records],
        next_cursor=next_cursor("keys", records, limit, records[-1].key_id if records else ""),
    )


@router.get("/v1/keys/{key_id}", response_model=KeyOut)
async def get_key(key_id: str, key: Admin, request: Request) -> KeyOut:
    async with request.app.state.pool.connection() as conn:
        return _key(await KeyRepository(conn).get_key(key.tenant_id, key_id))


@router.delete("/v1/keys/{key_id}", status_code=204)
async def revoke_key(key_id: str, key: Admin, request: Request) -> Response:
    """Revoke a key of this tenant; it stops authenticating at once."""
    async with request.app.state.pool.connection() as conn:
        await KeyRepository(conn).revoke_key(key.tenant_id, key_id)
    return Response(status_code=204)
