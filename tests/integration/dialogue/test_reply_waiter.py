"""The gateway's reply listener: one LISTEN connection reused by chat after chat, retired when idle."""

from __future__ import annotations

import asyncio

import psycopg

from services.gateway.routes.dialogue import CHANNEL, ReplyWaiter


async def _notify(database_url: str, cause: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, cause))


async def _listeners(database_url: str) -> int:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query = %s AND pid <> pg_backend_pid()",
            (f"LISTEN {CHANNEL}",),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def test_chats_one_after_another_share_one_listener_which_retires_when_idle(database_url: str) -> None:
    waiter = ReplyWaiter(database_url, idle_seconds=0.3)
    try:
        for cause in ("first", "second", "third"):  # nobody waits in between: the connection stays
            future = await waiter.register(cause)
            await _notify(database_url, cause)
            await asyncio.wait_for(future, timeout=5)
            waiter.discard(cause)
            assert await _listeners(database_url) == 1

        for _ in range(50):  # idle for longer than idle_seconds: the listener closes its connection
            if await _listeners(database_url) == 0:
                break
            await asyncio.sleep(0.1)
        assert await _listeners(database_url) == 0

        future = await waiter.register("after a pause")  # and the next chat opens a new one
        await _notify(database_url, "after a pause")
        await asyncio.wait_for(future, timeout=5)
        waiter.discard("after a pause")
    finally:
        await waiter.close()
    assert await _listeners(database_url) == 0
