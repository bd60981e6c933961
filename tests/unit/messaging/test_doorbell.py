"""The relay's doorbell: what a ring says, when a consumer has read everything, and what wakes it."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest
from aiokafka import TopicPartition

from npcworld.messaging import doorbell
from npcworld.messaging.doorbell import Doorbell, heard, ring

WORLD, MEMORY = "npcworld.world.v1", "npcworld.memory.v1"


@dataclass
class Sent:
    topic: str
    partition: int
    offset: int


class FakeConsumer:
    def __init__(self, positions: dict[TopicPartition, int], highwaters: dict[TopicPartition, int | None]):
        self.positions, self.highwaters = positions, highwaters
        self.resting: set[TopicPartition] = set()

    def assignment(self) -> set[TopicPartition]:
        return set(self.positions)

    def paused(self) -> set[TopicPartition]:
        return set(self.resting)

    def pause(self, *partitions: TopicPartition) -> None:
        self.resting |= set(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.resting -= set(partitions)

    def highwater(self, partition: TopicPartition) -> int | None:
        return self.highwaters.get(partition)

    async def position(self, partition: TopicPartition) -> int:
        return self.positions[partition]


def listening(bell: Doorbell) -> Doorbell:
    bell._listening_since = time.monotonic() - 10  # as if it had listened for a while
    return bell


def test_a_ring_names_where_each_partition_written_to_now_ends() -> None:
    payload = ring([Sent(WORLD, 0, 4), Sent(WORLD, 0, 9), Sent(MEMORY, 3, 0), Sent(WORLD, 2, 1)])
    ends, whole = heard(payload)
    assert ends == {TopicPartition(WORLD, 0): 10, TopicPartition(WORLD, 2): 2, TopicPartition(MEMORY, 3): 1}
    assert whole == set()


def test_a_ring_naming_too_many_partitions_names_whole_topics_and_fits_a_notification() -> None:
    payload = ring([Sent(f"topic-{t}", p, 5) for t in range(5) for p in range(60)])
    assert len(payload.encode()) < 8000
    ends, whole = heard(payload)
    assert ends == {} and whole == {f"topic-{t}" for t in range(5)}


@pytest.mark.parametrize("payload", ["", "not json", "[1, 2]", '{"t": {"x": "y"}}'])
def test_a_payload_that_is_not_a_ring_names_nothing(payload: str) -> None:
    assert heard(payload) == ({}, set())


async def test_a_partition_read_to_its_end_rests_and_one_a_ring_names_more_of_fetches_again() -> None:
    tp0, tp1 = TopicPartition(WORLD, 0), TopicPartition(WORLD, 1)
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    consumer = FakeConsumer({tp0: 10, tp1: 0}, {tp0: 10, tp1: 0})
    assert await bell.settle(consumer)
    assert consumer.resting == {tp0, tp1}
    bell._hear(ring([Sent(WORLD, 0, 10)]))  # one more record in partition 0: it fetches at once
    assert consumer.resting == {tp1}
    assert not await bell.settle(consumer)
    assert consumer.resting == {tp1}
    consumer.positions[tp0] = 11
    assert await bell.settle(consumer)
    assert consumer.resting == {tp0, tp1}


async def test_a_partition_with_fetched_records_still_to_hand_out_keeps_fetching() -> None:
    tp0, tp1 = TopicPartition(WORLD, 0), TopicPartition(WORLD, 1)
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    consumer = FakeConsumer({tp0: 3, tp1: 7}, {tp0: 9, tp1: 7})  # the last fetch saw records 3..8
    assert not await bell.settle(consumer)
    assert consumer.resting == {tp1}


async def test_nothing_rests_before_a_fetch_was_answered_while_not_listening_or_while_held() -> None:
    tp0 = TopicPartition(WORLD, 0)
    bell = Doorbell("postgresql://unused", [WORLD], "test")
    consumer = FakeConsumer({tp0: 3}, {tp0: 3})
    assert not await bell.settle(consumer)  # not listening: fetch as usual
    assert consumer.resting == set()
    listening(bell)
    assert await bell.settle(consumer)
    consumer.highwaters[tp0] = None
    assert not await bell.settle(consumer)
    assert consumer.resting == set()
    consumer.highwaters[tp0] = 3
    assert not await bell.settle(consumer, hold=True)  # held: paused, but not resting
    assert consumer.resting == {tp0}
    bell._hear(ring([Sent(WORLD, 0, 3)]))  # a ring does not resume a held partition
    assert consumer.resting == {tp0}


async def test_a_resting_partition_is_fetched_again_for_a_moment_every_recheck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tp0 = TopicPartition(WORLD, 0)
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    consumer = FakeConsumer({tp0: 3}, {tp0: 3})
    assert await bell.settle(consumer)
    now = time.monotonic()
    monkeypatch.setattr(doorbell.time, "monotonic", lambda: now + doorbell.RECHECK_S + 0.01)
    assert not await bell.settle(consumer)
    assert consumer.resting == set()
    monkeypatch.setattr(doorbell.time, "monotonic", lambda: now + doorbell.RECHECK_S + 0.5)
    assert await bell.settle(consumer)
    assert consumer.resting == {tp0}


async def test_a_ring_without_ends_wakes_every_partition_of_its_topics() -> None:
    tp0, other = TopicPartition(WORLD, 0), TopicPartition(MEMORY, 0)
    bell = listening(Doorbell("postgresql://unused", [WORLD, MEMORY], "test"))
    consumer = FakeConsumer({tp0: 3, other: 1}, {tp0: 3, other: 1})
    assert await bell.settle(consumer)
    bell._hear(ring([Sent(WORLD, p, 1) for p in range(250)]))
    assert consumer.resting == {other}
    await bell.wait({other}, timeout=0.05)  # the loop's sleep ends and clears what woke it
    assert not await bell.settle(consumer)
    assert consumer.resting == {other}


async def test_the_wait_ends_on_a_ring_for_an_assigned_partition_and_not_for_another() -> None:
    mine = TopicPartition(WORLD, 0)
    bell = listening(Doorbell("postgresql://unused", [WORLD, MEMORY], "test"))
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, bell._hear, ring([Sent(WORLD, 1, 3)]))  # someone else's partition
    loop.call_later(0.05, bell._hear, ring([Sent("npcworld.dialogue.v1", 0, 3)]))  # a topic not read here
    loop.call_later(0.3, bell._hear, ring([Sent(WORLD, 0, 3)]))
    start = time.monotonic()
    await bell.wait({mine}, timeout=5)
    assert 0.25 < time.monotonic() - start < 2


async def test_a_ring_naming_a_whole_topic_wakes_every_reader_of_it() -> None:
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    asyncio.get_running_loop().call_later(0.05, bell._hear, ring([Sent(WORLD, p, 1) for p in range(250)]))
    start = time.monotonic()
    await bell.wait({TopicPartition(WORLD, 3)}, timeout=5)
    assert time.monotonic() - start < 1


async def test_the_wait_ends_on_stop_on_a_lost_connection_and_after_its_timeout() -> None:
    tp = TopicPartition(WORLD, 0)
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, stop.set)
    start = time.monotonic()
    await bell.wait({tp}, stop, timeout=5)
    assert time.monotonic() - start < 1

    asyncio.get_running_loop().call_later(0.05, bell._deaf)
    start = time.monotonic()
    await bell.wait({tp}, timeout=5)
    assert time.monotonic() - start < 1

    listening(bell)
    start = time.monotonic()
    await bell.wait({tp}, timeout=0.2)
    assert 0.15 < time.monotonic() - start < 1


async def test_a_ring_heard_after_settling_wakes_the_wait_that_follows() -> None:
    tp = TopicPartition(WORLD, 0)
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    assert await bell.settle(FakeConsumer({tp: 1}, {tp: 1}))
    bell._hear(ring([Sent(WORLD, 0, 1)]))  # between settling and the wait
    start = time.monotonic()
    await bell.wait({tp}, timeout=5)
    assert time.monotonic() - start < 0.5


async def test_ends_heard_from_an_earlier_broker_are_forgotten_with_its_consumer() -> None:
    tp = TopicPartition(WORLD, 0)
    bell = listening(Doorbell("postgresql://unused", [WORLD], "test"))
    bell._hear(ring([Sent(WORLD, 0, 5000)]))
    fresh = FakeConsumer({tp: 30}, {tp: 30})  # a new broker: the republished records have new offsets
    assert not await bell.settle(fresh)
    bell.forget()
    assert await bell.settle(fresh)


def test_the_doorbell_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert doorbell.doorbell_enabled()
    monkeypatch.setenv("NPCWORLD_DOORBELL", "0")
    assert not doorbell.doorbell_enabled()
