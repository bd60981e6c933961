"""Forgetting a player (admin scope): its data key is erased, so every word it said in the tenant's event
log reads ``[forgotten]`` from then on, and each world it talked in is told with a ``PlayerForgotten``
event, on which the services drop the memories of its chats and the NPCs' relationships with it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from psycopg import AsyncConnection
from pydantic import BaseModel, Field

from npcworld.contracts.players import PlayerForgotten
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.forgetting import forget_player_data
from npcworld.fork import world_stream
from npcworld.shredding import forgotten_among, player_known
from services.gateway.deps import Admin
from services.gateway.routes._appending import append_at_end, fold_appended

__all__ = ["refuse_forgotten", "router"]

router = APIRouter(tags=["players"])

PlayerId = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:@-]+$")]

# Replies kept for an Idempotency-Key repeat of one of the player's chats (they hold the NPC's reply).
_CHAT_REPLIES = """
DELETE FROM gw_idempotency i WHERE i.tenant_id = %(t)s AND i.path LIKE '%%/chat' AND i.body IS NOT NULL
  AND EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = %(t)s AND e.type = 'PlayerSpoke'
              AND e.payload->>'player_id' = %(p)s
              AND position(e.event_id::text IN convert_from(i.body, 'UTF8')) > 0)
"""
_SESSIONS = ("UPDATE gw_api_keys SET revoked_at = now() WHERE tenant_id = %(t)s AND player_id = %(p)s"
             " AND revoked_at IS NULL")


class ForgottenOut(BaseModel):
    player_id: str
    already_forgotten: bool = Field(description="the player had been forgotten before (nothing new to erase)")
    worlds: list[str] = Field(description="worlds told now, each with a PlayerForgotten event")
    event_ids: list[str] = Field(description="the PlayerForgotten events, one per world, in that order")
    llm_calls_redacted: int = Field(description="model calls of the player's chats whose texts were removed")


async def refuse_forgotten(conn: AsyncConnection[Any], tenant_id: str, player_id: str) -> None:
    """410 for a player the tenant has forgotten: nothing it says is stored again."""
    if await forgotten_among(conn, tenant_id, [player_id]):
        raise HTTPException(410, f"player {player_id!r} was forgotten; nothing it says is stored")


@router.delete("/v1/players/{player_id}", status_code=202, response_model=ForgottenOut)
async def forget_player(player_id: PlayerId, key: Admin, request: Request) -> ForgottenOut:
    """Forget a player of the tenant, in every world: erase its data key (its words in the log become
    unreadable at once), redact its chats' model calls, revoke its session tokens and tell each world it
    talked in (``PlayerForgotten``); memories and relationships go as the services take that event in.
    Repeating it is harmless; a player that never said anything is a 404."""
    params = {"t": key.tenant_id, "p": player_id}
    async with request.app.state.pool.connection() as conn, conn.transaction():
        if not await player_known(conn, key.tenant_id, player_id):
            raise NotFoundError(f"no player {player_id!r} has said anything here")
        done = await forget_player_data(conn, key.tenant_id, player_id)
        await conn.execute(_CHAT_REPLIES, params)
        await conn.execute(_SESSIONS, params)
        uow = UnitOfWork(conn, EventStore())
        events = [uow.new_event(PlayerForgotten(player_id=player_id), tenant_id=key.tenant_id, world_id=w,
                                world_time=at) for w, at in done.worlds]
        for event in events:
            await append_at_end(uow, world_stream(event.world_id), event)
        await fold_appended(uow)
    return ForgottenOut(player_id=player_id, already_forgotten=not done.first_time,
                        worlds=[w for w, _ in done.worlds], event_ids=[str(e.event_id) for e in events],
                        llm_calls_redacted=done.calls_redacted)
