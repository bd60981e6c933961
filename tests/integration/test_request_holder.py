"""A gateway process names the requests it runs after a lock it holds; the name stops counting as alive when
the process dies or when its connection to Postgres is lost (requests it ran then could not give their
Idempotency-Key claims back), and it holds the lock again under a new name."""

from __future__ import annotations

import psycopg

from services.gateway.holder import HOLDER_LOCK_CLASS, RequestHolder
from tests.polling import eventually


async def _free(database_url: str, name: str) -> bool:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (HOLDER_LOCK_CLASS, name))
        row = await cur.fetchone()
        free = bool(row and row[0])
        if free:
            await conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (HOLDER_LOCK_CLASS, name))
        return free


async def _holder_backend(database_url: str, name: str) -> int | None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = %s"
            " AND objid = hashtext(%s)::oid", (HOLDER_LOCK_CLASS, name))
        row = await cur.fetchone()
        return int(row[0]) if row else None


async def test_the_holders_name_is_held_while_it_runs_and_renewed_after_a_lost_connection(
    database_url: str,
) -> None:
    holder = RequestHolder(database_url)
    await holder.start()
    try:
        first = holder.name
        assert holder.holding.is_set() and not await _free(database_url, first)
        backend = await _holder_backend(database_url, first)
        assert backend is not None
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            await conn.execute("SELECT pg_terminate_backend(%s)", (backend,))

        async def renamed() -> str:
            return holder.name if holder.holding.is_set() else first

        second = await eventually(renamed, lambda name: name != first, timeout=20)
        assert await _free(database_url, first)  # claims made under the old name can be taken over
        assert not await _free(database_url, second)
    finally:
        await holder.stop()
    assert await _free(database_url, second)  # a stopped (or killed) process holds nothing
