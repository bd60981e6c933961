"""A consumer's queue of fetched records, taken lane by lane (``npcworld.lanes``).

The consumer loop adds each poll here and takes its next batch from the best lane that has records:
interactive first, then the world's, then ingest. A lane's records keep their store order (a cause before
its reactions: both are in the same lane); records of different lanes may be handled out of partition
order, which is harmless because each chain stays in its lane and ``processed_events`` makes redelivery
a no-op. Ingest is taken in small chunks, so the world's next step waits at most one chunk for the
consumer. Offsets are committed only up to a partition's first record not yet handled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Generic, TypeVar

from aiokafka import TopicPartition

from npcworld.lanes import LANES, rank
from npcworld.messaging.ordering import in_store_order
from npcworld.messaging.record import KafkaRecord

__all__ = ["LaneQueue", "lane_of"]

R = TypeVar("R", bound=KafkaRecord)

# Ingest records handled per batch: small, so the world's events wait little behind them.
INGEST_CHUNK = 8


def lane_of(record: KafkaRecord) -> str | None:
    """The record's ``lane`` header (None: a record from before lanes, taken as the world's)."""
    for key, value in record.headers or ():
        if key == "lane":
            return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return None


class LaneQueue(Generic[R]):
    """Records fetched and not yet handled, per partition; ``take`` the next batch, then ``done`` with it."""

    def __init__(
        self, counts: Callable[[R], bool] = lambda _: True, *, ingest_chunk: int = INGEST_CHUNK
    ) -> None:
        self.counts = counts  # whether a record is work for this consumer (others pass through at no cost)
        self.ingest_chunk = ingest_chunk
        self._waiting: dict[TopicPartition, list[R]] = {}
        self._seen: dict[TopicPartition, int] = {}  # the highest offset added per partition
        self._urgent = 0  # records ahead of ingest waiting

    def __len__(self) -> int:
        return sum(len(rs) for rs in self._waiting.values())

    def add(self, batches: Mapping[TopicPartition, list[R]]) -> None:
        """Add a poll; a record added before (redelivered after a rebalance kept its partition) is skipped."""
        for tp, records in batches.items():
            seen = self._seen.get(tp, -1)
            fresh = [r for r in records if r.offset > seen]
            if fresh:
                self._waiting.setdefault(tp, []).extend(fresh)
                self._seen[tp] = fresh[-1].offset
                self._urgent += sum(_is_urgent(r) for r in fresh)

    def keep_only(self, assigned: Iterable[TopicPartition]) -> None:
        """Forget partitions no longer assigned (their new owner starts from the committed offset)."""
        keep = set(assigned)
        for tp in [tp for tp in self._seen if tp not in keep]:
            self._urgent -= sum(_is_urgent(r) for r in self._waiting.pop(tp, []))
            self._seen.pop(tp, None)

    def urgent(self) -> bool:
        """Whether records ahead of ingest (a chat's, the world's) wait."""
        return self._urgent > 0

    def take(self, limit: int) -> list[R]:
        """Up to ``limit`` records of the best lane waiting, in store order; for ingest, only as many as hold
        ``ingest_chunk`` records that ``counts``."""
        by_lane: dict[int, dict[TopicPartition, list[R]]] = {}
        for tp, records in self._waiting.items():
            for record in records:
                by_lane.setdefault(rank(lane_of(record)), {}).setdefault(tp, []).append(record)
        if not by_lane:
            return []
        best = min(by_lane)
        records = in_store_order(by_lane[best])[:limit]
        if best != LANES.index("ingest"):
            return records
        work = 0
        for i, record in enumerate(records):
            work += self.counts(record)
            if work > self.ingest_chunk:
                return records[:i]
        return records

    def done(self, records: list[R]) -> dict[TopicPartition, int]:
        """Mark ``records`` handled; returns the offsets now safe to commit for their partitions."""
        handled: dict[TopicPartition, set[int]] = {}
        for record in records:
            handled.setdefault(TopicPartition(record.topic, record.partition), set()).add(record.offset)
        offsets = {}
        self._urgent -= sum(_is_urgent(r) for r in records)
        for tp, done in handled.items():
            left = [r for r in self._waiting.get(tp, []) if r.offset not in done]
            if left:
                self._waiting[tp] = left
                offsets[tp] = left[0].offset
            else:
                self._waiting.pop(tp, None)
                offsets[tp] = self._seen[tp] + 1
        return offsets


def _is_urgent(record: KafkaRecord) -> bool:
    return rank(lane_of(record)) < LANES.index("ingest")
