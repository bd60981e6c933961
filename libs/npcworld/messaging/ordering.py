"""A poll's records in event-store order: the consumer loop handles a cause before its reactions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from aiokafka import TopicPartition

from npcworld.messaging.record import KafkaRecord, header

__all__ = ["in_store_order"]

R = TypeVar("R", bound=KafkaRecord)


def in_store_order(batches: Mapping[TopicPartition, list[R]]) -> list[R]:
    """A poll's records in event-store sequence order (the relay's ``seq`` header), across partitions.

    Each partition is already in that order; merging them keeps a reaction behind its cause even when the
    two came from different topics in one poll (a step's WorldTicked and the ActionDecided it caused), so
    handlers see the same order in every run. Records without the header (not from the relay) keep the
    poll's own order.
    """
    records = [r for rs in batches.values() for r in rs]
    seqs = [s for r in records if (s := _seq(r)) is not None]
    if len(seqs) != len(records):
        return records
    return [r for _, r in sorted(zip(seqs, records, strict=True), key=lambda pair: pair[0])]


def _seq(record: KafkaRecord) -> int | None:
    value = header(record, "seq")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
