"""A consumer takes a chat's events first, then the world's, and works posted perceptions off in small chunks,
committing offsets only up to a partition's first record it has not handled."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord

from npcworld.lanes import WorldFirst, handling_lane, is_player_traffic, rank
from npcworld.messaging.lanes import IngestPacer, LaneQueue, lane_of

Record = ConsumerRecord[bytes, bytes]
P0, P1 = TopicPartition("perception", 0), TopicPartition("perception", 1)


def record(
    tp: TopicPartition, offset: int, seq: int, lane: str | None, kind: str = "ObservationMade"
) -> Record:
    headers = [("event_type", kind.encode()), ("seq", str(seq).encode())]
    headers += [("lane", lane.encode())] if lane else []
    return ConsumerRecord(tp.topic, tp.partition, offset, 0, 0, None, b"{}", None, 0, 2, headers)


def test_lanes_are_taken_chats_first_then_the_world_then_ingest() -> None:
    ingest = [record(P0, i, seq=i, lane="ingest") for i in range(3)]
    tick = record(P0, 3, seq=10, lane="world")
    chat = record(P1, 0, seq=11, lane="interactive")
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: [*ingest, tick], P1: [chat]})
    assert queue.take(500) == [chat]
    queue.done([chat])
    assert queue.take(500) == [tick]
    queue.done([tick])
    assert queue.take(500) == ingest


def test_a_record_without_a_lane_is_the_worlds_and_one_lane_is_taken_whole_in_store_order() -> None:
    assert rank(None) == rank("world") == 1 and rank("something new") == 1
    a, c = record(P1, 0, seq=2, lane=None), record(P1, 1, seq=3, lane=None)
    b = record(P0, 0, seq=1, lane="world")
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P1: [a, c], P0: [b]})
    assert queue.take(500) == [b, a, c]


def test_ingest_comes_in_chunks_counting_only_the_consumers_own_work() -> None:
    mine = [record(P0, i, seq=i, lane="ingest") for i in range(0, 40, 2)]
    others = [record(P0, i, seq=i, lane="ingest", kind="MemoryRecorded") for i in range(1, 40, 2)]
    queue: LaneQueue[Record] = LaneQueue(lambda r: dict(r.headers)["event_type"] == b"ObservationMade",
                                         ingest_chunk=5)
    queue.add({P0: sorted(mine + others, key=lambda r: r.offset)})
    chunk = queue.take(500)
    assert [r.offset for r in chunk] == list(range(10))  # 5 of its own, the others in between at no cost


def test_offsets_are_committed_only_up_to_the_first_record_not_yet_handled() -> None:
    early = record(P0, 0, seq=1, lane="ingest")
    tick = record(P0, 1, seq=2, lane="world")
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: [early, tick]})
    assert queue.done(queue.take(500)) == {P0: 0}  # the tick went first; the perception is still owed
    assert queue.done(queue.take(500)) == {P0: 2}
    assert len(queue) == 0


def test_a_redelivered_record_is_not_queued_twice_and_a_lost_partition_is_forgotten() -> None:
    first = [record(P0, 0, seq=1, lane="ingest"), record(P1, 0, seq=2, lane="ingest")]
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: first[:1], P1: first[1:]})
    queue.add({P0: first[:1]})  # the partition came back to this consumer from its committed offset
    assert len(queue) == 2
    queue.keep_only([P1])
    assert queue.take(500) == first[1:]
    queue.add({P0: first[:1]})  # assigned again later: taken again (processed_events skips it if handled)
    assert len(queue) == 2


def test_handlers_know_whether_they_handle_player_traffic() -> None:
    assert not is_player_traffic()  # outside the loop: the world's
    for lane, player in (("ingest", True), ("interactive", True), ("world", False), (None, False)):
        with handling_lane(lane):
            assert is_player_traffic() is player
    assert not is_player_traffic()


def test_the_queue_knows_whether_a_chats_or_the_worlds_records_wait() -> None:
    posted, tick = record(P0, 0, seq=1, lane="ingest"), record(P0, 1, seq=2, lane="world")
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: [posted, tick]})
    assert queue.urgent()
    queue.done(queue.take(500))  # the tick
    assert not queue.urgent()


async def test_ingest_requests_wait_their_turn_while_the_world_is_busy_but_never_for_long() -> None:
    gate = WorldFirst(patience=0.2)
    gate.busy(True)
    served: list[str] = []

    async def serve(lane: str | None) -> None:
        await gate.turn(lane)
        served.append(str(lane))

    tasks = [asyncio.create_task(serve(lane)) for lane in ("ingest", "world", "interactive", None)]
    await asyncio.sleep(0.05)
    assert sorted(served) == ["None", "interactive", "world"]  # only ingest waits
    gate.busy(False)
    await asyncio.gather(*tasks)
    assert served[-1] == "ingest"

    gate.busy(True)
    started = asyncio.get_running_loop().time()
    await serve("ingest")  # still busy: served after its patience, not starved
    assert asyncio.get_running_loop().time() - started >= 0.19

    started = asyncio.get_running_loop().time()
    await gate.turn("ingest", writer_waits=True)  # made inside a consumer's transaction: served at once
    assert asyncio.get_running_loop().time() - started < 0.1


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_while_the_world_is_active_ingest_takes_at_most_its_share_of_the_time() -> None:
    clock = Clock()
    pacer = IngestPacer(0.25, active_seconds=2.0, clock=clock)
    pacer.handled("world", 0.05)
    pacer.handled("ingest", 0.1)  # a quarter of the time: 0.1 s of ingest, then 0.3 s for others
    assert abs(pacer.wait() - 0.3) < 1e-9
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: [record(P0, 0, seq=0, lane="ingest")]})
    assert queue.take(500, ingest=pacer.wait() == 0) == []  # held, not lost
    clock.now += 0.3
    assert pacer.wait() == 0
    assert len(queue.take(500, ingest=pacer.wait() == 0)) == 1


def test_a_quiet_world_leaves_ingest_unpaced_and_a_bad_share_is_refused() -> None:
    clock = Clock()
    pacer = IngestPacer(0.5, active_seconds=2.0, clock=clock)
    pacer.handled("ingest", 1.0)  # no world event yet
    assert pacer.wait() == 0
    pacer.handled("interactive", 0.01)
    clock.now += 2.5  # the world went quiet
    pacer.handled("ingest", 1.0)
    assert pacer.wait() == 0
    for share in (0, -0.1, 1.5):
        with pytest.raises(ValueError):
            IngestPacer(share)


def test_records_taken_and_not_yet_done_are_not_taken_again_and_commits_wait_for_them() -> None:
    ingest = [record(P0, i, seq=i, lane="ingest") for i in range(2)]
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: ingest})
    beside = queue.take(500)  # an ingest batch, handled beside the world's
    assert beside == ingest
    queue.add({P0: [record(P0, 2, seq=6, lane="world")]})
    world = queue.take(500)  # while it is handled, the world's next record is taken
    assert [r.offset for r in world] == [2]
    assert queue.take(500) == []  # nothing is taken twice
    assert queue.done(world) == {P0: 0}  # the ingest batch before it is not done: nothing to commit yet
    assert queue.done(beside) == {P0: 3}


def test_while_chats_keep_coming_the_world_takes_every_other_batch() -> None:
    queue: LaneQueue[Record] = LaneQueue()
    queue.add({P0: [record(P0, 0, seq=0, lane="world"), record(P0, 1, seq=1, lane="world")],
               P1: [record(P1, i, seq=10 + i, lane="interactive") for i in range(3)]})
    lanes = []
    for _ in range(4):
        batch = queue.take(1)
        lanes.append(lane_of(batch[0]))
        queue.done(batch)
    assert lanes == ["interactive", "world", "interactive", "world"]
    assert lane_of(queue.take(1)[0]) == "interactive"  # the world has nothing left: chats go on


def test_a_chats_batch_is_a_small_chunk_so_a_steps_next_event_waits_for_few() -> None:
    """Also when nothing else waits yet: a step's next event may arrive while the batch is handled."""
    chats = [record(P1, i, seq=i, lane="interactive") for i in range(20)]
    queue: LaneQueue[Record] = LaneQueue(ingest_chunk=8)
    queue.add({P1: chats})
    assert len(queue.take(500)) == 8
    queue = LaneQueue(ingest_chunk=8)
    queue.add({P1: chats, P0: [record(P0, 0, seq=100, lane="world")]})
    assert len(queue.take(500)) == 8
    world = [record(P0, i, seq=200 + i, lane="world") for i in range(20)]
    queue = LaneQueue(ingest_chunk=8)
    queue.add({P0: world})
    assert len(queue.take(500)) == 20  # the world's events: the whole poll


def test_while_chats_are_handled_beside_the_world_the_world_is_taken_and_no_second_chat_batch() -> None:
    chats = [record(P1, i, seq=10 + i, lane="interactive") for i in range(3)]
    tick = record(P0, 0, seq=20, lane="world")
    queue: LaneQueue[Record] = LaneQueue(ingest_chunk=2)
    queue.add({P1: chats, P0: [tick]})
    beside = queue.take(500)
    assert beside == chats[:2]  # the world waits: a chunk
    busy = frozenset({rank("interactive")})
    assert queue.take(500, skip=busy) == [tick]  # the world's tick is not held by the chats in hand
    assert queue.take(500, skip=busy) == []  # the third chat waits for the batch beside to end
    queue.done([tick])
    queue.done(beside)
    assert queue.take(500) == chats[2:]
