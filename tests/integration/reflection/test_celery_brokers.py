"""The same reflection through real Celery: a worker thread consuming from Redis (the production broker) and
from kombu's SQLAlchemy transport on Postgres (the embedded default)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest
from celery.contrib.testing.worker import start_worker
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ReflectionTriggered
from services.memory.deps import MemoryDeps
from services.reflection.celery_app import CeleryJobQueue, create_celery
from services.reflection.deps import ConsumerDeps
from services.reflection.reflect import Outcome
from services.reflection.settings import ReflectionSettings, sqlalchemy_broker_url
from services.reflection.tasks import register_tasks
from tests.integration.memory.support import new_npc
from tests.integration.reflection.support import (
    REDIS_URL,
    accumulator,
    completed,
    consume,
    consume_all,
    record_day,
    recording_runtime,
    run_stream,
)
from tests.polling import eventually


# kombu's SQLAlchemy transport maps its tables with ``noload``, which SQLAlchemy 2.1 deprecates (still works).
@pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy:sqlalchemy.exc.SADeprecationWarning")
@pytest.mark.parametrize(
    "broker_url",
    [pytest.param(lambda db: REDIS_URL, id="redis"),
     pytest.param(sqlalchemy_broker_url, id="sqlalchemy-postgres")],
)
async def test_a_trigger_delivered_twice_runs_one_reflection_through_celery(
    pool: AsyncConnectionPool, database_url: str, memory_url: str, memory_deps: MemoryDeps,
    broker_url: Callable[[str], str],
) -> None:
    settings = ReflectionSettings(reflection_queue=f"reflection-test-{uuid.uuid4().hex[:10]}",
                                  reflection_worker_pool="solo")
    app = create_celery(settings, broker_url(database_url))
    runtime = recording_runtime(database_url, memory_url)
    register_tasks(app, runtime, retries=0)
    consumer = ConsumerDeps(queue=CeleryJobQueue(app, settings.reflection_queue), settings=settings)

    npc = new_npc()
    recorded = await record_day(pool, npc, memory_deps)
    [trigger] = await consume_all(pool, recorded, consumer)
    assert isinstance(trigger.payload, ReflectionTriggered)
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30):
        await consume(pool, trigger, consumer)
        await consume(pool, trigger, consumer)  # redelivered
        outcomes = await eventually(lambda: _copy(runtime.outcomes), lambda o: len(o) == 2, timeout=60)
    await asyncio.to_thread(runtime.close)  # its loop is not this test's loop
    assert sorted(outcomes) == ["already_done", "completed"]

    done = await completed(pool, trigger.payload.run_key)
    assert len(done.questions) == 3 and done.insights
    await consume(pool, (await run_stream(pool, done.run_key))[1].envelope, consumer)
    assert await accumulator(pool, npc) == (0, 1, None)


async def _copy(items: list[Outcome]) -> list[Outcome]:
    return list(items)
