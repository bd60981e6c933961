"""Planning locks an NPC without writing: a transaction waiting on the model holds no transaction id, so the
outbox relay (which publishes nothing newer than an open writer) never waits for a model to answer."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from services.planning.domain import PlannerState
from services.planning.repository import PlanningRepository
from tests.integration.planning.support import DAWN, new_key

pytestmark = pytest.mark.integration

_ASSIGNED = "SELECT pg_current_xact_id_if_assigned() IS NOT NULL"


async def _writer(conn: AsyncConnection[Any]) -> bool:
    row = await (await conn.execute(_ASSIGNED)).fetchone()
    return bool(row and row[0])


async def test_reading_and_locking_an_npc_takes_no_transaction_id_and_excludes_other_planners(
    pool: AsyncConnectionPool,
) -> None:
    key, repo = new_key(), PlanningRepository()
    later = DAWN + timedelta(days=1)
    async with pool.connection() as conn, conn.transaction():
        await repo.save(conn, PlannerState.heard_of(key, ("home",)))
        await conn.execute("UPDATE planning_npcs SET due_at = NULL WHERE world_id = %s", (key.world_id,))

    async with pool.connection() as first, pool.connection() as second:
        await first.set_autocommit(True)
        await second.set_autocommit(True)
        await first.execute("BEGIN")
        assert await repo.get(first, key) is not None
        assert [s.key for s in await repo.due(first, key.tenant_id, key.world_id, later, limit=10)] == [key]
        assert not await _writer(first)  # what planning holds while the model answers

        await second.execute("BEGIN")
        # another planner's tick skips the NPC; its perception handler waits for it
        assert await repo.due(second, key.tenant_id, key.world_id, later, limit=10) == []
        waiting = asyncio.create_task(repo.get(second, key))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        await first.execute("COMMIT")  # the first planner's transaction ends
        assert await asyncio.wait_for(waiting, 10) is not None
        await second.execute("COMMIT")
