"""Reflection consumer handlers: accumulate importance, trigger runs, enqueue their jobs, reset on outcome."""

from __future__ import annotations

from datetime import datetime, timedelta

from npcworld.contracts import (
    Envelope,
    MemoryRecorded,
    NpcCreated,
    NpcPersonaChanged,
    ReflectionCompleted,
    ReflectionFailed,
    ReflectionTriggered,
    WorldDeleted,
    WorldForked,
)
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from npcworld.fork import fork_intake
from npcworld.messaging import Routes, on
from services.reflection.deps import ConsumerDeps
from services.reflection.domain import add_importance, complete_run, fail_run, run_key
from services.reflection.job import ReflectionJob
from services.reflection.repository import NpcKey

__all__ = [
    "ROUTES",
    "on_memory_recorded",
    "on_npc_created",
    "on_reflection_completed",
    "on_reflection_failed",
    "on_reflection_triggered",
    "on_world_deleted",
]

def _npc(event: Envelope) -> NpcKey:
    if event.npc_id is None:
        raise PermanentError(f"{event.type} without npc_id")
    return NpcKey(event.tenant_id, event.world_id, event.npc_id)


async def on_memory_recorded(event: Envelope[MemoryRecorded], uow: UnitOfWork, deps: ConsumerDeps) -> None:
    """Add the memory's importance; past the threshold, record ReflectionTriggered in this transaction.

    A run pending longer than REFLECTION_REDISPATCH_AFTER_S is enqueued again (a lost Celery message)."""
    memory = event.payload
    npc, s = _npc(event), deps.settings
    before, pending_since = await deps.repository.lock(uow.conn, npc)
    acc, trigger = add_importance(before, memory.kind, memory.importance, threshold=s.reflection_threshold,
                                  counted=frozenset(s.reflection_counted_kinds), trust=memory.trust)
    now = deps.clock()
    if trigger is not None:
        key = run_key(npc.tenant_id, npc.world_id, npc.npc_id, trigger.run)
        triggered = ReflectionTriggered(run=trigger.run, run_key=key, importance_sum=trigger.importance_sum,
                                        threshold=trigger.threshold)
        await uow.append(key, [uow.new_event(triggered)], expected_version=0)
        pending_since = now
    elif acc.pending_run is not None and _stale(pending_since, now, s.reflection_redispatch_after_s):
        await deps.queue.enqueue(_redispatch(event, npc, acc.pending_run))
        pending_since = now
    await deps.repository.save(uow.conn, npc, acc, pending_since=pending_since)


async def on_reflection_triggered(
    event: Envelope[ReflectionTriggered], uow: UnitOfWork, deps: ConsumerDeps
) -> None:
    """Enqueue the run's job. Runs at least once per trigger (the event is redelivered until this
    transaction commits), so a crash between the trigger's commit and the enqueue loses nothing."""
    triggered = event.payload
    npc = _npc(event)
    await deps.queue.enqueue(ReflectionJob(
        tenant_id=npc.tenant_id, world_id=npc.world_id, npc_id=npc.npc_id, run=triggered.run,
        run_key=triggered.run_key, world_time=event.world_time, trigger_event_id=event.event_id,
        correlation_id=event.correlation_id,
    ))


async def on_reflection_completed(
    event: Envelope[ReflectionCompleted], uow: UnitOfWork, deps: ConsumerDeps
) -> None:
    """The run completed: the accumulator starts again from 0."""
    completed = event.payload
    npc = _npc(event)
    acc, _ = await deps.repository.lock(uow.conn, npc)
    await deps.repository.save(uow.conn, npc, complete_run(acc, completed.run), pending_since=None)


async def on_reflection_failed(
    event: Envelope[ReflectionFailed], uow: UnitOfWork, deps: ConsumerDeps
) -> None:
    """The run failed: the sum is kept, and the next counted memory triggers a new run."""
    failed = event.payload
    npc = _npc(event)
    acc, _ = await deps.repository.lock(uow.conn, npc)
    await deps.repository.save(uow.conn, npc, fail_run(acc, failed.run), pending_since=None)


async def on_npc_created(
    event: Envelope[NpcCreated | NpcPersonaChanged], uow: UnitOfWork, deps: ConsumerDeps
) -> None:
    """Remember the NPC's name for the reflection prompts (also after a designer renames it)."""
    created = event.payload
    npc = NpcKey(event.tenant_id, event.world_id, created.npc_id)
    await deps.repository.set_name(uow.conn, npc, created.name)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: ConsumerDeps) -> None:
    """Forget the deleted world's accumulators."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


def _stale(pending_since: datetime | None, now: datetime, after_s: float) -> bool:
    return pending_since is not None and now - pending_since > timedelta(seconds=after_s)


def _redispatch(event: Envelope, npc: NpcKey, run: int) -> ReflectionJob:
    return ReflectionJob(
        tenant_id=npc.tenant_id, world_id=npc.world_id, npc_id=npc.npc_id, run=run,
        run_key=run_key(npc.tenant_id, npc.world_id, npc.npc_id, run), world_time=event.world_time,
        trigger_event_id=event.event_id, correlation_id=event.correlation_id,
    )


ROUTES = Routes(
    on(MemoryRecorded, on_memory_recorded),
    on(ReflectionTriggered, on_reflection_triggered),
    on(ReflectionCompleted, on_reflection_completed),
    on(ReflectionFailed, on_reflection_failed),
    on(NpcCreated, on_npc_created),
    on(NpcPersonaChanged, on_npc_created),
    on(WorldDeleted, on_world_deleted),
    # A fork's NPCs' names (its importance accumulators start empty).
    on(WorldForked, fork_intake({NpcCreated: on_npc_created, NpcPersonaChanged: on_npc_created})),
)
