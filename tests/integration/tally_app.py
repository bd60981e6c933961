"""A minimal service for bus tests: counts observations per NPC in a table of its own.

Runs in-process or as a subprocess (``python -m tests.integration.tally_app DB BOOTSTRAP GROUP``),
so a test can SIGKILL it mid-batch.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime

from psycopg import AsyncConnection

from npcworld.contracts import Envelope, ObservationMade
from npcworld.db import open_pool
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging import ConsumerLoop, RetryPolicy, Routes, on

TALLY_DDL = """
CREATE TABLE IF NOT EXISTS tally_effects (event_id uuid NOT NULL, npc_id text NOT NULL, description text);
"""


@dataclass
class TallyDeps:
    delay: float = 0.0


async def on_observation_made(event: Envelope[ObservationMade], uow: UnitOfWork, deps: TallyDeps) -> None:
    if event.payload.description.startswith("explode"):
        raise RuntimeError("this observation always fails")
    if deps.delay:
        await asyncio.sleep(deps.delay)
    await uow.conn.execute(
        "INSERT INTO tally_effects (event_id, npc_id, description) VALUES (%s, %s, %s)",
        (event.event_id, event.npc_id, event.payload.description),
    )


ROUTES = Routes(on(ObservationMade, on_observation_made))
# The same handler declared pipelined: it only writes, so a poll's statements need not wait for answers.
PIPELINED_ROUTES = Routes(on(ObservationMade, on_observation_made, pipelined=True))


def observation(world_id: str, npc_id: str, text: str, tenant_id: str = "tenant-a") -> Envelope:
    return Envelope.new(
        ObservationMade(description=text), tenant_id=tenant_id, world_id=world_id, npc_id=npc_id,
        world_time=datetime(2023, 2, 13, 8, 0, tzinfo=UTC),
    )


async def append_observations(conn: AsyncConnection, world_id: str, texts: list[tuple[str, str]]) -> None:
    """Append (npc_id, text) observations, each NPC on its own stream, in one transaction."""
    store = EventStore()
    async with conn.transaction():
        uow = UnitOfWork(conn, store)
        for npc_id, text in texts:
            event = uow.new_event(ObservationMade(description=text), tenant_id="tenant-a", world_id=world_id,
                                  npc_id=npc_id, world_time=datetime(2023, 2, 13, 8, 0, tzinfo=UTC))
            await uow.append(f"perception-{world_id}-{npc_id}", [event])


async def append_observations_open(
    conn: AsyncConnection, world_id: str, texts: list[tuple[str, str]]
) -> None:
    """Like ``append_observations``, in the connection's open transaction, left uncommitted (an append that
    took its sequence numbers and has not committed yet)."""
    uow = UnitOfWork(conn, EventStore())
    for npc_id, text in texts:
        event = uow.new_event(ObservationMade(description=text), tenant_id="tenant-a", world_id=world_id,
                              npc_id=npc_id, world_time=datetime(2023, 2, 13, 8, 0, tzinfo=UTC))
        await uow.append(f"perception-{world_id}-{npc_id}", [event])


async def prepare(database_url: str) -> None:
    async with await AsyncConnection.connect(database_url, autocommit=True) as conn:
        await conn.execute(TALLY_DDL)


def make_loop(  # type: ignore[no-untyped-def]
    pool, bootstrap: str, group: str, delay: float = 0.0, heartbeat: float = 2.0, pipelined: bool = False
) -> ConsumerLoop[TallyDeps]:
    return ConsumerLoop(
        group, PIPELINED_ROUTES if pipelined else ROUTES, TallyDeps(delay), pool=pool, bootstrap=bootstrap,
        policy=RetryPolicy(handler_attempts=2, base_delay=0.01, max_delay=0.1), max_records=50,
        heartbeat_seconds=heartbeat,
    )


async def _main(database_url: str, bootstrap: str, group: str, delay: float) -> None:
    pool = await open_pool(database_url)
    loop = make_loop(pool, bootstrap, group, delay)
    await loop.run(asyncio.Event())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(_main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])))
