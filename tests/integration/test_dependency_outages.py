"""Postgres stopped abruptly, or the broker restarted empty, under a running consumer loop, relay and gateway:
each carries on by itself once the dependency is back, with every event processed exactly once.

A private Postgres server (module scope: stopping it must not disturb other tests) and a private broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

import httpx
import psycopg
import pytest
import uvicorn
from psycopg_pool import AsyncConnectionPool

from launcher.embedded.postgres import start_postgres, stop_postgres
from npcworld.db import open_pool
from npcworld.outbox import OutboxRelay
from services.gateway.api import create_app
from services.gateway.settings import Settings
from tests.infra import BrokerForTests, PostgresForTests, free_port
from tests.integration import tally_app
from tests.polling import eventually

# How long each fault lasts: the length of the outage itself, not a wait for some condition.
OUTAGE_S = 2.0


@pytest.fixture(scope="module")
def own_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresForTests]:
    server = PostgresForTests(tmp_path_factory.mktemp("pg-outage"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def outage_db(own_postgres: PostgresForTests) -> str:
    url = own_postgres.fresh_database()
    asyncio.run(tally_app.prepare(url))
    return url


@pytest.fixture
async def outage_pool(outage_db: str) -> AsyncIterator[AsyncConnectionPool]:
    pool = await open_pool(outage_db, max_size=8, name="outage-test")
    yield pool
    await pool.close()


Runner = Callable[[asyncio.Event], Coroutine[Any, Any, None]]


@contextlib.asynccontextmanager
async def running(*runners: Runner) -> AsyncIterator[None]:
    """Run each ``runner(stop)``; fail if one ends by itself (a dependency blinked: it must not)."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(run(stop)) for run in runners]
    try:
        yield
        for task in tasks:
            assert not task.done(), f"{task.get_coro()} ended by itself: {task.exception()!r}"
    finally:
        stop.set()
        await asyncio.wait(tasks, timeout=30)


async def tallied(pool: AsyncConnectionPool, npc: str) -> list[tuple[str, str]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT npc_id, description FROM tally_effects WHERE npc_id = %s ORDER BY description", (npc,))
        return [(r[0], r[1]) for r in await cur.fetchall()]


async def claims(pool: AsyncConnectionPool, consumer: str, npc: str) -> tuple[int, int, int]:
    """(claims, distinct events claimed, dead letters) of ``consumer`` for ``npc``'s events."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "WITH mine AS (SELECT p.event_id FROM processed_events p JOIN events e USING (event_id)"
            "              WHERE p.consumer = %(c)s AND e.npc_id = %(n)s)"
            " SELECT (SELECT count(*) FROM mine), (SELECT count(DISTINCT event_id) FROM mine),"
            " (SELECT count(*) FROM dead_letters WHERE consumer = %(c)s)", {"c": consumer, "n": npc})
        row = await cur.fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


async def batch_in_flight(pool: AsyncConnectionPool) -> bool:
    """The consumer is half-way through a batch: its transaction has written effects, not committed."""
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()"
            " AND state = 'idle in transaction' AND query LIKE 'INSERT INTO tally_effects%%')")).fetchone()
    return bool(row and row[0])


async def outbox_empty(pool: AsyncConnectionPool) -> bool:
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT NOT EXISTS (SELECT 1 FROM outbox)")).fetchone()
    return bool(row and row[0])


async def append(pool: AsyncConnectionPool, texts: list[tuple[str, str]]) -> None:
    async with pool.connection() as conn:
        await tally_app.append_observations(conn, uuid.uuid4().hex, texts)


def phases(npc: str, *names: str, each: int = 40) -> list[list[tuple[str, str]]]:
    return [[(npc, f"{name} {i:03d}") for i in range(each)] for name in names]


async def test_consumer_loop_and_relay_ride_out_postgres_stopped_abruptly(
    own_postgres: PostgresForTests, outage_pool: AsyncConnectionPool, private_broker: BrokerForTests
) -> None:
    npc, consumer = f"pg-{uuid.uuid4().hex[:6]}", f"tally-{uuid.uuid4().hex[:8]}"
    before, during, after = phases(npc, "before", "during", "after")
    # Slow handlers, so that the outage cuts a batch half-way through its transaction.
    loop = tally_app.make_loop(outage_pool, private_broker.bootstrap, consumer, delay=0.02, heartbeat=0.5)
    relay = OutboxRelay(outage_pool, private_broker.bootstrap)
    async with running(relay.run, loop.run):
        await append(outage_pool, before)
        await eventually(lambda: tallied(outage_pool, npc), lambda rows: len(rows) == 40)
        await append(outage_pool, during)
        await eventually(lambda: batch_in_flight(outage_pool), bool)
        stop_postgres(own_postgres.pgdata, immediate=True)  # as `pg_ctl stop -m immediate` does
        await asyncio.sleep(OUTAGE_S)
        start_postgres(own_postgres.pgdata)
        await eventually(lambda: _appended(outage_pool, after), bool)  # the test's own pool reconnects too
        got = await eventually(lambda: tallied(outage_pool, npc), lambda rows: len(rows) >= 120)
        await eventually(lambda: outbox_empty(outage_pool), bool)
    assert got == sorted(before + during + after), "every event applied exactly once"
    assert await claims(outage_pool, consumer, npc) == (120, 120, 0)


async def test_consumer_loop_and_relay_ride_out_the_broker_restarted_empty(
    outage_pool: AsyncConnectionPool, private_broker: BrokerForTests
) -> None:
    npc, consumer = f"kb-{uuid.uuid4().hex[:6]}", f"tally-{uuid.uuid4().hex[:8]}"
    before, during, after = phases(npc, "before", "during", "after")
    loop = tally_app.make_loop(outage_pool, private_broker.bootstrap, consumer, delay=0.02, heartbeat=0.5)
    relay = OutboxRelay(outage_pool, private_broker.bootstrap)
    async with running(relay.run, loop.run):
        await append(outage_pool, before)
        await eventually(lambda: tallied(outage_pool, npc), lambda rows: len(rows) == 40)
        await append(outage_pool, during)
        await eventually(lambda: tallied(outage_pool, npc), lambda rows: len(rows) > 40)
        private_broker.stop()  # memory storage: what it held is gone
        await asyncio.sleep(OUTAGE_S)
        private_broker.start()
        await append(outage_pool, after)
        got = await eventually(lambda: tallied(outage_pool, npc), lambda rows: len(rows) >= 120)
        await eventually(lambda: outbox_empty(outage_pool), bool)
    assert got == sorted(before + during + after), "every event applied exactly once"
    assert await claims(outage_pool, consumer, npc) == (120, 120, 0)


async def _appended(pool: AsyncConnectionPool, texts: list[tuple[str, str]]) -> bool:
    try:
        await append(pool, texts)
    except psycopg.OperationalError:
        return False
    return True


class _Gateway(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # the test process keeps its own signal handlers
        yield


@pytest.fixture
async def gateway(outage_db: str, private_broker: BrokerForTests) -> AsyncIterator[str]:
    """The gateway app served over real HTTP in this process (its lifespan opens the pool, as deployed)."""
    port = free_port()
    settings = Settings(database_url=outage_db, kafka_bootstrap_servers=private_broker.bootstrap)
    server = _Gateway(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning",
                                     lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


async def test_gateway_answers_503_while_postgres_is_down_and_recovers_by_itself(
    own_postgres: PostgresForTests, gateway: str
) -> None:
    async with httpx.AsyncClient(base_url=gateway, timeout=15,
                                 headers={"Authorization": "Bearer no-such-key"}) as client:

        async def ready() -> int:
            try:
                return (await client.get("/readyz")).status_code
            except httpx.TransportError:
                return -1

        await eventually(ready, lambda status: status == 200)
        stop_postgres(own_postgres.pgdata, immediate=True)
        try:
            assert await ready() == 503
            for request in (client.build_request("GET", "/v1/worlds"),
                            client.build_request("POST", "/v1/worlds", json={"world_id": "w"},
                                                 headers={"Idempotency-Key": "k1"})):
                answer = await client.send(request)
                assert answer.status_code == 503, answer.text
                assert answer.headers["content-type"] == "application/problem+json"
                assert int(answer.headers["retry-after"]) > 0
                assert answer.json()["status"] == 503
            # Once the outage is known, requests are refused at once rather than each waiting for the pool.
            await asyncio.sleep(1.5)
            began = time.monotonic()
            for _ in range(5):
                assert (await client.get("/v1/worlds")).status_code == 503
            assert time.monotonic() - began < 1.0
            assert (await client.get("/healthz")).status_code == 200  # the process itself is alive
        finally:
            start_postgres(own_postgres.pgdata)
        await eventually(ready, lambda status: status == 200)
        assert (await client.get("/v1/worlds")).status_code == 401  # answered again: the key is unknown
