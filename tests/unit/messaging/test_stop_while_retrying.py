"""A consumer asked to stop while its database is gone stops, leaving the batch for redelivery."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from npcworld.messaging import ConsumerLoop, RetryPolicy
from npcworld.messaging.loop import _Abandoned


class GonePool:
    """A pool whose database is unreachable."""

    def __init__(self) -> None:
        self.attempts = 0

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        self.attempts += 1
        raise psycopg.OperationalError("connection refused")
        yield  # pragma: no cover


async def test_a_batch_retrying_a_lost_database_is_abandoned_once_stop_is_set() -> None:
    pool = GonePool()
    loop: ConsumerLoop[None] = ConsumerLoop(
        "c", {"ObservationMade": lambda *_: asyncio.sleep(0)}, None, pool=pool,  # type: ignore[arg-type]
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
