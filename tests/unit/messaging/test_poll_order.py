"""A poll is handled in event-store order, so a reaction never overtakes its cause from another topic."""

from __future__ import annotations

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from npcworld.messaging.loop import in_store_order


def record(topic: str, offset: int, seq: int | None) -> ConsumerRecord[bytes, bytes]:
    headers = [("event_type", b"X")] + ([("seq", str(seq).encode())] if seq is not None else [])
    return ConsumerRecord(topic, 0, offset, 0, 0, None, b"{}", None, 0, 2, headers)


def test_a_poll_spanning_topics_is_handled_in_sequence_order() -> None:
    ticked = record("world", 7, seq=100)
    decided = record("planning", 3, seq=101)
    moved = record("world", 8, seq=102)
    poll = {TopicPartition("planning", 0): [decided], TopicPartition("world", 0): [ticked, moved]}
    assert in_store_order(poll) == [ticked, decided, moved]


def test_records_not_from_the_relay_keep_the_polls_order() -> None:
    foreign = record("world", 1, seq=None)
    relayed = record("planning", 0, seq=5)
    poll = {TopicPartition("world", 0): [foreign], TopicPartition("planning", 0): [relayed]}
    assert in_store_order(poll) == [foreign, relayed]
