"""The relay's doorbell: a consumer that has read everything stops asking the broker and waits to be told.

The embedded broker (Tansu) answers a fetch only when the fetch's wait (``KAFKA_FETCH_MAX_WAIT_MS``) ends,
even when records arrive meanwhile, so a consumer waiting for records must keep asking: every consumer
process fetched 50 times a second over every partition it reads, which cost the broker ~0.4 of a core on a
town doing nothing, and each hop of an event waited for the fetch in flight to end.

After each publish the relay NOTIFYs ``npcworld_published`` (in the transaction that deletes the published
rows, so it is heard once they are in the broker) with where each partition it wrote to now ends (``ring``).
A consumer loop pauses each partition it has read to the end it knows of (heard from the relay or reported
by its last fetch), also while it still works through what it fetched, so its client fetches only what has
more; it resumes a partition when a ring names more of it, when the doorbell's connection is lost, or for a
moment every ``RECHECK_S`` whatever happens (records from a producer other than the relay, a notification
missed). With every partition resting and nothing queued, the loop sleeps until a ring. Resuming fetches at
once, and the records are already there, so the hop no longer waits for a fetch in flight either.

A doorbell that is not listening (not yet, or its connection lost) keeps its consumer fetching as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Iterable
from typing import Protocol

import psycopg
from aiokafka import TopicPartition

from npcworld.messaging.reconnect import Backoff

__all__ = ["CHANNEL", "RECHECK_S", "Doorbell", "doorbell_enabled", "heard", "ring"]

CHANNEL = "npcworld_published"
# A resting partition is fetched once this often anyway, for a moment (a fetch's wait and its answer).
RECHECK_S = 1.0
_RECHECK_AWAKE_S = 0.06
# How long the doorbell listens before its consumer may go quiet: long enough for fetches to have reported
# the partitions' ends of whatever was published before it listened.
_SETTLE_S = 0.5
# A NOTIFY payload must stay under 8,000 bytes; a ring naming more than this many partitions (a republish of
# everything) names none: every listener wakes and fetches.
_MAX_PARTITIONS = 200


def doorbell_enabled() -> bool:
    """NPCWORLD_DOORBELL=0 keeps every consumer fetching all the time (as with no relay ringing)."""
    return os.environ.get("NPCWORLD_DOORBELL", "1") != "0"


class Published(Protocol):
    """Where a record went (aiokafka's RecordMetadata)."""

    topic: str
    partition: int
    offset: int


def ring(published: Iterable[Published]) -> str:
    """The payload telling listeners where each partition written to now ends (its last offset + 1)."""
    ends: dict[str, dict[str, int]] = {}
    for record in published:
        partitions = ends.setdefault(record.topic, {})
        key = str(record.partition)
        partitions[key] = max(partitions.get(key, 0), record.offset + 1)
    if sum(len(p) for p in ends.values()) > _MAX_PARTITIONS:
        return json.dumps({topic: {} for topic in ends})
    return json.dumps(ends, separators=(",", ":"))


def heard(payload: str) -> tuple[dict[TopicPartition, int], set[str]]:
    """A ring read back: the ends it names, and the topics it names without ends (every partition may have
    more). A payload that is not a ring names nothing."""
    try:
        parsed = json.loads(payload)
    except ValueError:
        return {}, set()
    if not isinstance(parsed, dict):
        return {}, set()
    ends: dict[TopicPartition, int] = {}
    whole: set[str] = set()
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict) or not partitions:
            whole.add(str(topic))
            continue
        for partition, end in partitions.items():
            with contextlib.suppress(TypeError, ValueError):
                ends[TopicPartition(str(topic), int(partition))] = int(end)
    return ends, whole


class Consumer(Protocol):
    """What the doorbell asks of a Kafka consumer (aiokafka's AIOKafkaConsumer)."""

    def assignment(self) -> set[TopicPartition]: ...
    def paused(self) -> set[TopicPartition]: ...
    def pause(self, *partitions: TopicPartition) -> None: ...
    def resume(self, *partitions: TopicPartition) -> None: ...
    def highwater(self, partition: TopicPartition) -> int | None: ...
    async def position(self, partition: TopicPartition) -> int: ...


class Doorbell:
    """Listens for the relay's rings about ``topics`` on its own connection (reconnected with backoff)."""

    recheck_s: float = RECHECK_S  # how often a resting partition is fetched anyway

    def __init__(self, database_url: str, topics: Iterable[str], name: str) -> None:
        self.database_url = database_url
        self.topics = frozenset(topics)
        self.name = name
        self._ends: dict[TopicPartition, int] = {}
        self._listening_since: float | None = None
        self._rung = asyncio.Event()
        self._named: set[TopicPartition] = set()
        self._whole: set[str] = set()
        self._woken: set[str] = set()  # topics rung without ends since the last settle
        self._resting: dict[TopicPartition, float] = {}  # paused partitions, since when
        self._awake_until: dict[TopicPartition, float] = {}  # rechecked: fetching until then
        self._consumer: Consumer | None = None  # whose partitions rest (none while the loop holds them)

    @property
    def listening(self) -> bool:
        """Whether rings are heard, and have been long enough for a quiet consumer to rely on them."""
        since = self._listening_since
        return since is not None and time.monotonic() - since >= _SETTLE_S

    async def run(self, stop: asyncio.Event) -> None:
        """Listen until ``stop`` is set; a lost connection wakes the waiting consumer and is opened again."""
        backoff = Backoff(f"{self.name}'s doorbell (fetching as usual meanwhile)")
        while not stop.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self._listening_since = time.monotonic()
                    backoff.succeeded()
                    async for note in conn.notifies():
                        self._hear(note.payload)
            except (psycopg.Error, OSError) as exc:
                self._deaf()
                await backoff.failed(exc, stop)
            finally:
                self._deaf()

    def forget(self) -> None:
        """Drop the ends heard so far: a new consumer (a new broker, whose offsets start again) fetches
        until its own fetches and new rings tell it where its partitions end."""
        self._ends.clear()
        self._resting.clear()
        self._awake_until.clear()
        self._consumer = None

    def _deaf(self) -> None:
        self._listening_since = None
        self._rung.set()

    def _hear(self, payload: str) -> None:
        ends, whole = heard(payload)
        named = {tp for tp in ends if tp.topic in self.topics}
        whole &= self.topics
        if not named and not whole:
            return
        for tp in named:
            self._ends[tp] = max(self._ends.get(tp, 0), ends[tp])
        self._named |= named
        self._whole |= whole
        self._woken |= whole
        self._rung.set()
        # Resting partitions it names fetch at once: the loop may be waiting in a poll for the others.
        woken = {tp for tp in self._resting if tp in named or tp.topic in whole}
        if woken and self._consumer is not None:
            for tp in woken:
                del self._resting[tp]
            with contextlib.suppress(Exception):  # a partition revoked meanwhile: the next settle sorts it
                self._consumer.resume(*(woken & self._consumer.paused()))

    async def settle(self, consumer: Consumer, *, hold: bool = False) -> bool:
        """Pause the partitions that need no fetch and resume the others; whether every assigned partition
        rests (the consumer may then ``wait``). ``hold``: pause them all (the loop's queue is too long).

        A partition rests while this doorbell listens and the consumer's position has reached the end known
        of it (rung, or reported by its last fetch); a ring naming more resumes it, and so does a recheck,
        once every ``recheck_s``, which keeps it fetching for a moment. Nothing rests while not listening."""
        whole, self._woken = self._woken, set()  # rung without ends (a republish): fetch for a moment
        self._named, self._whole = set(), set()  # a ring heard from here on wakes the wait that may follow
        self._consumer = None if hold else consumer
        assigned = consumer.assignment()
        now = time.monotonic()
        want: set[TopicPartition] = set(assigned) if hold else set()
        if not hold and self.listening:
            for tp in assigned:
                since = self._resting.get(tp)
                if tp.topic in whole or (since is not None and now - since >= self.recheck_s):
                    self._awake_until[tp] = now + _RECHECK_AWAKE_S
                elif now >= self._awake_until.get(tp, 0.0) and await self._at_end(consumer, tp):
                    want.add(tp)
        self._resting = {} if hold else {tp: self._resting.get(tp, now) for tp in want}
        paused = consumer.paused()
        if want - paused:
            consumer.pause(*(want - paused))
        if paused - want:
            consumer.resume(*(paused - want))
        return not hold and bool(assigned) and want == assigned

    async def _at_end(self, consumer: Consumer, tp: TopicPartition) -> bool:
        fetched_end = consumer.highwater(tp)
        if fetched_end is None:  # no fetch answered for it yet
            return False
        end = max(fetched_end, self._ends.get(tp, 0))
        return end <= 0 or await consumer.position(tp) >= end

    async def wait(
        self, assigned: set[TopicPartition], *also: asyncio.Event, timeout: float | None = None
    ) -> None:
        """Return when a ring names one of the ``assigned`` partitions (or a whole topic of theirs), when the
        doorbell stops listening, when one of ``also`` is set, or after ``timeout`` seconds (by default
        ``recheck_s``)."""
        topics = {tp.topic for tp in assigned}
        deadline = time.monotonic() + (self.recheck_s if timeout is None else timeout)
        waits = [asyncio.ensure_future(event.wait()) for event in also]
        try:
            while (left := deadline - time.monotonic()) > 0:
                if (self._named & assigned) or (self._whole & topics) or not self.listening:
                    break
                if any(w.done() for w in waits):
                    break
                self._named.clear()
                self._whole.clear()
                self._rung.clear()
                rung = asyncio.ensure_future(self._rung.wait())
                await asyncio.wait([rung, *waits], timeout=left, return_when=asyncio.FIRST_COMPLETED)
                rung.cancel()
        finally:
            for w in waits:
                w.cancel()
            self._named.clear()
            self._whole.clear()
