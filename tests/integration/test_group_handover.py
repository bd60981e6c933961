"""A consumer that stops cleanly leaves its group: the next member (a restarted process, another instance)
starts on the broker's join delay, not after the old member's 10 s session has run out."""

from __future__ import annotations

import time
import uuid

import pytest

from npcworld.contracts.topics import WORLD
from npcworld.messaging.kafka import make_consumer, stop_consumer
from tests.infra import BrokerForTests

pytestmark = pytest.mark.integration


async def test_the_next_member_of_a_group_starts_without_waiting_for_the_stopped_ones_session(
    broker: BrokerForTests,
) -> None:
    group, waits = f"handover-{uuid.uuid4().hex[:8]}", list[float]()
    for _ in range(3):
        consumer = make_consumer(broker.bootstrap, group, [WORLD.name], max_records=10)
        started = time.monotonic()
        await consumer.start()
        await consumer.getmany(timeout_ms=100)
        waits.append(time.monotonic() - started)
        assert consumer.assignment(), "the only member of the group got no partition"
        await stop_consumer(consumer)
    # The embedded broker holds every first JoinGroup ~5 s; a member that had not left held the next one
    # for its session (10 s) on top of that: 18 s.
    assert max(waits[1:]) < 9, f"starts after a clean stop took {[round(w, 1) for w in waits]} s"
