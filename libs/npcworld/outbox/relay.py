"""Outbox relay: publishes committed events to Kafka in sequence order, at least once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import EVENT_TYPES, RELAY_MARKER
from npcworld.errors import TransientError
from npcworld.lanes import lane_of_root_sql
from npcworld.messaging.doorbell import CHANNEL as DOORBELL
from npcworld.messaging.doorbell import ring
from npcworld.messaging.kafka import ensure_topics, make_producer
from npcworld.messaging.reconnect import Backoff, is_outage
from npcworld.shredding import SEALED_FIELDS, reveal
from npcworld.telemetry import instruments, tracer

__all__ = ["OutboxRelay"]

logger = logging.getLogger(__name__)

_RELAY_LOCK = 0x72656C6179  # one active relay per database; others wait as standbys
_ENVELOPE_JSON = """json_build_object(
    'event_id', e.event_id, 'type', e.type, 'schema_version', e.schema_version, 'tenant_id', e.tenant_id,
    'world_id', e.world_id, 'npc_id', e.npc_id, 'world_time', e.world_time, 'recorded_at', e.recorded_at,
    'causation_id', e.causation_id, 'correlation_id', e.correlation_id, 'forked_from', e.forked_from,
    'trace', event_trace(e.trace, e.traceparent),
    'payload', e.payload)::text"""
# Every committed row is eligible at once. A row is deleted when it is published, so one whose transaction
# commits after others that took later sequence numbers is not skipped: it is published in a later drain
# (events go out in commit order across drains, in sequence order within one). A reaction is written only
# after its cause was published, so a cause always goes out first.
_PENDING = f"""
SELECT o.seq, o.topic, o.key, e.type, e.event_id::text, event_trace(e.trace, e.traceparent), {_ENVELOPE_JSON},
       {lane_of_root_sql("e")}
FROM outbox o JOIN events e ON e.seq = o.seq
ORDER BY o.seq LIMIT %s
"""
_HISTORY = f"""
SELECT e.seq, e.npc_id, e.world_id, e.type, e.event_id::text, event_trace(e.trace, e.traceparent),
       {_ENVELOPE_JSON},
       {lane_of_root_sql("e")}
FROM events e WHERE e.seq > %s AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.seq = e.seq)
ORDER BY e.seq LIMIT %s
"""
# (Rows still in the outbox are left to the relay's normal drain, which follows the republication.)
_OLDEST_AGE = """
SELECT coalesce(extract(epoch FROM now() - min(e.recorded_at)), 0)::float8
FROM outbox o JOIN events e ON e.seq = o.seq
"""


class OutboxRelay:
    """Moves outbox rows to Kafka; republishes the store when the broker has lost it.

    The embedded broker keeps nothing across restarts. A marker topic tells a fresh broker
    from a known one: when the marker is empty, every stored event after the newest broker
    generation's checkpoint (from the start when there is none) is published again in sequence
    order and consumers skip what they already processed.
    """

    def __init__(
        self, pool: AsyncConnectionPool, bootstrap: str, *, batch_size: int = 1000, age_every: float = 1.0,
        probe_every: float = 1.0,
    ) -> None:
        self.pool = pool
        self.bootstrap = bootstrap
        self.batch_size = batch_size
        self.age_every = age_every
        self.ready = asyncio.Event()
        self.probe_every = probe_every
        self._next_probe = 0.0
        self._lock_conn: AsyncConnection[Any] | None = None
        self._probe: AIOKafkaConsumer | None = None
        self.oldest_unpublished_age = 0.0  # seconds; also the npcworld.outbox.oldest_unpublished_age gauge

    async def run(self, stop: asyncio.Event) -> None:
        """Relay until ``stop`` is set (waiting as a standby while another relay holds the lock).

        A lost Postgres or broker never ends it: it backs off (``npcworld.messaging.reconnect``) and starts
        over, taking the lock again; a broker found empty meanwhile (restarted: it keeps nothing) is refilled
        from the event store first. A drain cut short rolled back, so its rows are published again.
        """
        backoff = Backoff("relay")
        while not stop.is_set():
            try:
                await self._run_once(stop, backoff)
            except Exception as exc:
                if not is_outage(exc):
                    raise
                self.ready.clear()
                await backoff.failed(exc, stop)

    async def _run_once(self, stop: asyncio.Event, backoff: Backoff) -> None:
        await ensure_topics(self.bootstrap)
        async with self.pool.connection() as lock_conn:
            await lock_conn.set_autocommit(True)
            if not await _try_lock(lock_conn):
                logger.info("another relay is active; standing by")
                while not await _try_lock(lock_conn):
                    if await _wait(stop, 2.0):
                        return
            producer = make_producer(self.bootstrap, "npcworld-relay")
            try:
                await producer.start()
                if await self._broker_is_fresh():
                    await self.republish(producer, await self._checkpoint())
                    await producer.send_and_wait(RELAY_MARKER.name, b"relay-started")
                await self._generation_ready()
                self.ready.set()
                backoff.succeeded()
                self._lock_conn = lock_conn
                await self._loop(producer, stop)
            finally:
                self._lock_conn = None
                await self._drop_probe()
                await producer.stop()
                await lock_conn.execute("SELECT pg_advisory_unlock(%s)", (_RELAY_LOCK,))

    async def _still_leading(self) -> None:
        """Every ``probe_every`` seconds: the lock's session is alive (else another relay may be active by
        now) and the broker still holds what was published (a restarted one is empty: start over, which
        republishes). Raises an outage error when either does not hold."""
        if time.monotonic() < self._next_probe:
            return
        self._next_probe = time.monotonic() + self.probe_every
        if self._lock_conn is not None:
            await self._lock_conn.execute("SELECT 1")
        if await asyncio.wait_for(self._broker_is_fresh(), 10.0):
            raise TransientError("the broker was replaced by an empty one; republishing from the event store")

    async def _loop(self, producer: AIOKafkaProducer, stop: asyncio.Event) -> None:
        # Measured apart from the drain, which waits for the broker's acknowledgements.
        watch = asyncio.create_task(self._watch_age(stop), name="relay-outbox-age")
        try:
            async with self.pool.connection() as listen_conn:
                await listen_conn.set_autocommit(True)
                await listen_conn.execute("LISTEN npcworld_outbox")
                while not stop.is_set():
                    await self._still_leading()
                    await self.drain(producer)
                    # Wake on a commit notification, or poll every 200 ms in case one was missed.
                    async for _ in listen_conn.notifies(timeout=0.2, stop_after=1):
                        pass
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch

    async def measure_age(self) -> float:
        """Seconds since the oldest unpublished event was recorded (0 when the outbox is empty)."""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(_OLDEST_AGE)).fetchone()
        age = max(0.0, float(row[0])) if row else 0.0
        self.oldest_unpublished_age = instruments().outbox_oldest_age = age
        return age

    async def _watch_age(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.measure_age()
            except Exception as exc:  # a metric never stops the relay
                logger.warning("measuring the outbox's oldest unpublished age failed: %r", exc)
            await _wait(stop, self.age_every)

    async def drain(self, producer: AIOKafkaProducer) -> int:
        """Publish every committed outbox row; returns how many were published."""
        total = 0
        while True:
            published = await self.drain_once(producer)
            total += published
            if published < self.batch_size:
                return total

    async def drain_once(self, producer: AIOKafkaProducer) -> int:
        """Publish one batch of committed rows (in sequence order) and delete them from the outbox."""
        async with self.pool.connection() as conn, conn.transaction():
            rows = await (await conn.execute(_PENDING, (self.batch_size,))).fetchall()
            if rows:
                payload = await _publish(producer, await _opened(conn, rows))
                await conn.execute("DELETE FROM outbox WHERE seq = ANY(%s)", ([r[0] for r in rows],))
                await _ring(conn, payload)  # heard at commit
        return len(rows)

    async def republish(self, producer: AIOKafkaProducer, from_seq: int = 0) -> int:
        """Publish every stored event after ``from_seq`` again, in sequence order."""
        count, after = 0, from_seq
        with tracer().start_as_current_span("relay republish"):
            while True:
                async with self.pool.connection() as conn:
                    rows = await (await conn.execute(_HISTORY, (after, self.batch_size))).fetchall()
                    opened = await _opened(conn, [_routed(row) for row in rows])
                if not rows:
                    break
                payload = await _publish(producer, opened)  # no transaction open across the broker's answer
                async with self.pool.connection() as conn:
                    await _ring(conn, payload)
                count += len(rows)
                after = rows[-1][0]
        logger.info("republished %d events from the event store (after seq %d)", count, from_seq)
        return count

    async def _checkpoint(self) -> int:
        """Where the newest broker generation starts (every live consumer had processed all events to it)."""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(
                "SELECT checkpoint_seq FROM broker_generations ORDER BY generation DESC LIMIT 1")).fetchone()
        return int(row[0]) if row else 0

    async def _generation_ready(self) -> None:
        """This broker serves the newest generation: consumers parked for a rotation may start on it."""
        async with self.pool.connection() as conn:
            await conn.execute("UPDATE broker_generations SET ready_at = now() WHERE ready_at IS NULL")

    async def _broker_is_fresh(self) -> bool:
        """Whether the broker has never seen this relay's marker (it is new, or restarted and so empty).

        The probe's client is kept between the once-a-second probes (a new one each time cost the broker a
        connection, a metadata round and a teardown every second); any failure drops it, and the next probe
        starts another."""
        if self._probe is None:
            probe = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, client_id="npcworld-relay-probe",
                                     request_timeout_ms=5000)
            try:  # stopped even when the start fails (a broker that is away)
                await probe.start()
            except BaseException:
                await probe.stop()
                raise
            self._probe = probe
        try:
            ends = await self._probe.end_offsets([TopicPartition(RELAY_MARKER.name, 0)])
        except BaseException:
            await self._drop_probe()
            raise
        return all(offset <= 0 for offset in ends.values())

    async def _drop_probe(self) -> None:
        probe, self._probe = self._probe, None
        if probe is not None:
            with contextlib.suppress(Exception):
                await probe.stop()


def _routed(row: Any) -> tuple[Any, ...]:
    """A history row (seq, npc_id, world_id, ...) turned into an outbox-shaped row (seq, topic, key, ...)."""
    seq, npc_id, world_id, event_type, *rest = row
    topic = EVENT_TYPES[event_type].topic
    key = {"npc_id": npc_id, "world_id": world_id}.get(topic.key)
    return (seq, topic.name, key, event_type, *rest)


async def _opened(conn: AsyncConnection[Any], rows: list[Any]) -> list[Any]:
    """Outbox-shaped rows with the players' words opened (consumers read plain payloads; a forgotten
    player's words are published as "[forgotten]", also when the store is republished)."""
    sealed = {i: json.loads(row[6]) for i, row in enumerate(rows) if row[3] in SEALED_FIELDS}
    if not sealed:
        return rows
    await reveal(conn, [(rows[i][3], envelope["payload"]) for i, envelope in sealed.items()])
    return [(*row[:6], json.dumps(sealed[i]), *row[7:]) if i in sealed else row for i, row in enumerate(rows)]


async def _publish(producer: AIOKafkaProducer, rows: list[Any]) -> str:
    """Send ``rows`` and wait for the broker's acknowledgements; returns the doorbell's ring for them
    (``npcworld.messaging.doorbell``: to be NOTIFYed once they are in the broker)."""
    futures = []
    for seq, topic, key, event_type, event_id, trace, envelope_json, lane in rows:
        headers = [(k, str(v).encode()) for k, v in (trace or {}).items() if v]
        headers += [("event_type", event_type.encode()), ("event_id", event_id.encode()),
                    ("seq", str(seq).encode()), ("lane", lane.encode())]
        futures.append(await producer.send(
            topic, envelope_json.encode(), key=key.encode() if key else None, headers=headers
        ))
    sent = await asyncio.gather(*futures)
    instruments().published.add(len(rows))
    return ring(sent)


async def _ring(conn: AsyncConnection[Any], payload: str) -> None:
    await conn.execute("SELECT pg_notify(%s, %s)", (DOORBELL, payload))


async def _try_lock(conn: AsyncConnection[Any]) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (_RELAY_LOCK,))).fetchone()
    return bool(row and row[0])


async def _wait(stop: asyncio.Event, seconds: float) -> bool:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        return False
    return True
