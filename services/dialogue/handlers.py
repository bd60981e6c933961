"""Dialogue-service event handlers: conversations turn by turn, player chat and interviews, and the
profiles and known places the prompts need.

Every model call and retrieval is gathered before the transaction (``services.dialogue.gathering``, the
routes' gather steps); the handlers here are the apply steps, which use what was gathered while it is still
current and work it out again otherwise.
"""

from __future__ import annotations

from datetime import datetime

from npcworld.contracts import (
    ClockChanged,
    ConversationRequested,
    Envelope,
    InnerVoiceGiven,
    NpcCreated,
    NpcPersonaChanged,
    NpcReplied,
    NpcRetired,
    PlacesDiscovered,
    PlayerSpoke,
    UtteranceSpoken,
    WorldDeleted,
    WorldForked,
    WorldTicked,
    carries,
    envelope_from_dict,
)
from npcworld.contracts.players import PlayerForgotten
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from npcworld.fork import fork_intake
from npcworld.lanes import is_player_traffic
from npcworld.messaging import Routes, on
from npcworld.stepping import steps
from services.dialogue.conversations import (
    PreparedLine,
    PreparedSummary,
    close_conversation,
    open_conversation,
    speak_next,
)
from services.dialogue.deps import DialogueDeps
from services.dialogue.gathering import (
    Openings,
    answers,
    gather_lines,
    gather_openings,
    gather_queued,
    gather_replies,
)
from services.dialogue.players import after_chat, familiarity_with, forget_player, is_forgotten, player_scene
from services.dialogue.profiles import (
    on_npc_created,
    on_npc_retired,
    on_persona_changed,
    on_places_discovered,
)
from services.dialogue.speaking import Reply, reply_to_player

__all__ = [
    "ROUTES",
    "on_clock_changed",
    "on_conversation_requested",
    "on_inner_voice_given",
    "on_npc_created",
    "on_places_discovered",
    "on_player_spoke",
    "on_utterance_spoken",
    "on_world_deleted",
    "on_world_ticked",
]


def _npc(event: Envelope) -> str:
    if event.npc_id is None:
        raise PermanentError(f"{event.type} without npc_id")
    return event.npc_id


async def on_conversation_requested(
    event: Envelope[ConversationRequested], uow: UnitOfWork, deps: DialogueDeps, opening: PreparedLine | None
) -> None:
    """A reaction decided to talk: open the conversation (unless busy or cooling down) and speak first.

    In a stepped world the request waits for the next tick (``on_world_ticked``), where all of a step's
    requests are resolved in a fixed order; elsewhere, and for player traffic (which no step waits for:
    ``npcworld.lanes``), it is resolved at once, with the opening line ``gather_openings`` made."""
    request = event.payload
    npc = _npc(event)
    stepped = await deps.repository.is_stepped(uow.conn, event.tenant_id, event.world_id)
    if stepped and not is_player_traffic():
        await deps.repository.queue_request(
            uow.conn, event.event_id, event.tenant_id, event.world_id, event.world_time, npc,
            request.target_npc_id, event.to_json().decode(),
        )
        return
    await _start(event, uow, deps, opening)


async def _start(
    event: Envelope[ConversationRequested], uow: UnitOfWork, deps: DialogueDeps, opening: PreparedLine | None
) -> None:
    # Opened under the id its line was gathered for, so the line's inputs match when nothing else changed.
    gathered_id = opening.inputs.conversation.conversation_id if opening is not None else None
    conversation = await open_conversation(uow, deps, event, conversation_id=gathered_id)
    if conversation is not None:
        await speak_next(uow, deps, event, conversation, opening)


async def _start_queued(
    event: Envelope, uow: UnitOfWork, deps: DialogueDeps, before: datetime | None, openings: Openings | None
) -> None:
    for queued in await deps.repository.take_requests(uow.conn, event.tenant_id, event.world_id, before):
        request = envelope_from_dict(queued)
        if not carries(request, ConversationRequested):
            raise PermanentError(f"a queued conversation request holds a {request.type}")
        caused = UnitOfWork(uow.conn, uow.store, cause=request)  # the conversation is the request's effect
        await _start(request, caused, deps, (openings or {}).get(request.event_id))
        uow.appended.extend(caused.appended)


async def on_world_ticked(
    event: Envelope[WorldTicked], uow: UnitOfWork, deps: DialogueDeps, openings: Openings | None
) -> None:
    """The previous steps are digested: start their queued conversations, ordered by time and names, with
    the opening lines ``gather_queued`` made."""
    await _start_queued(event, uow, deps, event.world_time, openings)


async def on_clock_changed(
    event: Envelope[ClockChanged], uow: UnitOfWork, deps: DialogueDeps, openings: Openings | None
) -> None:
    """Remember whether the world steps; a clock that stops stepping releases what was queued."""
    clock = event.payload
    stepped = steps(clock)
    await deps.repository.set_stepped(uow.conn, event.tenant_id, event.world_id, stepped)
    if not stepped:
        await _start_queued(event, uow, deps, None, openings)


async def on_utterance_spoken(
    event: Envelope[UtteranceSpoken], uow: UnitOfWork, deps: DialogueDeps,
    gathered: PreparedLine | PreparedSummary | None,
) -> None:
    """The listener heard a line: it replies, or the conversation closes when the line ended it (with the
    line or summary ``gather_lines`` made, while it is still current)."""
    spoken = event.payload
    speaker = _npc(event)
    conversation = await deps.repository.get_conversation(
        uow.conn, event.tenant_id, event.world_id, spoken.conversation_id
    )
    if conversation is None or not answers(conversation, spoken):
        return  # a line of a conversation that has already moved on (or belongs to another world)
    if spoken.ends:
        by_speaker = conversation.turns < deps.rules.max_utterances
        await close_conversation(uow, deps, event, conversation, speaker if by_speaker else None,
                                 gathered if isinstance(gathered, PreparedSummary) else None)
    else:
        await speak_next(uow, deps, event, conversation,
                         gathered if isinstance(gathered, PreparedLine) else None)


async def on_player_spoke(
    event: Envelope[PlayerSpoke], uow: UnitOfWork, deps: DialogueDeps, reply: Reply | None
) -> None:
    """A player (or interviewer) spoke to the NPC: reply from its memories (the reply ``gather_replies``
    made). A chat (not an interview) also moves the NPC's relationship with the player
    (``players.after_chat``); nothing else changes."""
    said = event.payload
    npc = _npc(event)
    if await is_forgotten(uow.conn, deps, event):
        return  # forgotten while its line was on the way: nothing of it is stored again
    if reply is None:  # not gathered (the gather failed): made here, inside the transaction
        scene = await player_scene(uow.conn, event, deps)
        known = await familiarity_with(uow.conn, deps, event)
        reply = await reply_to_player(deps, scene, said.text, interview=said.mode == "interview",
                                      familiarity=known)
    replied = NpcReplied(
        player_id=said.player_id,
        text=reply.text,
        in_reply_to=str(event.event_id),
        provider=reply.provider,
        mode=said.mode,
        memory_ids=reply.memory_ids,
        heard=said.text,
    )
    out: list[Envelope] = [uow.new_event(replied)]
    if said.mode == "chat":
        out.append(uow.new_event(await after_chat(uow.conn, deps, event, reply)))
    # Players' lines come into the same stream (the gateway queues for it too): wait in line, do not race.
    stream = f"chat-{event.world_id}-{npc}"
    await uow.queue_for(event.tenant_id, stream)
    await uow.append(stream, out)


async def on_inner_voice_given(event: Envelope[InnerVoiceGiven], uow: UnitOfWork, deps: DialogueDeps) -> None:
    """The NPC adopts the directive as its own intention; it speaks from it in its next conversations."""
    given = event.payload
    await deps.repository.add_intention(
        uow.conn, event.tenant_id, event.world_id, _npc(event), given.directive
    )


async def on_player_forgotten(event: Envelope[PlayerForgotten], uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A player was forgotten: the world's NPCs drop their relationships with it."""
    await forget_player(uow.conn, deps, event)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Drop the deleted world's conversations, relationships and profiles."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


# Gathered in this order (one route after another): a poll's next lines, then its replies, then its
# opening lines, the order in which their retrievals were made when the openings were made inside the
# transaction (a retrieval notes what it read, which moves later retrievals' recency once applied). A
# line's gather reads the speakers' profiles, places and relationships, which this consumer's other events
# write: a poll is gathered in segments that end before a gathered event following such a writer.
ROUTES = Routes(
    on(UtteranceSpoken, on_utterance_spoken, gather=gather_lines),
    on(PlayerSpoke, on_player_spoke, gather=gather_replies),
    on(ConversationRequested, on_conversation_requested, gather=gather_openings),
    on(WorldTicked, on_world_ticked, gather=gather_queued),
    on(ClockChanged, on_clock_changed, gather=gather_queued),
    on(PlayerForgotten, on_player_forgotten),
    on(InnerVoiceGiven, on_inner_voice_given),
    on(NpcCreated, on_npc_created),
    on(NpcPersonaChanged, on_persona_changed),
    on(NpcRetired, on_npc_retired),
    on(PlacesDiscovered, on_places_discovered),
    on(WorldDeleted, on_world_deleted),
    # A fork's NPCs: who they are, the places they know (as in the source at the fork point).
    on(WorldForked, fork_intake({NpcCreated: on_npc_created, NpcPersonaChanged: on_persona_changed,
                                 NpcRetired: on_npc_retired, PlacesDiscovered: on_places_discovered})),
    gathers_read_writes=True,
)
