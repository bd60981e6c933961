"""A poll is handled in event-store order, so a reaction never overtakes its cause from another topic."""

from __future__ import annotations

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from npcworld.messaging.lanes import LaneQueue

Record = ConsumerRecord[bytes, bytes]


def record(topic: str, offset: int, seq: int | None) -> Record:
    headers = [("event_type", b"X")] + ([("seq", str(seq).encode())] if seq is not None else [])
    return ConsumerRecord(topic, 0, offset, 0, 0, None, b"{}", None, 0, 2, headers)


def taken(poll: dict[TopicPartition, list[Record]]) -> list[Record]:
    queue: LaneQueue[Record] = LaneQueue()
    queue.add(poll)
    return queue.take(500)


def test_a_poll_spanning_topics_is_handled_in_sequence_order() -> None:
    ticked = record("world", 7, seq=100)
    decided = record("planning", 3, seq=101)
    moved = record("world", 8, seq=102)
    poll = {TopicPartition("planning", 0): [decided], TopicPartition("world", 0): [ticked, moved]}
    assert taken(poll) == [ticked, decided, moved]


def test_a_partition_whose_records_were_published_out_of_sequence_order_is_handled_in_it() -> None:
    """The relay publishes in commit order across drains: a transaction that took an earlier sequence number
    and committed later is behind in its partition."""
    later, earlier = record("world", 0, seq=12), record("world", 1, seq=11)
    assert taken({TopicPartition("world", 0): [later, earlier]}) == [earlier, later]


def test_records_not_from_the_relay_come_first_in_the_polls_order() -> None:
    foreign = record("world", 1, seq=None)
    relayed = record("planning", 0, seq=5)
    poll = {TopicPartition("world", 0): [foreign], TopicPartition("planning", 0): [relayed]}
    assert taken(poll) == [foreign, relayed]
