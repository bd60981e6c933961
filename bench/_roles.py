"""The relay and consumer processes of the event-bus benchmark (each started as its own subprocess)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

from aiokafka import AIOKafkaProducer

from npcworld.contracts import Envelope, ObservationMade
from npcworld.db import open_pool
from npcworld.eventstore import UnitOfWork
from npcworld.messaging import ConsumerLoop, Routes, on
from npcworld.outbox import OutboxRelay

BENCH_DDL = """
CREATE TABLE IF NOT EXISTS bench_handled (
    event_id    uuid        NOT NULL,
    world_id    text        NOT NULL,
    recorded_at timestamptz NOT NULL,
    handled_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS bench_handled_world ON bench_handled (world_id, event_id);
"""
# No unique key on event_id: the handler's effect is not idempotent by itself, so an event handled twice shows
# as two rows (the benchmark fails on it) instead of a unique violation the loop would retry and dead-letter.
CONSUMER_NAME = "bench-consumer"


async def on_observation_made(event: Envelope, uow: UnitOfWork, deps: None) -> None:
    """The benchmark's effect: one row per event, stamped with the database clock at write time."""
    await uow.conn.execute(
        "INSERT INTO bench_handled (event_id, world_id, recorded_at, handled_at)"
        " VALUES (%s, %s, %s, clock_timestamp())",
        (event.event_id, event.world_id, event.recorded_at),
    )


class _TimedRelay(OutboxRelay):
    """The production relay, noting when each batch reached Kafka (acks received)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.timeline: list[tuple[float, int]] = []

    async def drain_once(self, producer: AIOKafkaProducer) -> int:
        published = await super().drain_once(producer)
        if published:
            self.timeline.append((time.time(), published))
        return published


def _stop_on_sigterm() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def run_relay(database_url: str, bootstrap: str, stats: Path) -> None:
    """Relay until SIGTERM, then write the publish timeline to ``stats`` as JSON."""
    stop = _stop_on_sigterm()
    # The relay holds a lock connection and a LISTEN connection besides the one it drains with.
    pool = await open_pool(database_url, min_size=3, max_size=4, name="bench-relay")
    relay = _TimedRelay(pool, bootstrap)
    try:
        await relay.run(stop)
    finally:
        stats.write_text(json.dumps(relay.timeline))
        await pool.close()


async def run_consumer(database_url: str, bootstrap: str, max_records: int, pipelined: bool) -> None:
    """Consume with the project's loop until SIGTERM (the handler's route declared pipelined or not)."""
    stop = _stop_on_sigterm()
    pool = await open_pool(database_url, min_size=1, max_size=2, name="bench-consumer")
    loop: ConsumerLoop[None] = ConsumerLoop(
        CONSUMER_NAME, Routes(on(ObservationMade, on_observation_made, pipelined=pipelined)), None,
        pool=pool, bootstrap=bootstrap, max_records=max_records,
    )
    try:
        await loop.run(stop)
    finally:
        await pool.close()
