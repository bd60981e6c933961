"""Reflection consumer handlers with fakes: triggers, enqueueing, reset, and the re-enqueue of a stale run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from npcworld.contracts import Envelope, EventPayload, MemoryRecorded, ReflectionCompleted, ReflectionInsight
from npcworld.eventstore import UnitOfWork
from services.reflection.deps import ConsumerDeps
from services.reflection.handlers import ROUTES
from services.reflection.repository import NpcKey
from services.reflection.settings import ReflectionSettings
from tests.unit.reflection.fakes import FakeEventStore, FakeQueue, FakeReflectionRepository

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
NPC = NpcKey("t1", "w1", "marta")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _event(payload: EventPayload, minute: int = 0) -> Envelope:
    return Envelope.new(payload, tenant_id=NPC.tenant_id, world_id=NPC.world_id, npc_id=NPC.npc_id,
                        world_time=T0 + timedelta(minutes=minute))


def _memory(importance: int, minute: int, kind: Any = "observation") -> Envelope:
    memory = MemoryRecorded(memory_id=f"m{minute}", kind=kind, description="the party",
                            importance=importance, created_at=T0, embedding_model="x")
    return _event(memory, minute)


class World:
    def __init__(self, threshold: int = 150) -> None:
        self.store, self.queue, self.clock = FakeEventStore(), FakeQueue(), Clock()
        self.repo = FakeReflectionRepository()
        settings = ReflectionSettings(reflection_threshold=threshold)
        self.deps = ConsumerDeps(queue=self.queue, settings=settings,
                                 repository=self.repo, clock=self.clock)  # type: ignore[arg-type]

    async def handle(self, event: Envelope) -> list[Envelope]:
        uow = UnitOfWork(None, self.store, cause=event)  # type: ignore[arg-type]
        await ROUTES[event.type](event, uow, self.deps)
        return uow.appended


async def test_crossing_the_threshold_records_one_trigger_in_the_runs_own_stream() -> None:
    world = World()
    appended = [e for minute in range(20) for e in await world.handle(_memory(10, minute))]
    assert [e.type for e in appended] == ["ReflectionTriggered"]
    assert list(world.store.streams) == ["reflection:t1:w1:marta:1"]
    assert world.repo.rows[NPC][0].pending_run == 1 and world.queue.jobs == []


async def test_each_delivery_of_a_trigger_enqueues_the_same_job() -> None:
    world = World(threshold=5)
    [trigger] = await world.handle(_memory(9, 0))
    await world.handle(trigger)
    await world.handle(trigger)
    assert len(world.queue.jobs) == 2 and world.queue.jobs[0] == world.queue.jobs[1]
    job = world.queue.jobs[0]
    assert (job.run, job.run_key, job.world_time) == (1, "reflection:t1:w1:marta:1", T0)


async def test_a_run_pending_longer_than_the_redispatch_delay_is_enqueued_again_once() -> None:
    world = World(threshold=5)
    await world.handle(_memory(9, 0))
    world.clock.now += timedelta(seconds=599)
    await world.handle(_memory(9, 1))
    assert world.queue.jobs == []
    world.clock.now += timedelta(seconds=2)
    await world.handle(_memory(9, 2))
    await world.handle(_memory(9, 3))
    assert [j.run for j in world.queue.jobs] == [1]


async def test_completion_resets_the_accumulator_and_allows_the_next_run() -> None:
    world = World(threshold=5)
    await world.handle(_memory(9, 0))
    insight = ReflectionInsight(text="i", question=0, evidence=("m0",), depth=1)
    done = ReflectionCompleted(run=1, run_key="reflection:t1:w1:marta:1", questions=("q?",),
                               memories_considered=1, insights=(insight,), provider="offline")
    await world.handle(_event(done))
    assert world.repo.rows[NPC] == (world.repo.rows[NPC][0], None)
    assert world.repo.rows[NPC][0].importance_sum == 0
    [trigger] = await world.handle(_memory(9, 1))
    assert trigger.payload.run == 2  # type: ignore[attr-defined]
