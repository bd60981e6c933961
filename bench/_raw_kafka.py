"""The event-bus benchmark's yardstick: what the same broker moves in a bare aiokafka loop, in the same run.

A producer (the project's settings) sends envelope-sized messages and a group consumer (the project's
settings, offsets committed after every poll) reads them back, with no database. The pipeline's figures are
read against these: the machine is shared, so the ratio to this run's raw figure is the fair comparison.
"""

from __future__ import annotations

import asyncio
import struct
import time
import uuid
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from npcworld.contracts.topics import PERCEPTION, Topic
from npcworld.messaging.kafka import ensure_topics, make_consumer, make_producer

_PAD = b"x" * 600  # about an ObservationMade envelope's size


@dataclass
class RawFigures:
    """Throughput of a burst and end-to-end latencies (ms, sorted) of a paced run."""

    messages: int = 0
    seconds: float = 0.0
    received: int = 0
    latency_ms: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.received / self.seconds if self.seconds > 0 else 0.0


async def measure(bootstrap: str, messages: int, rate: int, seconds: float, max_records: int) -> RawFigures:
    """A burst of ``messages`` (throughput), then ``rate`` messages/s for ``seconds`` (latency)."""
    topic = Topic(f"bench.raw.{uuid.uuid4().hex[:8]}", "npc_id", PERCEPTION.partitions, (), (), "bench")
    await ensure_topics(bootstrap, (topic,))
    producer = make_producer(bootstrap, "bench-raw")
    consumer = make_consumer(bootstrap, f"bench-raw-{uuid.uuid4().hex[:8]}", [topic.name],
                             max_records=max_records)
    await producer.start()
    await consumer.start()
    try:
        await _send(producer, topic.name, 200, 0.0)  # warm-up: partitions assigned, connections open
        await _receive(consumer, 200, 30.0)
        figures = RawFigures(messages)
        started = time.time()
        sending = asyncio.create_task(_send(producer, topic.name, messages, 0.0))
        got = await _receive(consumer, messages, 60.0)
        await sending
        figures.received = len(got)
        figures.seconds = max((at for at, _ in got), default=started) - started
        sending = asyncio.create_task(_send(producer, topic.name, int(rate * seconds), float(rate)))
        got = await _receive(consumer, int(rate * seconds), seconds + 30.0)
        await sending
        figures.latency_ms = sorted(ms for _, ms in got)
        return figures
    finally:
        await consumer.stop()
        await producer.stop()


async def _send(producer: AIOKafkaProducer, topic: str, count: int, rate: float) -> None:
    """Send ``count`` messages carrying their send time; all at once (rate 0) or paced per 1 ms tick."""
    start, sent = time.perf_counter(), 0
    while sent < count:
        due = count - sent if rate == 0 else min(count, int((time.perf_counter() - start) * rate) + 1) - sent
        if due <= 0:
            await asyncio.sleep(0.001)
            continue
        futures = [await producer.send(topic, struct.pack("!d", time.time()) + _PAD,
                                       key=f"npc-{(sent + i) % 100:03d}".encode()) for i in range(due)]
        await asyncio.gather(*futures)
        sent += due


async def _receive(consumer: AIOKafkaConsumer, count: int, timeout: float) -> list[tuple[float, float]]:
    """Poll until ``count`` messages arrived, committing offsets after each poll as the loop does; returns,
    per message, when it arrived and how many ms after it was sent."""
    arrivals: list[tuple[float, float]] = []
    deadline = time.monotonic() + timeout
    while len(arrivals) < count and time.monotonic() < deadline:
        batches = await consumer.getmany(timeout_ms=200)
        now = time.time()
        for records in batches.values():
            arrivals += [(now, (now - struct.unpack("!d", (r.value or b"")[:8])[0]) * 1000) for r in records]
        if batches:
            await consumer.commit()
    return arrivals
