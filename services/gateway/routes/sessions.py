"""Player session tokens: a game server (a ``play`` key) mints one per player, so a game client never holds
a studio key. A session token is short-lived, limited to one world and one player, and may only chat with
that world's NPCs, as that player (``services.gateway.domain.grants``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from services.gateway.deps import Player, live_world
from services.gateway.repository import KeyRepository

__all__ = ["router"]

router = APIRouter(tags=["sessions"])

MAX_TTL_S = 24 * 3600


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    player_id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:@-]+$",
                           description="the player this token speaks as (chat's player_id)")
    ttl_seconds: int = Field(default=3600, ge=60, le=MAX_TTL_S, description="lifetime, 60 s to 24 h")


class SessionOut(BaseModel):
    session_id: str = Field(description="revoke it early with DELETE /v1/keys/{session_id}")
    token: str = Field(description="bearer token for the player's client; shown only in this response")
    world_id: str
    player_id: str
    scopes: list[str]
    expires_at: datetime


@router.post("/v1/worlds/{world_id}/sessions", status_code=201, response_model=SessionOut)
async def create_session(world_id: str, body: SessionIn, key: Player, request: Request) -> SessionOut:
    """A token for one player of this world: it can chat with the world's NPCs as ``player_id`` and nothing
    else, until ``expires_at``."""
    expires_at = datetime.now(UTC) + timedelta(seconds=body.ttl_seconds)
    async with request.app.state.pool.connection() as conn, conn.transaction():
        await live_world(conn, key.tenant_id, world_id)
        record, token = await KeyRepository(conn).create_key(
            key.tenant_id, f"session {body.player_id}", ("chat",), rate_per_second=key.rate_per_second,
            burst=key.burst, worlds=(world_id,), expires_at=expires_at, player_id=body.player_id,
        )
    assert record.expires_at is not None
    return SessionOut(session_id=record.key_id, token=token, world_id=world_id, player_id=body.player_id,
                      scopes=list(record.scopes), expires_at=record.expires_at)
