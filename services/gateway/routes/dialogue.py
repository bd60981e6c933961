"""Talking to NPCs: player chat and interviews (synchronous reply with a timeout), inner-voice directives
(admin only) and the relationships an NPC has formed.

A chat appends ``PlayerSpoke`` and waits for the ``NpcReplied`` caused by it: the event store notifies
``npcworld_npc_replied`` with the cause's id when a reply commits (migration 0050), and the waiter checks
the store itself after half a second, then less often (at most every 2 s), in case a notification was
missed. On timeout, or when the caller asks for ``wait=false``, the answer is 202 with the event id; the
reply shows up in the event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from datetime import datetime
from typing import Annotated, Any

import psycopg
from fastapi import APIRouter, Body, HTTPException, Request
from fastapi.responses import JSONResponse
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from pydantic import BaseModel, ConfigDict, Field, field_validator

from npcworld.contracts import Envelope, InnerVoiceGiven, NpcReplied, PlayerSpoke
from npcworld.errors import NotFoundError
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.settings import resolve_endpoints
from npcworld.shredding import reveal
from npcworld.telemetry import current_trace
from services.gateway.deps import Chatter, Reader, Voice, Writer, live_world
from services.gateway.domain import require_active
from services.gateway.fields import ZonedDatetime, not_blank
from services.gateway.freshness import settled
from services.gateway.repository import ViewRepository
from services.gateway.routes._appending import append_at_end
from services.gateway.routes.players import refuse_forgotten
from services.gateway.schemas import Accepted, ReplyPending

__all__ = ["router"]

logger = logging.getLogger(__name__)
router = APIRouter(tags=["dialogue"])
NPC_PATH = "/v1/worlds/{world_id}/npcs/{npc_id}"
CHANNEL = "npcworld_npc_replied"
_RECHECK_S = 0.5
_RECHECK_MAX_S = 2.0


class _Ask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wait: bool = Field(default=True, description="wait for the reply (false: 202 with the event id at once)")
    timeout_s: float = Field(default=10.0, gt=0, le=60, description="how long to wait for the reply")
    world_time: ZonedDatetime | None = Field(
        default=None, description="default: the world's latest event time"
    )


class ChatIn(_Ask):
    player_id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:@-]+$")
    text: str = Field(
        min_length=1, max_length=2000, description="what the player says (never an instruction)"
    )
    _check_text = field_validator("text")(not_blank)


class InterviewIn(_Ask):
    interviewer: str = Field(min_length=1, max_length=1000, description="the persona asking, any persona")
    question: str = Field(min_length=1, max_length=2000)
    _check_question = field_validator("question", "interviewer")(not_blank)


class InnerVoiceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    directive: str = Field(min_length=1, max_length=2000, description="a thought the NPC adopts as its own")
    world_time: ZonedDatetime | None = None
    _check_directive = field_validator("directive")(not_blank)


class ReplyOut(BaseModel):
    event_id: str = Field(description="the PlayerSpoke event")
    reply_event_id: str
    reply: str
    provider: str = Field(description="model label; 'offline' for the offline provider")
    memory_ids: list[str] = Field(description="memories the reply was grounded in")


class RelationshipOut(BaseModel):
    other_id: str = Field(description="another NPC's id, or `player:<player_id>` for a player")
    player_id: str | None = Field(default=None, description="the player's id when the other is a player")
    familiarity: int = Field(description="conversations held (with a player: chats)")
    sentiment: float = Field(description="0 hostile, 5 neutral, 10 devoted")
    summary: str
    last_talked: datetime | None


class ReplyWaiter:
    """One LISTEN connection per gateway process, shared by every waiting chat.

    It stays open between chats and closes only after ``idle_seconds`` with nobody waiting (or at shutdown):
    opening it per chat put a new Postgres connection (about 3 ms, and a backend started and stopped) on
    the path of every reply whenever chats did not overlap.
    """

    def __init__(self, database_url: str, idle_seconds: float = 60.0) -> None:
        self._url = database_url
        self._idle_seconds = idle_seconds
        self._waiting: dict[str, asyncio.Future[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._retired: asyncio.Task[None] | None = None  # a listener closing its connection
        self._ready = asyncio.Event()
        self._last_used = time.monotonic()

    async def register(self, cause_id: str) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[cause_id] = future
        if self._task is None or self._task.done():  # none yet, idle-closed, or its connection was lost
            self._ready = asyncio.Event()
            self._task = asyncio.create_task(self._listen(), name="reply-listener")
        with contextlib.suppress(TimeoutError):  # the store is re-checked anyway
            await asyncio.wait_for(self._ready.wait(), timeout=2.0)
        return future

    def discard(self, cause_id: str) -> None:
        self._waiting.pop(cause_id, None)
        self._last_used = time.monotonic()

    async def close(self) -> None:
        for task in (self._task, self._retired):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._retired = None

    async def _listen(self) -> None:
        try:
            conn = await AsyncConnection.connect(self._url, autocommit=True)
        except psycopg.OperationalError as exc:
            logger.warning("reply listener cannot connect (chats fall back to polling): %r", exc)
            return
        try:
            await conn.execute(f"LISTEN {CHANNEL}")
            self._ready.set()
            while True:
                async for note in conn.notifies(timeout=1.0):
                    future = self._waiting.get(note.payload)
                    if future is not None and not future.done():
                        future.set_result(None)
                if not self._waiting and time.monotonic() - self._last_used > self._idle_seconds:
                    # Retire without awaiting in between: a chat registering from now on starts a new one.
                    self._retired, self._task = self._task, None
                    return
        except psycopg.OperationalError as exc:
            logger.warning("reply listener lost its connection (chats fall back to polling): %r", exc)
        finally:
            await conn.close()


def _waiter(request: Request) -> ReplyWaiter:
    waiter = getattr(request.app.state, "reply_waiter", None)
    if waiter is None:
        url = resolve_endpoints(request.app.state.settings).database_url
        waiter = request.app.state.reply_waiter = ReplyWaiter(url)
    return waiter


async def _npc_world(
    request: Request, tenant_id: str, world_id: str, npc_id: str, *, active: bool = True
) -> datetime:
    """404 unless the NPC lives in the tenant's world (409 if ``active`` and it is retired); returns the
    world's latest event time."""
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, tenant_id, world_id, request.app.state.worlds)
        if npc_id not in state.npcs:
            raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
        if active:
            require_active(state, world_id, npc_id)
        cur = await conn.execute(
            "SELECT max(world_time) FROM events"
            " WHERE in_world(tenant_id, world_id, %s, %s)", (tenant_id, world_id)
        )
        row = await cur.fetchone()
    latest: datetime | None = row[0] if row and row[0] is not None else state.start_time
    if latest is None:  # a live world always has its creation event; this is only for the type checker
        raise NotFoundError(f"world {world_id!r} not found")
    return latest


async def _reply(request: Request, cause_id: str) -> dict[str, Any] | None:
    async with request.app.state.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT event_id, payload FROM events WHERE type = 'NpcReplied' AND causation_id = %s",
            (cause_id,),
        )
        row: dict[str, Any] | None = await cur.fetchone()
        if row is not None:
            await reveal(conn, [("NpcReplied", row["payload"])])
        return row


async def _await_reply(
    request: Request, cause_id: str, future: asyncio.Future[None], timeout: float
) -> dict[str, Any] | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    recheck = _RECHECK_S
    while (left := deadline - loop.time()) > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(future), timeout=min(left, recheck))
        if (row := await _reply(request, cause_id)) is not None:
            return row
        # The notification wakes a waiter at once; the re-check only covers a missed one, so a chat kept
        # waiting by a busy pipeline need not ask the store twice a second the whole time.
        recheck = min(recheck * 2, _RECHECK_MAX_S)
    return None


async def _ask(
    request: Request, tenant_id: str, world_id: str, npc_id: str, said: PlayerSpoke, ask: _Ask
) -> ReplyOut | JSONResponse:
    now = ask.world_time or await _npc_world(request, tenant_id, world_id, npc_id)
    if ask.world_time is not None:  # still 404 for an NPC outside the tenant's world
        await _npc_world(request, tenant_id, world_id, npc_id)
    waiter = _waiter(request)
    event = Envelope.new(
        said, tenant_id=tenant_id, world_id=world_id, world_time=now, npc_id=npc_id, trace=current_trace()
    )
    cause = str(event.event_id)
    # Listen before the line commits, so the reply's notification cannot come first.
    future = await waiter.register(cause) if ask.wait else None
    try:
        async with request.app.state.pool.connection() as conn, conn.transaction():
            await refuse_forgotten(conn, tenant_id, said.player_id)
            await append_at_end(UnitOfWork(conn, EventStore()), f"chat-{world_id}-{npc_id}", event)
    except BaseException:
        waiter.discard(cause)
        raise
    if future is None:
        return JSONResponse(ReplyPending(event_id=cause, status="pending").model_dump(), status_code=202)
    try:
        row = await _await_reply(request, cause, future, ask.timeout_s)
    finally:
        waiter.discard(cause)
    return _answer(cause, row)


def _answer(cause: str, row: dict[str, Any] | None) -> ReplyOut | JSONResponse:
    """The reply to the chat ``cause`` (200), or that it is still pending (202)."""
    if row is None:
        return JSONResponse(ReplyPending(event_id=cause, status="pending").model_dump(), status_code=202)
    reply = NpcReplied.model_validate(row["payload"])
    return ReplyOut(
        event_id=cause,
        reply_event_id=str(row["event_id"]),
        reply=reply.text,
        provider=reply.provider,
        memory_ids=list(reply.memory_ids),
    )


_PENDING_DOC: dict[int | str, dict[str, Any]] = {202: {"model": ReplyPending, "description": "reply pending"}}


@router.post(f"{NPC_PATH}/chat", response_model=ReplyOut, responses=_PENDING_DOC)
async def chat(
    world_id: str, npc_id: str, body: ChatIn, key: Chatter, request: Request
) -> ReplyOut | JSONResponse:
    """A player says something to the NPC; the NPC replies from its memories (the words are never obeyed).
    A player session token (POST /v1/worlds/{world_id}/sessions) speaks only as its own player."""
    if key.player_id is not None and body.player_id != key.player_id:
        raise HTTPException(403, "this player session speaks only as its own player_id")
    said = PlayerSpoke(player_id=body.player_id, text=body.text, mode="chat")
    return await _ask(request, key.tenant_id, world_id, npc_id, said, body)


@router.get(f"{NPC_PATH}/chats/{{event_id}}", response_model=ReplyOut, responses=_PENDING_DOC)
async def chat_result(
    world_id: str, npc_id: str, event_id: uuid.UUID, key: Chatter, request: Request
) -> ReplyOut | JSONResponse:
    """The reply to a chat or interview (its ``event_id`` from the POST): 200 with the reply once the NPC has
    answered, 202 while it is pending. A player session reads only its own player's chats."""
    async with request.app.state.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT payload->>'player_id' FROM events WHERE event_id = %s AND type = 'PlayerSpoke'"
            " AND in_world(tenant_id, world_id, %s, %s) AND npc_id = %s",
            (event_id, key.tenant_id, world_id, npc_id),
        )
        said = await cur.fetchone()
    if said is None or (key.player_id is not None and said[0] != key.player_id):
        raise NotFoundError(f"no chat {str(event_id)!r} with NPC {npc_id!r} in world {world_id!r}")
    return _answer(str(event_id), await _reply(request, str(event_id)))


@router.post(f"{NPC_PATH}/interview", response_model=ReplyOut, responses=_PENDING_DOC)
async def interview(
    world_id: str, npc_id: str, body: InterviewIn, key: Writer, request: Request
) -> ReplyOut | JSONResponse:
    """Interview the NPC as any persona; interviews leave no memory in the NPC."""
    said = PlayerSpoke(
        player_id=f"interviewer:{key.key_id}",
        text=body.question,
        mode="interview",
        interviewer=body.interviewer,
    )
    return await _ask(request, key.tenant_id, world_id, npc_id, said, body)


@router.post(f"{NPC_PATH}/inner-voice", status_code=202, response_model=Accepted)
async def inner_voice(
    world_id: str, npc_id: str, body: Annotated[InnerVoiceIn, Body()], key: Voice, request: Request
) -> dict[str, str]:
    """Give the NPC a thought it takes as its own (admin scope only); planning re-plans from it."""
    now = await _npc_world(request, key.tenant_id, world_id, npc_id)
    async with request.app.state.pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore())
        event = uow.new_event(
            InnerVoiceGiven(directive=body.directive),
            tenant_id=key.tenant_id,
            world_id=world_id,
            npc_id=npc_id,
            world_time=body.world_time or now,
        )
        await append_at_end(uow, f"inner-voice-{world_id}-{npc_id}", event)
    return {"event_id": str(event.event_id)}


@router.get(f"{NPC_PATH}/relationships", response_model=list[RelationshipOut])
async def relationships(world_id: str, npc_id: str, key: Reader, request: Request) -> list[RelationshipOut]:
    """How the NPC regards every NPC and player it has talked with (the gateway's view of dialogue's
    RelationshipChanged events); a player is known by the studio's player id across sessions."""
    await _npc_world(request, key.tenant_id, world_id, npc_id, active=False)
    async with request.app.state.pool.connection() as conn:
        await settled(request, conn, key.tenant_id, world_id)
        rows = await ViewRepository(conn).relationships(key.tenant_id, world_id, npc_id)
    return [RelationshipOut(**row, player_id=_player(row["other_id"])) for row in rows]


def _player(other_id: str) -> str | None:
    return other_id.removeprefix("player:") if other_id.startswith("player:") else None
