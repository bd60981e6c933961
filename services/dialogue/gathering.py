"""Dialogue's gather steps: every model call and retrieval of a poll, made before its transaction opens.

Each reads what its apply step will read (on a pool connection given back before the call), makes the call,
and returns the result by event id; the apply step (``services.dialogue.handlers``) uses a result only while
what it was made from is what the transaction reads, and otherwise works it out again, as it would have.
Gathers of one route run one event after another where order matters (a speaker's retrievals note their
accesses, which move later retrievals' recency once applied) and concurrently where it does not (player
replies).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import (
    ClockChanged,
    ConversationRequested,
    Envelope,
    PlayerSpoke,
    UtteranceSpoken,
    WorldTicked,
    carries,
    envelope_from_dict,
)
from npcworld.lanes import is_player_traffic
from npcworld.llm.streaming import ReplyChunkWriter, streaming_to
from npcworld.stepping import steps
from services.dialogue.conversations import (
    PreparedLine,
    PreparedSummary,
    closing_scene,
    line_inputs,
    opening,
    prepare_line,
    prepare_summary,
)
from services.dialogue.deps import DialogueDeps
from services.dialogue.domain import Conversation
from services.dialogue.players import familiarity_with, is_forgotten, player_scene
from services.dialogue.speaking import Reply, reply_to_player

__all__ = ["Openings", "answers", "gather_lines", "gather_openings", "gather_queued", "gather_replies"]

# A tick's (or a clock change's) queued requests' opening lines, by request event id.
Openings = Mapping[uuid.UUID, PreparedLine]


def answers(conversation: Conversation | None, spoken: UtteranceSpoken) -> bool:
    """Is ``spoken`` the open conversation's latest line (so the listener answers it)?"""
    return conversation is not None and conversation.ended_at is None and conversation.turns == spoken.turn


async def gather_lines(
    events: Sequence[Envelope[UtteranceSpoken]], deps: DialogueDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, PreparedLine | PreparedSummary]:
    """The next line (or the closing summary) of each conversation a line of this poll moves on.

    One after another, in the poll's order: a speaker's retrievals note their accesses, which move later
    retrievals' recency once applied, so the order stays the one the handlers would have used.
    """
    out: dict[uuid.UUID, PreparedLine | PreparedSummary] = {}
    for event in events:
        spoken = event.payload
        with handling(event.event_id, event.correlation_id):
            async with pool.connection() as conn:  # read, then give the connection back before the call
                conversation = await deps.repository.get_conversation(
                    conn, event.tenant_id, event.world_id, spoken.conversation_id
                )
                if conversation is None or not answers(conversation, spoken):
                    continue
                if spoken.ends:
                    scene = await closing_scene(conn, deps, event, conversation)
                else:
                    inputs = await line_inputs(conn, deps, event, conversation)
            out[event.event_id] = (
                await prepare_summary(deps, conversation, scene) if spoken.ends
                else await prepare_line(deps, inputs)
            )
    return out


async def gather_replies(
    events: Sequence[Envelope[PlayerSpoke]], deps: DialogueDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, Reply]:
    """Compute a poll's player replies concurrently.

    Each reply only reads (the NPC's profile and memories) and calls the LLM layer, so replies to different
    players need not wait for one another, and none waits inside the poll's transaction.
    """
    gate = asyncio.Semaphore(deps.prepare_concurrency)
    out: dict[uuid.UUID, Reply] = {}

    async def one(event: Envelope[PlayerSpoke]) -> None:
        said = event.payload
        async with gate:
            with handling(event.event_id, event.correlation_id):
                async with pool.connection() as conn:
                    if await is_forgotten(conn, deps, event):
                        return
                    scene = await player_scene(conn, event, deps)
                    known = await familiarity_with(conn, deps, event)
                # The reply's text goes to the chat's stream as the LLM layer produces it (GET …/stream).
                chunks = ReplyChunkWriter(pool, event.event_id, event.tenant_id, event.world_id)
                try:
                    async with streaming_to(chunks):
                        out[event.event_id] = await reply_to_player(
                            deps, scene, said.text, interview=said.mode == "interview", familiarity=known
                        )
                finally:
                    await chunks.aclose()

    await asyncio.gather(*(one(e) for e in events))
    return out


async def gather_openings(
    events: Sequence[Envelope[ConversationRequested]], deps: DialogueDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, PreparedLine]:
    """The opening lines of the requests this poll starts at once (not queued for a step), in its order."""
    started = []
    for event in events:
        async with pool.connection() as conn:
            stepped = await deps.repository.is_stepped(conn, event.tenant_id, event.world_id)
        if not stepped or is_player_traffic():
            started.append(event)
    return await _openings(started, deps, pool)


async def gather_queued(
    events: Sequence[Envelope[WorldTicked | ClockChanged]], deps: DialogueDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, Openings]:
    """For each tick (or clock that stops stepping), the opening lines of the queued requests it starts."""
    out: dict[uuid.UUID, Openings] = {}
    for event in events:
        if carries(event, ClockChanged) and steps(event.payload):
            continue
        before: datetime | None = event.world_time if carries(event, WorldTicked) else None
        async with pool.connection() as conn:
            queued = await deps.repository.peek_requests(conn, event.tenant_id, event.world_id, before)
        requests = [r for q in queued if carries(r := envelope_from_dict(q), ConversationRequested)]
        out[event.event_id] = await _openings(requests, deps, pool)
    return out


async def _openings(
    requests: Sequence[Envelope[ConversationRequested]], deps: DialogueDeps, pool: AsyncConnectionPool
) -> dict[uuid.UUID, PreparedLine]:
    """Each request's opening line, deciding in order whether it opens as its apply step will (a
    conversation opened earlier in the list makes its participants busy for the later ones)."""
    opened: list[Conversation] = []
    out: dict[uuid.UUID, PreparedLine] = {}
    for request in requests:
        with handling(request.event_id, request.correlation_id):
            async with pool.connection() as conn:
                conversation = await opening(conn, deps, request, request.payload, also_open=opened)
                if isinstance(conversation, str):
                    continue
                inputs = await line_inputs(conn, deps, request, conversation)
            opened.append(conversation)
            out[request.event_id] = await prepare_line(deps, inputs)
    return out
