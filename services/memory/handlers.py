"""Memory-service event handlers: observations and NPC seeds become memories; a deleted world is dropped."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from psycopg_pool import AsyncConnectionPool

from npcworld.canon import canon_of
from npcworld.contracts import (
    ClockChanged,
    ConversationEnded,
    DayPlanned,
    Envelope,
    InnerVoiceGiven,
    NpcCreated,
    NpcReplied,
    ObservationMade,
    PlanItem,
    PlanRevised,
    ReflectionCompleted,
    StepCompleted,
    UtteranceSpoken,
    WorldCreated,
    WorldDeleted,
)
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from npcworld.messaging import Routes, on
from npcworld.projection import Projection
from npcworld.shredding import forgotten_among
from npcworld.stepping import steps
from services.memory import projection
from services.memory.accesses import flush_accesses
from services.memory.deps import MemoryDeps
from services.memory.domain import (
    DESIGNER,
    INFERRED,
    PLANNED,
    MemoryDraft,
    NpcRef,
    NpcStream,
    Provenance,
    chat_memories,
    corroborated,
    persona_summary,
    split_seed,
    told_by_npc,
    told_by_player,
)
from services.memory.domain.canon import claim_text, contradicted
from services.memory.holding import held_in_stepped_worlds, release_held, release_in_chunks
from services.memory.projection import NoImportanceRater
from services.memory.recording import is_repeated_observation, record_memories
from services.memory.repository import AblationRepository
from services.memory.settings import Settings

__all__ = ["ROUTES", "build_projection", "on_day_planned", "on_npc_created", "on_observation_made",
           "on_plan_revised", "on_reflection_completed", "on_world_created", "on_world_deleted"]
__all__ += ["on_conversation_ended", "on_inner_voice_given", "on_npc_replied", "on_step_released",
            "on_utterance_spoken", "release_steps"]


async def on_observation_made(event: Envelope[ObservationMade], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Record the observation unless it repeats an unchanged state the NPC stored recently."""
    obs = event.payload
    if event.npc_id is None:
        raise PermanentError("ObservationMade without npc_id")
    npc = NpcRef(event.tenant_id, event.world_id, event.npc_id)
    stream = await deps.repository.ensure_npc(uow.conn, npc)
    draft = MemoryDraft("observation", obs.description, event.world_time, obs.location, obs.subject)
    if await is_repeated_observation(uow, deps, stream, draft):
        return
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


async def on_npc_created(event: Envelope[NpcCreated], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Open the NPC's stream with its persona; each ';'-separated part of the seed becomes a seed memory."""
    created = event.payload
    npc = NpcRef(event.tenant_id, event.world_id, created.npc_id)
    persona = persona_summary(created.name, created.age, created.traits, created.occupation)
    stream = await deps.repository.ensure_npc(uow.conn, npc, name=created.name, persona=persona)
    drafts = [
        MemoryDraft("seed", part, event.world_time, created.location, provenance=DESIGNER)
        for part in split_seed(created.seed)
    ]
    await record_memories(uow, deps, stream, drafts, at=event.world_time)


def _plan_text(heading: str, items: tuple[PlanItem, ...]) -> str:
    steps = "; ".join(f"{i.start:%H:%M} {i.description}" for i in items)
    return f"{heading}: {steps}"[:4000]


async def on_day_planned(event: Envelope[DayPlanned], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """The day's outline becomes a plan memory (DESIGN.md: plans are memories too)."""
    plan = event.payload
    assert event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    goals = f" (goals: {'; '.join(plan.goals)})" if plan.goals else ""
    text = _plan_text(f"My plan for {plan.day:%A %d %B}{goals}", plan.outline)
    draft = MemoryDraft("plan", text, event.world_time, plan.outline[0].location_path, provenance=PLANNED)
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


async def on_plan_revised(event: Envelope[PlanRevised], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """A change of plans becomes a plan memory, with its reason."""
    revised = event.payload
    assert event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    text = _plan_text(f"I changed my plans from {revised.from_time:%H:%M} ({revised.reason})", revised.items)
    draft = MemoryDraft("plan", text, event.world_time, revised.items[0].location_path, provenance=PLANNED)
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


async def on_reflection_completed(
    event: Envelope[ReflectionCompleted], uow: UnitOfWork, deps: MemoryDeps
) -> None:
    """Each insight of a reflection run becomes a reflection memory with its evidence and tree depth.

    Importance is rated like any other memory (the paper's code rates each new thought's poignancy too).
    """
    completed = event.payload
    assert event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    drafts = [
        MemoryDraft("reflection", i.text, event.world_time, evidence=i.evidence, depth=i.depth,
                    provenance=INFERRED)
        for i in completed.insights
    ]
    await record_memories(uow, deps, stream, drafts, at=event.world_time)


async def on_world_created(event: Envelope[WorldCreated], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """An ablated world (evaluation): remember which memory kinds its NPCs never record."""
    created = event.payload
    if created.ablations:
        await AblationRepository().set(uow.conn, event.tenant_id, event.world_id, created.ablations)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Drop every memory stream of the deleted world."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)
    await AblationRepository().delete_world(uow.conn, event.tenant_id, event.world_id)


async def _name(uow: UnitOfWork, deps: MemoryDeps, npc: NpcRef) -> str:
    stream = await deps.repository.get_npc(uow.conn, npc)
    return (stream.name if stream else None) or npc.npc_id


async def on_utterance_spoken(event: Envelope[UtteranceSpoken], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """The listener heard a line of a conversation: an observation in the listener's stream."""
    spoken = event.payload
    assert event.npc_id is not None
    speaker = NpcRef(event.tenant_id, event.world_id, event.npc_id)
    listener = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id,
                                                                  spoken.listener_id))
    who, heard_by = await _name(uow, deps, speaker), listener.name or spoken.listener_id
    against = contradicted(spoken.text, await canon_of(uow.conn, event.tenant_id, event.world_id,
                                                       spoken.listener_id))
    text = (claim_text(who, heard_by, spoken.text, against) if against
            else f'{who} said to {heard_by}: "{spoken.text}"')
    draft = MemoryDraft("observation", text[:4000], event.world_time, spoken.location_path, who,
                        provenance=told_by_npc(event.npc_id))
    await record_memories(uow, deps, listener, [draft], at=event.world_time)


async def on_conversation_ended(
    event: Envelope[ConversationEnded], uow: UnitOfWork, deps: MemoryDeps
) -> None:
    """Each participant stores the conversation's summary (and what it agreed to) as a dialogue memory."""
    ended = event.payload
    assert event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    others = [await _name(uow, deps, NpcRef(event.tenant_id, event.world_id, p))
              for p in ended.participants if p != event.npc_id]
    agreed = "; ".join(c.description for c in ended.commitments if c.npc_id == event.npc_id)
    text = f"Conversation with {', '.join(others)}: {ended.summary}"
    text += f" I agreed to: {agreed}." if agreed else ""
    canon = await canon_of(uow.conn, event.tenant_id, event.world_id, event.npc_id)
    if against := contradicted(ended.summary, canon):  # a claim made there, not a fact
        text += f" (A claim made there is not so; I know: {against}.)"
    told = Provenance("told", ",".join(f"npc:{p}" for p in ended.participants if p != event.npc_id)[:120],
                      "medium")  # what was said there: the others' words, as the NPC summed them up
    await record_memories(uow, deps, stream, [MemoryDraft("dialogue", text[:4000], event.world_time,
                                                          provenance=told)], at=event.world_time)


async def on_npc_replied(event: Envelope[NpcReplied], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """A chat exchange: what the player said is something the NPC heard (an observation, never an
    instruction) and its reply a dialogue memory. Stored once the reply exists, so recording stays off the
    reply's critical path; interviews are not stored (an interview probes the NPC without changing it).
    """
    replied = event.payload
    assert event.npc_id is not None
    if replied.mode != "chat" or await forgotten_among(uow.conn, event.tenant_id, [replied.player_id]):
        return  # an interview, or a chat of a player forgotten since (npcworld.shredding)
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    player = f"player {replied.player_id}"
    canon = await canon_of(uow.conn, event.tenant_id, event.world_id, event.npc_id)
    against = contradicted(replied.heard, canon) if replied.heard else None
    heard = await _player_claim(uow, deps, stream, replied, against)
    times = 1 + (await deps.repository.times_told(uow.conn, stream, heard.told_by or "", replied.heard)
                 if replied.heard else 0)
    # The reply answers the player's line: it is relied on no more than that line is.
    reply = Provenance("perceived", None, heard.trust)
    drafts = [MemoryDraft(kind, text, event.world_time, subject=player,
                          provenance=heard if kind == "observation" else reply)
              for kind, text in chat_memories(stream.name or event.npc_id, replied.player_id, replied.heard,
                                              replied.text, against, times=times)]
    await record_memories(uow, deps, stream, drafts, at=event.world_time)


async def _player_claim(
    uow: UnitOfWork, deps: MemoryDeps, stream: NpcStream, replied: NpcReplied, against: str | None
) -> Provenance:
    """The player's line is the player's claim; corroborated when the NPC perceived the same before (a line
    against canon never is)."""
    if not replied.heard or against:
        return told_by_player(replied.player_id)
    seen = await deps.repository.perceived(uow.conn, stream)
    return told_by_player(replied.player_id, corroborated=corroborated(replied.heard, seen))


async def on_inner_voice_given(event: Envelope[InnerVoiceGiven], uow: UnitOfWork, deps: MemoryDeps) -> None:
    """An inner-voice directive becomes the NPC's own thought (a depth-1 reflection without evidence)."""
    given = event.payload
    assert event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    text = f'{stream.name or event.npc_id} thinks: "{given.directive}"'
    draft = MemoryDraft("reflection", text[:4000], event.world_time, depth=1, provenance=DESIGNER)
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


def build_projection() -> Projection:
    """The memory projection with the configured embedder (``npcworld replay --service memory``)."""
    settings = Settings()
    deps = MemoryDeps(embedder=settings.build_embedder(), rater=NoImportanceRater(), settings=settings)
    return projection.build_projection(deps)


# Writes that a stepped world holds until its step completes (services/memory/holding.py).
_RECORDING: Routes[MemoryDeps] = Routes(
    on(ObservationMade, on_observation_made),
    on(DayPlanned, on_day_planned),
    on(PlanRevised, on_plan_revised),
    on(ReflectionCompleted, on_reflection_completed),
    on(UtteranceSpoken, on_utterance_spoken),
    on(ConversationEnded, on_conversation_ended),
    on(NpcReplied, on_npc_replied),
    on(InnerVoiceGiven, on_inner_voice_given),
)


async def on_step_released(
    event: Envelope[StepCompleted | ClockChanged], uow: UnitOfWork, deps: MemoryDeps, released: int | None
) -> None:
    """StepCompleted, or a clock that stops stepping: record what the step held back, in a fixed order
    (normally released already, before the transaction, by ``release_steps``), then its retrievals'
    accesses (one MemoriesAccessed per NPC, ``services.memory.accesses``)."""
    await release_held(event, uow, deps, _RECORDING)
    if isinstance(event.payload, StepCompleted):
        await flush_accesses(uow, deps, event.tenant_id, event.world_id, until=event.world_time)
    elif isinstance(event.payload, ClockChanged) and not steps(event.payload):
        await flush_accesses(uow, deps, event.tenant_id, event.world_id)


async def release_steps(
    events: Sequence[Envelope[StepCompleted | ClockChanged]], deps: MemoryDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, int]:
    """The gather step of a step's end: release its held writes in short transactions of their own (their
    slow calls made with none open), so ``on_step_released`` finds little left. Returns nothing by event."""
    await release_in_chunks(events, deps, pool, _RECORDING)
    return {}


ROUTES = Routes(
    *(on(route.payload, held_in_stepped_worlds(route)) for route in _RECORDING.values()),
    on(NpcCreated, on_npc_created),
    on(WorldCreated, on_world_created),
    on(WorldDeleted, on_world_deleted),
    on(StepCompleted, on_step_released, gather=release_steps),
    on(ClockChanged, on_step_released, gather=release_steps),
)
