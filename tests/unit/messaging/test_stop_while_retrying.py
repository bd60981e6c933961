"""A consumer asked to stop while its database is gone stops, leaving the batch for redelivery."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from npcworld.contracts import Envelope, ObservationMade
from npcworld.messaging import ConsumerLoop, RetryPolicy, Routes, on
from npcworld.messaging.loop import _Abandoned
from npcworld.messaging.reconnect import Backoff


class GonePool:
    """A pool whose database is unreachable."""

    def __init__(self) -> None:
        self.attempts = 0

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        self.attempts += 1
        raise psycopg.OperationalError("connection refused")
        yield  # pragma: no cover


async def _nothing(event: Envelope[ObservationMade], uow: Any, deps: None) -> None:
    return None


async def test_a_batch_retrying_a_lost_database_is_abandoned_once_stop_is_set() -> None:
    pool = GonePool()
    loop: ConsumerLoop[None] = ConsumerLoop(
        "c", Routes(on(ObservationMade, _nothing)), None, pool=pool,  # type: ignore[arg-type]
        bootstrap="127.0.0.1:1", policy=RetryPolicy(base_delay=0.01, max_delay=0.02),
    )
    loop._stop = asyncio.Event()
    task = asyncio.create_task(loop._process_batch([], None))  # type: ignore[arg-type]
    await asyncio.sleep(0.1)
    assert not task.done(), "without a stop request the batch is retried, never dropped"
    loop._stop.set()
    with pytest.raises(_Abandoned):
        await asyncio.wait_for(task, 2)
    assert pool.attempts > 1


async def test_what_already_happened_outside_is_recorded_even_when_stop_came_first() -> None:
    """A webhook attempt made just before a clean stop is recorded, so it is not made again later."""
    stop = asyncio.Event()
    stop.set()
    calls: list[str] = []

    async def record() -> str:
        calls.append("record")
        return "recorded"

    assert await Backoff("a step", base=0.01).call(record, stop) is None
    assert calls == []
    assert await Backoff("a record", base=0.01).call(record, stop, at_least_once=True) == "recorded"
    assert calls == ["record"]


async def test_a_record_that_meets_an_outage_while_stopping_gives_way_to_the_stop() -> None:
    stop = asyncio.Event()
    stop.set()
    tries = 0

    async def record() -> None:
        nonlocal tries
        tries += 1
        raise psycopg.OperationalError("connection refused")

    assert await Backoff("a record", base=0.01).call(record, stop, at_least_once=True) is None
    assert tries == 1
