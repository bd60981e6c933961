"""Offset commits run beside the next poll, one at a time and in order, and a failed one stops nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import TopicPartition
from aiokafka.errors import CommitFailedError

from npcworld.messaging.offsets import OffsetCommits

TP = TopicPartition("npcworld.perception.v1", 0)


class SlowBroker:
    """A consumer whose offset commits end only when the test lets them; the first ``failures`` fail."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.started: list[dict[TopicPartition, int]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.release = asyncio.Event()

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self.started.append(dict(offsets))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self.release.wait()
            if self.failures:
                self.failures -= 1
                raise CommitFailedError("the group rebalanced")
        finally:
            self.in_flight -= 1


def _done() -> list[dict[TopicPartition, int]]:
    return []


def _commits(broker: SlowBroker, done: list[dict[TopicPartition, int]]) -> OffsetCommits:
    consumer: Any = broker
    return OffsetCommits("c", consumer, done.append)


async def test_the_loop_goes_on_while_an_offset_commit_waits_for_the_broker() -> None:
    broker, done = SlowBroker(), _done()
    commits = _commits(broker, done)
    await asyncio.wait_for(commits.send({TP: 10}), 1.0)  # returns with the broker not yet answering
    await asyncio.sleep(0)
    assert broker.started == [{TP: 10}] and done == []
    broker.release.set()
    await commits.settle()
    assert done == [{TP: 10}]


async def test_commits_go_one_at_a_time_in_order() -> None:
    broker, done = SlowBroker(), _done()
    commits = _commits(broker, done)
    await commits.send({TP: 10})
    second = asyncio.create_task(commits.send({TP: 20}))
    await asyncio.sleep(0.01)
    assert not second.done()  # waits for the first: a partition's committed offset only moves forward
    broker.release.set()
    await second
    await commits.settle()
    assert broker.started == [{TP: 10}, {TP: 20}] and broker.most_in_flight == 1
    assert done == [{TP: 10}, {TP: 20}]


async def test_a_failed_commit_is_logged_and_the_next_one_still_goes() -> None:
    broker, done = SlowBroker(failures=1), _done()
    commits = _commits(broker, done)
    broker.release.set()
    await commits.send({TP: 10})
    await commits.send({TP: 20})
    await commits.settle()
    assert broker.started == [{TP: 10}, {TP: 20}]
    assert done == [{TP: 10}, {TP: 20}]  # handled either way; a redelivery of the first is skipped


async def test_nothing_to_commit_sends_nothing() -> None:
    broker, done = SlowBroker(), _done()
    commits = _commits(broker, done)
    await commits.send({})
    await commits.settle()
    assert broker.started == [] and done == []
