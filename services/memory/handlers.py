"""Memory-service event handlers: observations and NPC seeds become memories; a deleted world is dropped."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from npcworld.contracts import Envelope, NpcCreated, ObservationMade
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from services.memory.deps import MemoryDeps
from services.memory.domain import MemoryDraft, NpcRef, persona_summary, split_seed
from services.memory.recording import is_repeated_observation, record_memories

__all__ = ["HANDLERS", "on_npc_created", "on_observation_made", "on_world_deleted"]

Handler = Callable[[Envelope, UnitOfWork, MemoryDeps], Awaitable[None]]


async def on_observation_made(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Record the observation unless it repeats an unchanged state the NPC stored recently."""
    obs = event.payload
    assert isinstance(obs, ObservationMade)
    if event.npc_id is None:
        raise PermanentError("ObservationMade without npc_id")
    npc = NpcRef(event.tenant_id, event.world_id, event.npc_id)
    stream = await deps.repository.ensure_npc(uow.conn, npc)
    draft = MemoryDraft("observation", obs.description, event.world_time, obs.location, obs.subject)
    if await is_repeated_observation(uow, deps, stream, draft):
        return
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


async def on_npc_created(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Open the NPC's stream with its persona; each ';'-separated part of the seed becomes a seed memory."""
    created = event.payload
    assert isinstance(created, NpcCreated)
    npc = NpcRef(event.tenant_id, event.world_id, created.npc_id)
    persona = persona_summary(created.name, created.age, created.traits, created.occupation)
    stream = await deps.repository.ensure_npc(uow.conn, npc, name=created.name, persona=persona)
    drafts = [
        MemoryDraft("seed", part, event.world_time, created.location) for part in split_seed(created.seed)
    ]
    await record_memories(uow, deps, stream, drafts, at=event.world_time)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Drop every memory stream of the deleted world."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


HANDLERS: dict[str, Handler] = {
    "ObservationMade": on_observation_made,
    "NpcCreated": on_npc_created,
    "WorldDeleted": on_world_deleted,
}
