"""Memory-service event handlers: observations and NPC seeds become memories; a deleted world is dropped."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from npcworld.contracts import (
    DayPlanned,
    Envelope,
    NpcCreated,
    ObservationMade,
    PlanItem,
    PlanRevised,
    ReflectionCompleted,
)
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from services.memory.deps import MemoryDeps
from services.memory.domain import MemoryDraft, NpcRef, persona_summary, split_seed
from services.memory.recording import is_repeated_observation, record_memories

__all__ = ["HANDLERS", "on_day_planned", "on_npc_created", "on_observation_made", "on_plan_revised",
           "on_reflection_completed", "on_world_deleted"]

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


def _plan_text(heading: str, items: tuple[PlanItem, ...]) -> str:
    steps = "; ".join(f"{i.start:%H:%M} {i.description}" for i in items)
    return f"{heading}: {steps}"[:4000]


async def on_day_planned(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """The day's outline becomes a plan memory (DESIGN.md: plans are memories too)."""
    plan = event.payload
    assert isinstance(plan, DayPlanned) and event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    goals = f" (goals: {'; '.join(plan.goals)})" if plan.goals else ""
    text = _plan_text(f"My plan for {plan.day:%A %d %B}{goals}", plan.outline)
    draft = MemoryDraft("plan", text, event.world_time, plan.outline[0].location_path)
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


async def on_plan_revised(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """A change of plans becomes a plan memory, with its reason."""
    revised = event.payload
    assert isinstance(revised, PlanRevised) and event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    text = _plan_text(f"I changed my plans from {revised.from_time:%H:%M} ({revised.reason})", revised.items)
    draft = MemoryDraft("plan", text, event.world_time, revised.items[0].location_path)
    await record_memories(uow, deps, stream, [draft], at=event.world_time)


async def on_reflection_completed(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Each insight of a reflection run becomes a reflection memory with its evidence and tree depth.

    Importance is rated like any other memory (the paper's code rates each new thought's poignancy too).
    """
    completed = event.payload
    assert isinstance(completed, ReflectionCompleted) and event.npc_id is not None
    stream = await deps.repository.ensure_npc(uow.conn, NpcRef(event.tenant_id, event.world_id, event.npc_id))
    drafts = [
        MemoryDraft("reflection", i.text, event.world_time, evidence=i.evidence, depth=i.depth)
        for i in completed.insights
    ]
    await record_memories(uow, deps, stream, drafts, at=event.world_time)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
    """Drop every memory stream of the deleted world."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


HANDLERS: dict[str, Handler] = {
    "ObservationMade": on_observation_made,
    "NpcCreated": on_npc_created,
    "WorldDeleted": on_world_deleted,
    "DayPlanned": on_day_planned,
    "PlanRevised": on_plan_revised,
    "ReflectionCompleted": on_reflection_completed,
}
