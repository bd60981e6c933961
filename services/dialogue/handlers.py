"""Dialogue-service event handlers: conversations turn by turn, player chat and interviews, and the
profiles and known places the prompts need."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeGuard

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import (
    ClockChanged,
    Envelope,
    InnerVoiceGiven,
    NpcReplied,
    PlayerSpoke,
    UtteranceSpoken,
    envelope_from_dict,
)
from npcworld.contracts.planning import ConversationRequested
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from npcworld.lanes import is_player_traffic
from npcworld.llm.streaming import ReplyChunkWriter, streaming_to
from npcworld.messaging import Prepare
from npcworld.stepping import steps
from services.dialogue.conversations import (
    PreparedLine,
    PreparedSummary,
    close_conversation,
    closing_scene,
    line_inputs,
    open_conversation,
    prepare_line,
    prepare_summary,
    speak_next,
)
from services.dialogue.deps import DialogueDeps
from services.dialogue.domain import Conversation
from services.dialogue.players import after_chat, familiarity_with, forget_player, is_forgotten
from services.dialogue.profiles import (
    on_npc_created,
    on_npc_retired,
    on_persona_changed,
    on_places_discovered,
)
from services.dialogue.repository import NpcProfile
from services.dialogue.speaking import Reply, Scene, reply_to_player

__all__ = [
    "HANDLERS",
    "PREPARE",
    "on_clock_changed",
    "on_conversation_requested",
    "on_inner_voice_given",
    "on_npc_created",
    "on_places_discovered",
    "on_player_spoke",
    "on_utterance_spoken",
    "on_world_deleted",
    "on_world_ticked",
    "prepare_lines",
    "prepare_poll",
    "prepare_replies",
]

Handler = Callable[[Envelope, UnitOfWork, DialogueDeps], Awaitable[None]]


def _npc(event: Envelope) -> str:
    if event.npc_id is None:
        raise PermanentError(f"{event.type} without npc_id")
    return event.npc_id


async def on_conversation_requested(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A reaction decided to talk: open the conversation (unless busy or cooling down) and speak first.

    In a stepped world the request waits for the next tick (``on_world_ticked``), where all of a step's
    requests are resolved in a fixed order; elsewhere, and for player traffic (which no step waits for:
    ``npcworld.lanes``), it is resolved at once."""
    request = event.payload
    assert isinstance(request, ConversationRequested)
    npc = _npc(event)
    stepped = await deps.repository.is_stepped(uow.conn, event.tenant_id, event.world_id)
    if stepped and not is_player_traffic():
        await deps.repository.queue_request(
            uow.conn, event.event_id, event.tenant_id, event.world_id, event.world_time, npc,
            request.target_npc_id, event.to_json().decode(),
        )
        return
    await _start(event, uow, deps)


async def _start(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    request = event.payload
    assert isinstance(request, ConversationRequested)
    conversation = await open_conversation(
        uow, deps, event, request.target_npc_id, reason=request.reason, location=request.location_path
    )
    if conversation is not None:
        await speak_next(uow, deps, event, conversation)


async def _start_queued(
    event: Envelope, uow: UnitOfWork, deps: DialogueDeps, before: datetime | None
) -> None:
    for queued in await deps.repository.take_requests(uow.conn, event.tenant_id, event.world_id, before):
        request = envelope_from_dict(queued)
        caused = UnitOfWork(uow.conn, uow.store, cause=request)  # the conversation is the request's effect
        await _start(request, caused, deps)
        uow.appended.extend(caused.appended)


async def on_world_ticked(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """The previous steps are digested: start their queued conversations, ordered by time and names."""
    await _start_queued(event, uow, deps, event.world_time)


async def on_clock_changed(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Remember whether the world steps; a clock that stops stepping releases what was queued."""
    clock = event.payload
    assert isinstance(clock, ClockChanged)
    stepped = steps(clock)
    await deps.repository.set_stepped(uow.conn, event.tenant_id, event.world_id, stepped)
    if not stepped:
        await _start_queued(event, uow, deps, None)


async def on_utterance_spoken(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """The listener heard a line: it replies, or the conversation closes when the line ended it."""
    spoken = event.payload
    assert isinstance(spoken, UtteranceSpoken)
    speaker = _npc(event)
    conversation = await deps.repository.get_conversation(
        uow.conn, event.tenant_id, event.world_id, spoken.conversation_id
    )
    if not _answers(conversation, spoken):
        return  # a line of a conversation that has already moved on (or belongs to another world)
    prepared = deps.prepared.pop(event.event_id, None)
    if spoken.ends:
        by_speaker = conversation.turns < deps.rules.max_utterances
        await close_conversation(uow, deps, event, conversation, speaker if by_speaker else None,
                                 prepared if isinstance(prepared, PreparedSummary) else None)
    else:
        await speak_next(uow, deps, event, conversation,
                         prepared if isinstance(prepared, PreparedLine) else None)


def _answers(conversation: Conversation | None, spoken: UtteranceSpoken) -> TypeGuard[Conversation]:
    """Is ``spoken`` the open conversation's latest line (so the listener answers it)?"""
    return conversation is not None and conversation.ended_at is None and conversation.turns == spoken.turn


async def _player_scene(conn: AsyncConnection[Any], event: Envelope, deps: DialogueDeps) -> Scene:
    said = event.payload
    assert isinstance(said, PlayerSpoke)
    npc = await deps.repository.profile(conn, event.tenant_id, event.world_id, _npc(event))
    player = NpcProfile(said.player_id, said.interviewer or f"a visitor ({said.player_id})")
    return Scene(event.tenant_id, event.world_id, event.world_time, npc, player)


async def _reply(conn: AsyncConnection[Any], event: Envelope, deps: DialogueDeps) -> Reply:
    said = event.payload
    assert isinstance(said, PlayerSpoke)
    scene = await _player_scene(conn, event, deps)
    known = await familiarity_with(conn, deps, event)
    interview = said.mode == "interview"
    return await reply_to_player(deps, scene, said.text, interview=interview, familiarity=known)


async def prepare_poll(events: list[Envelope], deps: DialogueDeps, pool: AsyncConnectionPool) -> None:
    """Make a poll's model calls before its transaction opens: player replies, then conversation lines.

    The transaction then only reads, compares and writes, so no event's model call waits behind an earlier
    event's writes, and no transaction is held open across a call. The handlers use what was prepared when
    its inputs are still what they read, and otherwise compute it themselves, as they would have.
    """
    await prepare_replies([e for e in events if e.type == "PlayerSpoke"], deps, pool)
    await prepare_lines([e for e in events if e.type == "UtteranceSpoken"], deps, pool)


async def prepare_lines(events: list[Envelope], deps: DialogueDeps, pool: AsyncConnectionPool) -> None:
    """The next line (or the closing summary) of each conversation a line of this poll moves on.

    One after another, in the poll's order: a speaker's retrievals mark memories accessed, which later
    retrievals' recency reads, so the order stays the one the handlers would have used.
    """
    for event in events:
        spoken = event.payload
        assert isinstance(spoken, UtteranceSpoken)
        with handling(event.event_id, event.correlation_id):
            async with pool.connection() as conn:  # read, then give the connection back before the call
                conversation = await deps.repository.get_conversation(
                    conn, event.tenant_id, event.world_id, spoken.conversation_id
                )
                if not _answers(conversation, spoken):
                    continue
                if spoken.ends:
                    scene = await closing_scene(conn, deps, event, conversation)
                else:
                    inputs = await line_inputs(conn, deps, event, conversation)
            deps.prepared[event.event_id] = (
                await prepare_summary(deps, conversation, scene) if spoken.ends
                else await prepare_line(deps, inputs)
            )


async def prepare_replies(events: list[Envelope], deps: DialogueDeps, pool: AsyncConnectionPool) -> None:
    """Compute a poll's player replies concurrently.

    Each reply only reads (the NPC's profile and memories) and calls the LLM layer, so replies to different
    players need not wait for one another, and none waits inside the poll's transaction. ``on_player_spoke``
    takes its reply from here (or computes it itself when preparing failed).
    """
    gate = asyncio.Semaphore(deps.prepare_concurrency)

    async def one(event: Envelope) -> None:
        said = event.payload
        assert isinstance(said, PlayerSpoke)
        async with gate:
            with handling(event.event_id, event.correlation_id):
                async with pool.connection() as conn:
                    if await is_forgotten(conn, deps, event):
                        return
                    scene = await _player_scene(conn, event, deps)
                    known = await familiarity_with(conn, deps, event)
                # The reply's text goes to the chat's stream as the LLM layer produces it (GET …/stream).
                chunks = ReplyChunkWriter(pool, event.event_id, event.tenant_id, event.world_id)
                try:
                    async with streaming_to(chunks):
                        deps.prepared[event.event_id] = await reply_to_player(
                            deps, scene, said.text, interview=said.mode == "interview", familiarity=known
                        )
                finally:
                    await chunks.aclose()

    await asyncio.gather(*(one(e) for e in events))


PREPARE = Prepare(frozenset({"PlayerSpoke", "UtteranceSpoken"}), prepare_poll)


async def on_player_spoke(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A player (or interviewer) spoke to the NPC: reply from its memories. A chat (not an interview) also
    moves the NPC's relationship with the player (``players.after_chat``); nothing else changes."""
    said = event.payload
    assert isinstance(said, PlayerSpoke)
    npc = _npc(event)
    if await is_forgotten(uow.conn, deps, event):
        return  # forgotten while its line was on the way: nothing of it is stored again
    reply = deps.prepared.pop(event.event_id, None) or await _reply(uow.conn, event, deps)
    replied = NpcReplied(
        player_id=said.player_id,
        text=reply.text,
        in_reply_to=str(event.event_id),
        provider=reply.provider,
        mode=said.mode,
        memory_ids=reply.memory_ids,
        heard=said.text,
    )
    out = [uow.new_event(replied)]
    if said.mode == "chat":
        out.append(uow.new_event(await after_chat(uow.conn, deps, event, reply)))
    await uow.append(f"chat-{event.world_id}-{npc}", out)


async def on_inner_voice_given(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """The NPC adopts the directive as its own intention; it speaks from it in its next conversations."""
    given = event.payload
    assert isinstance(given, InnerVoiceGiven)
    await deps.repository.add_intention(
        uow.conn, event.tenant_id, event.world_id, _npc(event), given.directive
    )


async def on_player_forgotten(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A player was forgotten: the world's NPCs drop their relationships with it."""
    await forget_player(uow.conn, deps, event)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Drop the deleted world's conversations, relationships and profiles."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


HANDLERS: dict[str, Handler] = {
    "ConversationRequested": on_conversation_requested,
    "WorldTicked": on_world_ticked,
    "ClockChanged": on_clock_changed,
    "UtteranceSpoken": on_utterance_spoken,
    "PlayerSpoke": on_player_spoke,
    "PlayerForgotten": on_player_forgotten,
    "InnerVoiceGiven": on_inner_voice_given,
    "NpcCreated": on_npc_created,
    "NpcPersonaChanged": on_persona_changed,
    "NpcRetired": on_npc_retired,
    "PlacesDiscovered": on_places_discovered,
    "WorldDeleted": on_world_deleted,
}
