"""Planning integration helpers: plant events in the event store, read what planning did."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, EventPayload, NpcCreated, WorldTicked
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.memory_client.http import HttpMemoryReader
from services.planning.domain import NpcKey, PlannerState
from services.planning.handlers import planning_stream
from services.planning.repository import PlanningRepository
from tests.polling import eventually

DAWN = datetime(2023, 2, 14, 5, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Stack:
    """What a planning integration test talks to: the database and the memory service's API."""

    pool: AsyncConnectionPool
    memory: HttpMemoryReader
    # Each model call the planning consumer made: (prompt kind, whether one of its connections was then
    # inside a transaction).
    llm_calls: list[tuple[str, bool]]
    # The chain (correlation id) of each of those calls, in the same order.
    llm_chains: list[uuid.UUID | None] = field(default_factory=list)


def new_key() -> NpcKey:
    return NpcKey(f"tenant-{uuid.uuid4().hex[:8]}", f"world-{uuid.uuid4().hex[:8]}", "marta")


def paths(key: NpcKey) -> dict[str, str]:
    w = key.world_id
    return {"home": f"{w}:Quill House:bedroom", "cafe": f"{w}:Lantern Cafe:counter",
            "kitchen": f"{w}:Lantern Cafe:kitchen", "hall": f"{w}:Town Hall:lobby"}


async def plant(
    stack: Stack, key: NpcKey, payload: EventPayload, at: datetime, *, npc: bool = True
) -> Envelope:
    """Append one event to the store (the relay publishes it) and return it."""
    event = Envelope.new(payload, tenant_id=key.tenant_id, world_id=key.world_id, world_time=at,
                         npc_id=key.npc_id if npc else None)
    async with stack.pool.connection() as conn, conn.transaction():
        await UnitOfWork(conn, EventStore()).append(f"test:{key.world_id}:{uuid.uuid4().hex[:6]}", [event])
    return event


async def create_marta(stack: Stack, key: NpcKey) -> None:
    """Marta, who owns the Lantern Cafe, knows her house, the cafe and the town hall."""
    p = paths(key)
    await plant(stack, key, NpcCreated(
        npc_id=key.npc_id, name="Marta Quill", age=34, traits=("warm", "organised"),
        occupation="owner of the Lantern Cafe", location=p["home"],
        known_places=(p["cafe"], p["kitchen"], p["hall"]),
        seed="Marta wakes up at 6 am; Marta runs the Lantern Cafe; Marta is friends with Tobias Wren",
    ), DAWN, npc=False)


async def tick(stack: Stack, key: NpcKey, at: datetime, step: int = 1) -> Envelope:
    return await plant(stack, key, WorldTicked(step=step, step_seconds=10.0), at, npc=False)


async def planned(stack: Stack, key: NpcKey) -> list[Envelope]:
    """Everything planning emitted for the NPC so far."""
    async with stack.pool.connection() as conn:
        return [e.envelope for e in await EventStore().read_stream(conn, key.tenant_id, planning_stream(key))]


async def wait_for(stack: Stack, key: NpcKey, check: Any, timeout: float = 60) -> list[Envelope]:
    """Poll planning's output until ``check(events)`` holds."""
    return await eventually(lambda: planned(stack, key), check, timeout=timeout)


async def state_of(stack: Stack, key: NpcKey) -> PlannerState | None:
    async with stack.pool.connection() as conn, conn.transaction():
        return await PlanningRepository().get(conn, key)


async def processed(stack: Stack, event: Envelope) -> bool:
    """Whether the planning consumer has handled ``event``."""
    async with stack.pool.connection() as conn:
        cur = await conn.execute("SELECT 1 FROM processed_events WHERE event_id = %s AND consumer LIKE "
                                 "'planning-%%'", (event.event_id,))
        return await cur.fetchone() is not None


def of_type(events: list[Envelope], name: str) -> list[Envelope]:
    return [e for e in events if e.type == name]
