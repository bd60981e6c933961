"""Consumers' claims folded into a watermark: rows stop growing with the log, and nothing that was processed
becomes owed again, nor anything owed processed.

A fold moves a consumer's watermark only over settled events (no transaction that could still commit one
below it is running) that it claimed and did not dead-letter, and deletes their rows.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.dead_letters import redrive
from npcworld.eventstore import EventFilter, EventStore, claims
from npcworld.outbox import OutboxRelay
from tests.infra import BrokerForTests
from tests.integration import tally_app
from tests.integration.test_eventbus import effects, running
from tests.polling import eventually


@pytest.fixture
async def tally_db(database_url: str, pool: AsyncConnectionPool) -> AsyncConnectionPool:
    await tally_app.prepare(database_url)
    return pool


async def _append(pool: AsyncConnectionPool, world: str, n: int, tag: str) -> list[tuple[Any, int]]:
    """Append n observations; their (event_id, seq) in order."""
    npc = f"w-{uuid.uuid4().hex[:6]}"
    async with pool.connection() as conn:
        await tally_app.append_observations(conn, world, [(npc, f"{tag} {i:03d}") for i in range(n)])
        cur = await conn.execute(
            "SELECT event_id, seq FROM events WHERE world_id = %s AND npc_id = %s ORDER BY seq", (world, npc)
        )
        return [(r[0], r[1]) for r in await cur.fetchall()]


async def _claim(pool: AsyncConnectionPool, consumer: str, ids: list[Any]) -> None:
    async with pool.connection() as conn:
        await conn.execute("INSERT INTO processed_events (consumer, event_id) SELECT %s, unnest(%s::uuid[])",
                           (consumer, ids))


async def _caught_up(pool: AsyncConnectionPool, consumer: str) -> None:
    """A consumer that has processed every event stored so far (the module's database is shared)."""
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO processed_events (consumer, event_id) SELECT %s, event_id FROM events", (consumer,)
        )


async def _fold(pool: AsyncConnectionPool, consumer: str) -> int:
    async with pool.connection() as conn, conn.transaction():
        return await claims.fold(conn, consumer, {"ObservationMade"}, keep_seconds=0)


async def _state(pool: AsyncConnectionPool, consumer: str, ids: list[Any]) -> tuple[set[Any], int, int]:
    """What the consumer counts as processed among ``ids``, its rows left, its watermark."""
    async with pool.connection() as conn:
        done = await claims.processed(conn, consumer, ids)
        rows = await (await conn.execute("SELECT count(*) FROM processed_events WHERE consumer = %s",
                                         (consumer,))).fetchone()
        mark = await (await conn.execute("SELECT seq FROM claim_watermarks WHERE consumer = %s",
                                         (consumer,))).fetchone()
    return done, int(rows[0]) if rows else 0, int(mark[0]) if mark else 0


async def test_a_fold_deletes_settled_claims_and_stops_below_the_first_unclaimed_event(
    tally_db: AsyncConnectionPool,
) -> None:
    consumer, world = f"fold-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    await _caught_up(tally_db, consumer)
    events = await _append(tally_db, world, 30, "seen")
    ids = [e for e, _ in events]
    await _claim(tally_db, consumer, ids[:10] + ids[11:])  # the 11th is not processed yet
    assert await _fold(tally_db, consumer) == 0  # the first round only notes a candidate
    assert await _fold(tally_db, consumer) >= 10
    done, rows, mark = await _state(tally_db, consumer, ids)
    assert mark == events[9][1] and rows == 19  # what was stored before: folded too
    assert done == set(ids) - {ids[10]}  # below the watermark or a row: processed; the 11th still owed
    async with tally_db.connection() as conn:
        claimed = await EventStore().read_all(conn, 0, 1000, EventFilter(world_id=world, claimed_by=consumer))
    assert [s.envelope.event_id for s in claimed] == ids[:10] + ids[11:]  # a rebuild folds the same events

    await _claim(tally_db, consumer, [ids[10]])
    assert await _fold(tally_db, consumer) == 20
    done, rows, mark = await _state(tally_db, consumer, ids)
    assert done == set(ids) and rows == 0 and mark == events[-1][1]


async def test_a_fold_never_passes_an_event_whose_transaction_is_still_open(
    tally_db: AsyncConnectionPool, database_url: str
) -> None:
    consumer, world = f"open-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    await _caught_up(tally_db, consumer)
    await _fold(tally_db, consumer)
    async with await psycopg.AsyncConnection.connect(database_url) as slow:
        # An append that took its sequence numbers first and commits last.
        await tally_app.append_observations_open(slow, world, [("late", "committed last")])
        later = await _append(tally_db, world, 5, "committed first")
        await _claim(tally_db, consumer, [e for e, _ in later])
        await _fold(tally_db, consumer)  # candidate noted while the slow append is open
        await _fold(tally_db, consumer)
        await _fold(tally_db, consumer)
        _, rows, mark = await _state(tally_db, consumer, [])
        assert rows == 5 and 0 < mark < later[0][1], "folded past an event that could still commit"
        await slow.commit()
    await _fold(tally_db, consumer)
    await _fold(tally_db, consumer)
    async with tally_db.connection() as conn:
        cur = await conn.execute("SELECT event_id, seq FROM events WHERE world_id = %s AND npc_id = 'late'",
                                 (world,))
        late_id, late_seq = await cur.fetchone()  # type: ignore[misc]
    done, _, mark = await _state(tally_db, consumer, [late_id])
    assert late_id not in done and mark < late_seq  # owed, as it should be


async def test_a_dead_lettered_event_stays_a_row_and_a_redrive_makes_it_owed_again(
    tally_db: AsyncConnectionPool, database_url: str
) -> None:
    consumer, world = f"dlq-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    await _caught_up(tally_db, consumer)
    events = await _append(tally_db, world, 6, "poison")
    ids = [e for e, _ in events]
    await _claim(tally_db, consumer, ids)
    async with tally_db.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO dead_letters (consumer, topic, partition, \"offset\", event_id, event_type, reason,"
            " value) VALUES (%s, 'perception', 0, 0, %s, 'ObservationMade', 'test', '') RETURNING id",
            (consumer, ids[3]),
        )
        dead_id = (await cur.fetchone())[0]  # type: ignore[index]
    await _fold(tally_db, consumer)
    await _fold(tally_db, consumer)
    done, rows, mark = await _state(tally_db, consumer, ids)
    assert mark == events[2][1] and rows == 3 and done == set(ids)
    with psycopg.connect(database_url) as conn:
        redrive(conn, [dead_id])
    done, _, _ = await _state(tally_db, consumer, ids)
    assert done == set(ids) - {ids[3]}  # owed again, to be handled once more


async def test_events_folded_into_the_watermark_are_not_applied_again_when_the_broker_republishes_them(
    tally_db: AsyncConnectionPool, private_broker: BrokerForTests
) -> None:
    npc, world, name = f"m-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex, f"tally-{uuid.uuid4().hex[:8]}"
    first = [(npc, f"before the fold {i:03d}") for i in range(40)]

    def loop() -> Any:
        made = tally_app.make_loop(tally_db, private_broker.bootstrap, name)
        made.claims_fold_seconds, made.claims_keep_seconds = 0.2, 0.0
        return made

    def relay(stop: asyncio.Event) -> Any:
        return OutboxRelay(tally_db, private_broker.bootstrap).run(stop)

    async def rows() -> int:
        async with tally_db.connection() as conn:
            row = await (await conn.execute("SELECT count(*) FROM processed_events WHERE consumer = %s",
                                            (name,))).fetchone()
        return int(row[0]) if row else -1

    stop = asyncio.Event()
    async with running(relay(stop), loop().run(stop), stop=stop):
        async with tally_db.connection() as conn:
            await tally_app.append_observations(conn, world, first)
        await eventually(lambda: effects(tally_db, npc), lambda got: len(got) >= 40)
        assert await eventually(rows, lambda n: n == 0, timeout=30) == 0  # every claim folded
    private_broker.restart()  # an empty broker: the relay publishes the whole history again
    second = [(npc, f"after the fold {i:03d}") for i in range(10)]
    async with tally_db.connection() as conn:
        await tally_app.append_observations(conn, world, second)
    stop = asyncio.Event()
    async with running(relay(stop), loop().run(stop), stop=stop):
        await eventually(lambda: effects(tally_db, npc), lambda got: len(got) >= 50)
        await asyncio.sleep(1.0)  # any event applied twice would land now
        got = await effects(tally_db, npc)
    assert got == sorted(first + second)
