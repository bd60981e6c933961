"""Dialogue-service event handlers: conversations turn by turn, player chat and interviews, and the
profiles and known places the prompts need."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from npcworld.contracts import (
    Envelope,
    InnerVoiceGiven,
    NpcCreated,
    NpcReplied,
    PlacesDiscovered,
    PlayerSpoke,
    UtteranceSpoken,
)
from npcworld.contracts.planning import ConversationRequested
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from services.dialogue.conversations import close_conversation, open_conversation, speak_next
from services.dialogue.deps import DialogueDeps
from services.dialogue.repository import NpcProfile
from services.dialogue.speaking import Scene, reply_to_player

__all__ = [
    "HANDLERS",
    "on_conversation_requested",
    "on_inner_voice_given",
    "on_npc_created",
    "on_places_discovered",
    "on_player_spoke",
    "on_utterance_spoken",
    "on_world_deleted",
]

Handler = Callable[[Envelope, UnitOfWork, DialogueDeps], Awaitable[None]]


def _npc(event: Envelope) -> str:
    if event.npc_id is None:
        raise PermanentError(f"{event.type} without npc_id")
    return event.npc_id


async def on_conversation_requested(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A reaction decided to talk: open the conversation (unless busy or cooling down) and speak first."""
    request = event.payload
    assert isinstance(request, ConversationRequested)
    _npc(event)
    conversation = await open_conversation(
        uow, deps, event, request.target_npc_id, reason=request.reason, location=request.location_path
    )
    if conversation is not None:
        await speak_next(uow, deps, event, conversation)


async def on_utterance_spoken(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """The listener heard a line: it replies, or the conversation closes when the line ended it."""
    spoken = event.payload
    assert isinstance(spoken, UtteranceSpoken)
    speaker = _npc(event)
    conversation = await deps.repository.get_conversation(
        uow.conn, event.tenant_id, event.world_id, spoken.conversation_id
    )
    if conversation is None or conversation.ended_at is not None or conversation.turns != spoken.turn:
        return  # a line of a conversation that has already moved on (or belongs to another world)
    if spoken.ends:
        by_speaker = conversation.turns < deps.rules.max_utterances
        await close_conversation(uow, deps, event, conversation, speaker if by_speaker else None)
    else:
        await speak_next(uow, deps, event, conversation)


async def on_player_spoke(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A player (or interviewer) spoke to the NPC: reply from its memories; nothing else changes."""
    said = event.payload
    assert isinstance(said, PlayerSpoke)
    npc = await deps.repository.profile(uow.conn, event.tenant_id, event.world_id, _npc(event))
    player = NpcProfile(said.player_id, said.interviewer or f"a visitor ({said.player_id})")
    scene = Scene(event.tenant_id, event.world_id, event.world_time, npc, player)
    reply = await reply_to_player(deps, scene, said.text, interview=said.mode == "interview")
    replied = NpcReplied(
        player_id=said.player_id,
        text=reply.text,
        in_reply_to=str(event.event_id),
        provider=reply.provider,
        mode=said.mode,
        memory_ids=reply.memory_ids,
        heard=said.text,
    )
    await uow.append(f"chat-{event.world_id}-{npc.npc_id}", [uow.new_event(replied)])


async def on_inner_voice_given(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """The NPC adopts the directive as its own intention; it speaks from it in its next conversations."""
    given = event.payload
    assert isinstance(given, InnerVoiceGiven)
    await deps.repository.add_intention(
        uow.conn, event.tenant_id, event.world_id, _npc(event), given.directive
    )


async def on_npc_created(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Keep the NPC's name and persona for prompts, and the places it knows from the start."""
    created = event.payload
    assert isinstance(created, NpcCreated)
    traits = ", ".join(created.traits)
    persona = "; ".join(
        p
        for p in (f"age {created.age}" if created.age is not None else "", traits, created.occupation or "")
        if p
    )
    await deps.repository.save_npc(
        uow.conn, event.tenant_id, event.world_id, NpcProfile(created.npc_id, created.name, persona)
    )
    if created.known_places:
        await deps.repository.add_places(
            uow.conn, event.tenant_id, event.world_id, created.npc_id, created.known_places
        )


async def on_places_discovered(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Remember the places the NPC knows (a commitment's place is resolved against them)."""
    found = event.payload
    assert isinstance(found, PlacesDiscovered)
    await deps.repository.add_places(uow.conn, event.tenant_id, event.world_id, _npc(event), found.paths)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Drop the deleted world's conversations, relationships and profiles."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


HANDLERS: dict[str, Handler] = {
    "ConversationRequested": on_conversation_requested,
    "UtteranceSpoken": on_utterance_spoken,
    "PlayerSpoke": on_player_spoke,
    "InnerVoiceGiven": on_inner_voice_given,
    "NpcCreated": on_npc_created,
    "PlacesDiscovered": on_places_discovered,
    "WorldDeleted": on_world_deleted,
}
