"""The event bus end to end: event store → outbox relay → Tansu → the consumer loop → Postgres."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from psycopg_pool import AsyncConnectionPool

from launcher.embedded.rotation import rotate_broker
from npcworld.contracts import TraceContext
from npcworld.contracts.topics import DEAD_LETTER, PERCEPTION
from npcworld.errors import ConcurrencyError
from npcworld.eventstore import EventStore
from npcworld.messaging.doorbell import Doorbell
from npcworld.outbox import OutboxRelay
from tests.infra import BrokerForTests
from tests.integration import tally_app
from tests.polling import eventually


@contextlib.asynccontextmanager
async def running(*coros: Coroutine[Any, Any, None], stop: asyncio.Event) -> AsyncIterator[None]:
    tasks = [asyncio.create_task(c) for c in coros]
    try:
        yield
    finally:
        stop.set()
        done, _ = await asyncio.wait(tasks, timeout=30)
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]


async def effects(pool: AsyncConnectionPool, world_npc_prefix: str = "") -> list[tuple[str, str]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT npc_id, description FROM tally_effects WHERE npc_id LIKE %s ORDER BY description",
            (world_npc_prefix + "%",),
        )
        return [(r[0], r[1]) for r in await cur.fetchall()]


@pytest.fixture
async def tally_db(database_url: str, pool: AsyncConnectionPool) -> AsyncConnectionPool:
    await tally_app.prepare(database_url)
    async with pool.connection() as conn:
        await conn.execute("TRUNCATE tally_effects, outbox CASCADE")
    return pool


def group() -> str:
    return f"tally-{uuid.uuid4().hex[:8]}"


async def test_appended_events_reach_the_consumer_exactly_once(
    tally_db: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    world, npc = uuid.uuid4().hex, f"n-{uuid.uuid4().hex[:6]}"
    texts = [(npc, f"saw the stove burning #{i:03d}") for i in range(60)]
    stop = asyncio.Event()
    relay = OutboxRelay(tally_db, broker.bootstrap)
    loop = tally_app.make_loop(tally_db, broker.bootstrap, group())
    async with running(relay.run(stop), loop.run(stop), stop=stop):
        async with tally_db.connection() as conn:
            await tally_app.append_observations(conn, world, texts)
        got = await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 60)
    assert got == sorted(texts)


async def test_an_idle_consumer_stops_fetching_and_the_relays_doorbell_wakes_it_at_once(
    tally_db: AsyncConnectionPool, broker: BrokerForTests, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing to read, a consumer pauses its partitions (its client sends no fetch); each event the
    relay publishes wakes it well before the periodic recheck would have. The recheck is stretched to 4 s
    here so that the ring, not the recheck, is what the delays measure, also on a busy machine."""
    monkeypatch.setattr(Doorbell, "recheck_s", 4.0)
    world, npc = uuid.uuid4().hex, f"d-{uuid.uuid4().hex[:6]}"
    stop = asyncio.Event()
    loop = tally_app.make_loop(tally_db, broker.bootstrap, group())
    async with running(OutboxRelay(tally_db, broker.bootstrap).run(stop), loop.run(stop), stop=stop):
        await eventually(_true(lambda: loop.quiet), bool, timeout=60)
        quiet = []
        for _ in range(40):  # 2 s: quiet nearly all the time
            quiet.append(loop.quiet)
            await asyncio.sleep(0.05)
        assert sum(quiet) >= 32, quiet
        delays = []
        for i in range(5):
            await asyncio.sleep(0.7 * i)  # at different points between rechecks
            await eventually(_true(lambda: loop.quiet), bool, timeout=10)
            start = asyncio.get_running_loop().time()
            async with tally_db.connection() as conn:
                await tally_app.append_observations(conn, world, [(npc, f"knock {i}")])
            await eventually(lambda: effects(tally_db, npc), lambda rows, n=i + 1: len(rows) >= n, timeout=10)
            delays.append(asyncio.get_running_loop().time() - start)
    # Waiting for the recheck, the five would spread over 0-4 s; rung, each takes a hop (~0.1 s idle).
    assert max(delays) < 1.5, delays
    assert sorted(delays)[2] < 0.5, delays


def _true(read: Any) -> Any:
    async def probe() -> bool:
        return bool(read())

    return probe


async def test_a_pipelined_route_applies_each_event_once_and_still_dead_letters_its_poison(
    tally_db: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    npc = f"q-{uuid.uuid4().hex[:6]}"
    texts = [(npc, f"saw the well #{i:03d}") for i in range(60)]
    stop, consumer_group = asyncio.Event(), group()
    relay = OutboxRelay(tally_db, broker.bootstrap)
    loop = tally_app.make_loop(tally_db, broker.bootstrap, consumer_group, pipelined=True)
    async with running(relay.run(stop), loop.run(stop), stop=stop):
        async with tally_db.connection() as conn:
            poisoned = [*texts[:30], (npc, "explode"), *texts[30:]]
            await tally_app.append_observations(conn, uuid.uuid4().hex, poisoned)
        await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 60)
        reasons = await eventually(
            lambda: _dead_letter_reasons(tally_db, consumer_group), lambda r: len(r) >= 1
        )
        await asyncio.sleep(0.5)  # any duplicate would land now
        got = await effects(tally_db, npc)
    assert got == sorted(texts)
    assert len(reasons) == 1 and "always fails" in reasons[0]


async def test_a_consumer_killed_mid_batch_loses_nothing_and_applies_nothing_twice(
    tally_db: AsyncConnectionPool, database_url: str, broker: BrokerForTests
) -> None:
    npc = f"k-{uuid.uuid4().hex[:6]}"
    texts = [(npc, f"event {i:04d}") for i in range(200)]
    async with tally_db.connection() as conn:
        await tally_app.append_observations(conn, uuid.uuid4().hex, texts)
    stop = asyncio.Event()
    consumer_group = group()
    cmd = [sys.executable, "-m", "tests.integration.tally_app", database_url, broker.bootstrap,
           consumer_group, "0.01"]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    async with running(OutboxRelay(tally_db, broker.bootstrap).run(stop), stop=stop):
        proc = subprocess.Popen(cmd, env=env)
        try:
            await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 20, timeout=90)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        partial = len(await effects(tally_db, npc))
        assert partial < 200, "the consumer finished before it could be killed"
        proc = subprocess.Popen([*cmd[:-1], "0"], env=env)
        try:
            await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 200, timeout=90)
            await asyncio.sleep(0.5)  # any duplicate would land now
            got = await effects(tally_db, npc)
        finally:
            proc.terminate()
            proc.wait()
    assert got == sorted(texts)


async def test_after_a_broker_restart_the_relay_republishes_and_consumers_end_in_the_same_state(
    tally_db: AsyncConnectionPool, private_broker: BrokerForTests
) -> None:
    npc = f"r-{uuid.uuid4().hex[:6]}"
    world = uuid.uuid4().hex
    first = [(npc, f"before restart {i:03d}") for i in range(30)]
    consumer_group = group()
    stop = asyncio.Event()
    async with running(
        OutboxRelay(tally_db, private_broker.bootstrap).run(stop),
        tally_app.make_loop(tally_db, private_broker.bootstrap, consumer_group).run(stop),
        stop=stop,
    ):
        async with tally_db.connection() as conn:
            await tally_app.append_observations(conn, world, first)
        await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 30)
    private_broker.restart()
    second = [(npc, f"after restart {i:03d}") for i in range(10)]
    async with tally_db.connection() as conn:
        await tally_app.append_observations(conn, world, second)
    stop = asyncio.Event()
    relay = OutboxRelay(tally_db, private_broker.bootstrap)
    async with running(
        relay.run(stop),
        tally_app.make_loop(tally_db, private_broker.bootstrap, consumer_group).run(stop),
        stop=stop,
    ):
        await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 40)
        await asyncio.sleep(0.5)
        got = await effects(tally_db, npc)
        republished = await _count_messages(private_broker.bootstrap, PERCEPTION.name)
    assert got == sorted(first + second)
    assert republished >= 40, "the fresh broker should hold the whole history again"


async def test_a_broker_rotation_loses_nothing_and_republishes_only_what_follows_its_checkpoint(
    tally_db: AsyncConnectionPool, private_broker: BrokerForTests
) -> None:
    npc, world = f"rot-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    before = [(npc, f"before the rotation {i:03d}") for i in range(30)]
    unpublished = [(npc, f"stored while the relay is stopped {i:03d}") for i in range(10)]
    after = [(npc, f"after the rotation {i:03d}") for i in range(10)]
    stop_loop, relay_stop = asyncio.Event(), asyncio.Event()
    loop = tally_app.make_loop(tally_db, private_broker.bootstrap, group(), heartbeat=0.2)
    tasks = {"loop": asyncio.create_task(loop.run(stop_loop)),
             "relay": asyncio.create_task(OutboxRelay(tally_db, private_broker.bootstrap).run(relay_stop))}

    async def stop_relay() -> None:
        relay_stop.set()
        await tasks["relay"]
        async with tally_db.connection() as conn:
            await tally_app.append_observations(conn, world, unpublished)

    async def start_relay() -> None:
        relay_stop.clear()
        tasks["relay"] = asyncio.create_task(OutboxRelay(tally_db, private_broker.bootstrap).run(relay_stop))

    try:
        async with tally_db.connection() as conn:
            await tally_app.append_observations(conn, world, before)
            await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 30)
            last_before = await (await conn.execute("SELECT max(seq) FROM events")).fetchone()
        result = await rotate_broker(
            tally_db, private_broker.bootstrap, stop_relay=stop_relay,
            restart_broker=lambda: asyncio.to_thread(private_broker.restart), start_relay=start_relay,
            timeout=60,
        )
        async with tally_db.connection() as conn:
            await tally_app.append_observations(conn, world, after)
        await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 50)
        await asyncio.sleep(0.5)  # any duplicate would land now
        got = await effects(tally_db, npc)
        on_new_broker = await _count_messages(private_broker.bootstrap, PERCEPTION.name)
    finally:
        stop_loop.set()
        relay_stop.set()
        await asyncio.gather(*tasks.values())
    assert got == sorted(before + unpublished + after)
    assert result.checkpoint_seq == last_before[0]  # type: ignore[index]
    assert on_new_broker == 20, "only the events after the checkpoint belong on the new broker"


async def test_a_poison_event_is_dead_lettered_with_its_reason_while_later_events_flow(
    tally_db: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    npc = f"p-{uuid.uuid4().hex[:6]}"
    world = uuid.uuid4().hex
    stop = asyncio.Event()
    consumer_group = group()
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        async with running(
            OutboxRelay(tally_db, broker.bootstrap).run(stop),
            tally_app.make_loop(tally_db, broker.bootstrap, consumer_group).run(stop),
            stop=stop,
        ):
            good = tally_app.observation(world, npc, "fine 1").model_dump(mode="json")
            bad_version = {**good, "event_id": str(uuid.uuid4()), "schema_version": 99}
            import json

            await producer.send_and_wait(PERCEPTION.name, json.dumps(bad_version).encode(), key=npc.encode())
            await producer.send_and_wait(PERCEPTION.name, b"{not json", key=npc.encode())
            async with tally_db.connection() as conn:
                await tally_app.append_observations(conn, world, [(npc, "explode now"), (npc, "fine 2")])
            got = await eventually(lambda: effects(tally_db, npc), lambda rows: len(rows) >= 1)
            reasons = await eventually(
                lambda: _dead_letter_reasons(tally_db, consumer_group), lambda r: len(r) >= 3
            )
    finally:
        await producer.stop()
    assert got == [(npc, "fine 2")]
    assert any("schema_version 99" in r for r in reasons)
    assert any("not JSON" in r for r in reasons)
    assert any("handler failed 2 times" in r and "always fails" in r for r in reasons)
    dlq = await _read_headers(broker.bootstrap, DEAD_LETTER.name, consumer_group)
    assert len(dlq) >= 3 and all("x-dlq-reason" in h for h in dlq)


async def test_a_stream_name_is_each_tenants_own(tally_db: AsyncConnectionPool) -> None:
    store, world, npc = EventStore(), uuid.uuid4().hex, "occ"
    stream = f"npc-{world}"
    async with tally_db.connection() as conn, conn.transaction():
        for tenant in ("tenant-a", "tenant-b"):  # the same name, each at version 0: two streams
            event = tally_app.observation(world, npc, f"{tenant} v1", tenant_id=tenant)
            await store.append(conn, stream, [event], expected_version=0)
        with pytest.raises(ValueError, match="2 tenants"):
            await store.append(conn, stream, [tally_app.observation(world, npc, "x", tenant_id=t)
                                              for t in ("tenant-a", "tenant-b")])
        mine = await store.read_stream(conn, "tenant-b", stream)
    assert [e.envelope.payload.description for e in mine] == ["tenant-b v1"]  # type: ignore[attr-defined]
    assert mine[0].stream_id == stream and mine[0].version == 1


async def test_an_events_trace_context_reads_back_as_it_was_written(tally_db: AsyncConnectionPool) -> None:
    """A W3C traceparent is stored as its bytes, anything else as JSON: either way it reads back the same."""
    store, world = EventStore(), uuid.uuid4().hex
    parent = "00-4ea421c4b51b0be50b47a3fdeb570c0c-8bdf0db28eea2777-01"
    traces = [TraceContext(traceparent=parent), TraceContext(traceparent=parent, tracestate="vendor=x"),
              TraceContext(traceparent="not-a-w3c-parent"), TraceContext()]
    events = [tally_app.observation(world, "occ", str(i)).model_copy(update={"trace": t})
              for i, t in enumerate(traces)]
    async with tally_db.connection() as conn, conn.transaction():
        await store.append(conn, f"npc-{world}", events, expected_version=0)
        stored = await store.read_stream(conn, "tenant-a", f"npc-{world}")
    assert [s.envelope.trace for s in stored] == traces


async def test_an_append_at_a_stale_version_is_rejected_not_overwritten(
    tally_db: AsyncConnectionPool
) -> None:
    store, world, npc = EventStore(), uuid.uuid4().hex, "occ"
    stream = f"npc-{world}"
    async with tally_db.connection() as conn, conn.transaction():
        await store.append(conn, stream, [tally_app.observation(world, npc, "v1")], expected_version=0)
    async with tally_db.connection() as a, tally_db.connection() as b:
        async with a.transaction():
            await store.append(a, stream, [tally_app.observation(world, npc, "writer a")], expected_version=1)
        with pytest.raises(ConcurrencyError, match="expected version 1, but it is at 2"):
            async with b.transaction():
                await store.append(
                    b, stream, [tally_app.observation(world, npc, "writer b")], expected_version=1
                )
        events = await store.read_stream(a, "tenant-a", stream)
    assert [e.envelope.payload.description for e in events] == ["v1", "writer a"]  # type: ignore[attr-defined]


async def test_concurrent_appends_to_one_stream_version_let_exactly_one_win(
    tally_db: AsyncConnectionPool
) -> None:
    store, world = EventStore(), uuid.uuid4().hex
    stream = f"npc-{world}"

    async def writer(name: str) -> str:
        async with tally_db.connection() as conn:
            try:
                async with conn.transaction():
                    await store.append(
                        conn, stream, [tally_app.observation(world, "x", name)], expected_version=0
                    )
                    await asyncio.sleep(0.2)  # hold the transaction so the two overlap
            except ConcurrencyError:
                return "lost"
            return "won"

    results = sorted(await asyncio.gather(writer("a"), writer("b")))
    assert results == ["lost", "won"]


async def test_a_writer_queues_for_all_its_streams_in_one_order_whatever_order_it_names_them(
    pool: AsyncConnectionPool
) -> None:
    """``queue_for_all`` takes the streams' places in the store's one order (by lock key), so two writers of
    overlapping streams queue behind each other and never each hold a place the other waits for (a deadlock,
    which Postgres breaks after a second by failing one). Seen from outside: a writer waiting for the first
    stream in that order holds none of the later ones meanwhile, whichever order it named them in."""
    store, tenant = EventStore(), uuid.uuid4().hex
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT s FROM unnest(%s::text[]) AS s ORDER BY hashtext(s)",
            ([f"{tenant}/a", f"{tenant}/b"],))).fetchall()
    first, later = (str(r[0]).split("/", 1)[1] for r in row)
    holding, waiting = asyncio.Event(), asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with pool.connection() as conn, conn.transaction():
            await store.queue_for(conn, tenant, first)
            holding.set()
            await release.wait()

    async def writer() -> None:
        async with pool.connection() as conn, conn.transaction():
            waiting.set()
            await store.queue_for_all(conn, [(tenant, later), (tenant, first)])  # named the other way round
            await store.queue_for(conn, tenant, later)  # queuing again for a stream it holds is free

    held = asyncio.create_task(holder())
    await holding.wait()
    written = asyncio.create_task(writer())
    await waiting.wait()
    await asyncio.sleep(0.3)
    assert not written.done()  # it waits for the first stream...
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL lock_timeout = '2s'")
        await store.queue_for(conn, tenant, later)  # ...holding no place in the later one meanwhile
    release.set()
    await asyncio.wait_for(asyncio.gather(held, written), timeout=10)


async def test_the_relay_publishes_a_commit_at_once_and_never_skips_one_that_commits_late(
    tally_db: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    world, npc = uuid.uuid4().hex, f"late-{uuid.uuid4().hex[:6]}"
    relay = OutboxRelay(tally_db, broker.bootstrap)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    store = EventStore()
    try:
        async with tally_db.connection() as early, early.transaction():
            await store.append(
                early, f"s-{npc}-1", [tally_app.observation(world, npc, "early seq, commits last")]
            )
            async with tally_db.connection() as late:
                await tally_app.append_observations(late, world, [(npc, "later seq, commits first")])
            assert await relay.drain_once(producer) == 1, "a commit waits for no unrelated open writer"
        assert await relay.drain_once(producer) == 1, "the late commit is published after it"
    finally:
        await producer.stop()
    published = [r for r in await _read_all(broker.bootstrap, PERCEPTION.name) if npc.encode() in r.value]
    assert [b"commits first" in r.value for r in published] == [True, False]


async def _dead_letter_reasons(pool: AsyncConnectionPool, consumer: str) -> list[str]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT reason FROM dead_letters WHERE consumer = %s", (consumer,))
        return [r[0] for r in await cur.fetchall()]


async def _read_all(bootstrap: str, topic: str) -> list[Any]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer.seek_to_beginning()
        records: list[Any] = []
        for _ in range(20):
            batch = await consumer.getmany(timeout_ms=200)
            records += [r for rs in batch.values() for r in rs]
            if not batch and records:
                break
        return records
    finally:
        await consumer.stop()


async def _count_messages(bootstrap: str, topic: str) -> int:
    return len(await _read_all(bootstrap, topic))


async def _read_headers(bootstrap: str, topic: str, consumer: str) -> list[dict[str, bytes]]:
    records = await _read_all(bootstrap, topic)
    headers = [dict(r.headers) for r in records]
    return [h for h in headers if h.get("x-dlq-consumer") == consumer.encode()]

