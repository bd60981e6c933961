"""A consumer's queue of fetched records, taken lane by lane (``npcworld.lanes``).

The consumer loop adds each poll here and takes its next batch from the best lane that has records:
interactive first, then the world's, then ingest; while both chats and the world's events wait, they take
turns, and a chats' batch is always a small chunk, so a steady stream of chats delays a step's hop by at most
one chunk instead of stopping the clock. A lane's records keep their store order (a cause before its
reactions: both are in the same lane); records of different lanes may be handled out of partition order,
which is harmless because each chain stays in its lane and ``processed_events`` makes redelivery a no-op.
Ingest is taken in small chunks, so the world's next step waits at most one chunk for the consumer.
Offsets are committed only up to a partition's first record not yet handled.

While the world's (or a chat's) events keep coming, ``IngestPacer`` gives ingest at most a share of the
consumer's time: on a machine that client traffic saturates, every consumer yielding the CPU between ingest
chunks is what lets a step's cascade cross five or six services at close to its quiet pace. Ingest that waits
is not lost: it is fetched, held and handled as soon as the world goes quiet, or at the paced rate.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from aiokafka import TopicPartition

from npcworld.lanes import LANES, rank
from npcworld.messaging.record import KafkaRecord, header

__all__ = ["INGEST_SHARE", "IngestPacer", "LaneQueue", "lane_of"]

R = TypeVar("R", bound=KafkaRecord)

# Ingest records handled per batch: small, so the world's events wait little behind them.
INGEST_CHUNK = 8
# The share of a consumer's time that ingest may take while the world's events keep coming.
INGEST_SHARE = 0.5
# The world counts as active for this long after its last event was handled.
WORLD_ACTIVE_SECONDS = 2.0


def lane_of(record: KafkaRecord) -> str | None:
    """The record's ``lane`` header (None: a record from before lanes, taken as the world's)."""
    return header(record, "lane")


@dataclass(eq=False)
class _Entry(Generic[R]):
    """A queued record with what ``take`` orders it by, read from its headers once when it is added."""

    record: R
    tp: TopicPartition
    rank: int
    key: tuple[int, int]  # (store sequence number, arrival): the order ``take`` hands a lane's records out

    @property
    def urgent(self) -> bool:
        """A record ahead of ingest (a chat's, the world's)."""
        return self.rank < LANES.index("ingest")


class LaneQueue(Generic[R]):
    """Records fetched and not yet handled, per partition; ``take`` the next batch, then ``done`` with it.

    Each lane keeps its records not yet taken in a heap by store order, so a take costs what it hands out,
    not the whole backlog: a consumer behind by hundreds of posted perceptions took every batch by reading
    every waiting record's headers again (a fifth of the memory service's CPU under load)."""

    def __init__(
        self, counts: Callable[[R], bool] = lambda _: True, *, ingest_chunk: int = INGEST_CHUNK
    ) -> None:
        self.counts = counts  # whether a record is work for this consumer (others pass through at no cost)
        self.ingest_chunk = ingest_chunk
        self._waiting: dict[TopicPartition, list[_Entry[R]]] = {}  # not yet done, in offset order
        self._ready: dict[int, list[tuple[tuple[int, int], _Entry[R]]]] = {}  # not taken, per lane
        self._seen: dict[TopicPartition, int] = {}  # the highest offset added per partition
        self._count = 0
        self._arrivals = 0
        self._urgent = 0  # records ahead of ingest waiting
        self._last = -1  # the lane of the last batch taken

    def __len__(self) -> int:
        return self._count

    def add(self, batches: Mapping[TopicPartition, list[R]]) -> None:
        """Add a poll; a record added before (redelivered after a rebalance kept its partition) is skipped."""
        for tp, records in batches.items():
            seen = self._seen.get(tp, -1)
            fresh = [self._entry(tp, r) for r in records if r.offset > seen]
            if not fresh:
                continue
            self._waiting.setdefault(tp, []).extend(fresh)
            self._seen[tp] = fresh[-1].record.offset
            self._count += len(fresh)
            self._urgent += sum(e.urgent for e in fresh)
            for entry in fresh:
                heapq.heappush(self._ready.setdefault(entry.rank, []), (entry.key, entry))

    def _entry(self, tp: TopicPartition, record: R) -> _Entry[R]:
        self._arrivals += 1
        lane = rank(lane_of(record))
        # Records without the relay's ``seq`` (not from the relay) go first, in arrival order.
        key = (_seq(record), self._arrivals)
        return _Entry(record, tp, lane, key)

    def keep_only(self, assigned: Iterable[TopicPartition]) -> None:
        """Forget partitions no longer assigned (their new owner starts from the committed offset)."""
        keep = set(assigned)
        lost = [tp for tp in self._seen if tp not in keep]
        if not lost:
            return
        for tp in lost:
            entries = self._waiting.pop(tp, [])
            self._count -= len(entries)
            self._urgent -= sum(e.urgent for e in entries)
            self._seen.pop(tp, None)
        gone = set(lost)
        for lane, heap in self._ready.items():
            kept = [item for item in heap if item[1].tp not in gone]
            heapq.heapify(kept)
            self._ready[lane] = kept

    def urgent(self) -> bool:
        """Whether records ahead of ingest (a chat's, the world's) wait."""
        return self._urgent > 0

    def take(self, limit: int, *, ingest: bool = True, skip: frozenset[int] = frozenset()) -> list[R]:
        """Up to ``limit`` records of the best lane waiting (not taken before), in store order; for ingest,
        only as many as hold ``ingest_chunk`` records that ``counts``, and none unless ``ingest``; none of
        the lanes ranked in ``skip`` (one handled beside). Chats go in such chunks too: a step's next event,
        which may arrive while a batch runs, then waits for one chunk, not for every chat that was waiting
        (a burst of 78 once held a step 15 s). They stay taken until ``done``."""
        lanes = [lane for lane, heap in self._ready.items() if heap and lane not in skip]
        if not lanes:
            return []
        best = min(lanes)
        world = LANES.index("world")
        if best < world and world in lanes and self._last == best:
            best = world  # chats and the world take turns: a stream of chats never stops the clock
        self._last = best
        if best == LANES.index("ingest") and not ingest:
            return []
        heap = self._ready[best]
        records: list[R] = []
        work = 0
        while heap and len(records) < limit:
            record = heap[0][1].record
            if best != world:  # chats and ingest go in small chunks
                work += self.counts(record)
                if work > self.ingest_chunk:
                    break
            records.append(heapq.heappop(heap)[1].record)
        return records

    def done(self, records: list[R]) -> dict[TopicPartition, int]:
        """Mark ``records`` handled; returns the offsets now safe to commit for their partitions."""
        handled: dict[TopicPartition, set[int]] = {}
        for record in records:
            handled.setdefault(TopicPartition(record.topic, record.partition), set()).add(record.offset)
        offsets = {}
        for tp, done in handled.items():
            if tp not in self._seen:
                continue  # revoked while the batch was handled: its new owner commits it
            entries = self._waiting.get(tp, [])
            left = [e for e in entries if e.record.offset not in done]
            self._count -= len(entries) - len(left)
            self._urgent -= sum(e.urgent for e in entries if e.record.offset in done)
            if left:
                self._waiting[tp] = left
                offsets[tp] = left[0].record.offset
            else:
                self._waiting.pop(tp, None)
                offsets[tp] = self._seen[tp] + 1
        return offsets


class IngestPacer:
    """Paces ingest while the world is active: after an ingest batch that took ``t`` seconds, the next one
    waits ``t * (1 - share) / share``, so ingest takes at most ``share`` of the consumer's time. The world
    is active for ``active_seconds`` after a batch of a lane ahead of ingest; a quiet world leaves ingest
    unpaced.
    """

    def __init__(
        self, share: float = INGEST_SHARE, *, active_seconds: float = WORLD_ACTIVE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"ingest share must be in (0, 1], got {share}")
        self.share, self.active_seconds, self.clock = share, active_seconds, clock
        self._world_at = -math.inf
        self._resume_at = -math.inf

    def handled(self, lane: str | None, seconds: float) -> None:
        """A batch of ``lane`` took ``seconds``."""
        now = self.clock()
        if rank(lane) < LANES.index("ingest"):
            self._world_at = now
        elif now - self._world_at <= self.active_seconds:
            self._resume_at = now + seconds * (1 - self.share) / self.share

    def wait(self) -> float:
        """Seconds until ingest may be taken again (0: now)."""
        return max(0.0, self._resume_at - self.clock())


def _seq(record: KafkaRecord) -> int:
    value = header(record, "seq")
    try:
        return int(value) if value is not None else -1
    except ValueError:
        return -1
