"""An ablated world (WorldCreated.ablations, the paper's ablated architectures) records no memory of the
ablated kinds; its seeds, and every memory of an ordinary world, are recorded as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import DayPlanned, NpcCreated, ObservationMade, PlanItem, WorldCreated, WorldDeleted
from npcworld.contracts.world import Ablation
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef
from tests.integration.memory.support import T0, envelope, handle, new_npc

pytestmark = pytest.mark.integration


async def _kinds(pool: AsyncConnectionPool, npc: NpcRef) -> list[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT m.kind FROM memories AS m JOIN memory_npcs AS n USING (npc_key)"
            " WHERE n.tenant_id = %s AND n.world_id = %s AND n.npc_id = %s ORDER BY m.kind",
            (npc.tenant_id, npc.world_id, npc.npc_id),
        )
        return [r[0] for r in await cur.fetchall()]


async def _live(
    pool: AsyncConnectionPool, npc: NpcRef, deps: MemoryDeps, ablations: tuple[Ablation, ...]
) -> None:
    created = WorldCreated(name="w", start_time=T0, ablations=ablations)
    await handle(pool, envelope(created, npc, T0, npc_id=""), deps)
    seed = NpcCreated(npc_id=npc.npc_id, name="Ada Park", seed="Ada bakes bread; Ada likes rain")
    await handle(pool, envelope(seed, npc, T0, npc_id=""), deps)
    seen = ObservationMade(description="the oven is burning", subject="oven", location="w:bakery:kitchen")
    await handle(pool, envelope(seen, npc, T0 + timedelta(minutes=1)), deps)
    step = PlanItem(start=datetime(2023, 2, 13, 9, tzinfo=UTC), duration_minutes=60,
                    description="bake bread", location_path="w:bakery:kitchen")
    plan = DayPlanned(day=T0.date(), outline=(step,), items=(step,))
    await handle(pool, envelope(plan, npc, T0 + timedelta(minutes=2)), deps)


async def test_an_ablated_world_records_neither_observations_nor_plans_but_keeps_the_seed(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    ablated, ordinary = new_npc(), new_npc()
    await _live(pool, ablated, deps, ("observation", "planning"))
    await _live(pool, ordinary, deps, ())
    assert await _kinds(pool, ablated) == ["seed", "seed"]
    assert await _kinds(pool, ordinary) == ["observation", "plan", "seed", "seed"]


async def test_a_deleted_ablated_world_forgets_its_ablations(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await _live(pool, npc, deps, ("observation",))
    await handle(pool, envelope(WorldDeleted(), npc, T0, npc_id=""), deps)
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM memory_world_ablations WHERE tenant_id = %s",
                                 (npc.tenant_id,))
        assert (await cur.fetchone()) == (0,)
