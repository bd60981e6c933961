"""A retired NPC (NpcRetired) remembers nothing new: what it perceives, hears or is told after its retirement
leaves no memory, while what it remembered before stays; another NPC of the world goes on as before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import NpcCreated, NpcRetired, ObservationMade
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef
from services.memory.projection import build_projection
from tests.integration.memory.support import T0, envelope, handle, new_npc

pytestmark = pytest.mark.integration


async def _descriptions(pool: AsyncConnectionPool, npc: NpcRef) -> list[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT m.description FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
            " WHERE n.tenant_id = %s AND n.world_id = %s AND n.npc_id = %s"
            " ORDER BY m.description", (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        return [r[0] for r in await cur.fetchall()]


async def test_a_retired_npc_remembers_nothing_new_and_keeps_what_it_remembered(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    retired = new_npc()
    other = NpcRef(retired.tenant_id, retired.world_id, "bo")
    for npc, name in ((retired, "Ada Park"), (other, "Bo Lee")):
        await handle(pool, envelope(NpcCreated(npc_id=npc.npc_id, name=name), npc, T0, npc_id=""), deps)
        seen = ObservationMade(description="the oven is burning", subject="oven", location="w:bakery")
        await handle(pool, envelope(seen, npc, T0 + timedelta(minutes=1)), deps)
    before = await _descriptions(pool, retired)
    assert before == ["the oven is burning"]

    applier = build_projection(deps, "memory").appliers["NpcRetired"]
    async with pool.connection() as conn, conn.transaction():
        await applier(envelope(NpcRetired(npc_id=retired.npc_id), retired, T0, npc_id=""), conn)
    for npc in (retired, other):
        later = ObservationMade(description="the baker waves", subject="baker", location="w:bakery")
        assert (await handle(pool, envelope(later, npc, T0 + timedelta(minutes=2)), deps) != []) == (
            npc is other)
    assert await _descriptions(pool, retired) == before
    assert await _descriptions(pool, other) == ["the baker waves", "the oven is burning"]
