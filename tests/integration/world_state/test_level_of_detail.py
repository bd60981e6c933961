"""Level of detail on a real stepping town (every service running): NPCs out of the clock's focus take their
plan's items whole (no decomposition call, no per-step perception); when the focus is lifted they are
decomposed from where they stand and perceive again, with the same plans and places as before."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from launcher.supervisor import ProcessGroup, process_commands
from npcworld.db import open_pool
from npcworld.templates import load_template
from tests.infra import BrokerForTests
from tests.integration.replay.town import NPCS, TEMPLATE, Town, service_env, wait_for_step

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def town(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Town]:
    root = tmp_path_factory.mktemp("lod")
    broker = BrokerForTests(root)
    env = service_env(database_url, broker.bootstrap)
    group = ProcessGroup(process_commands(None), env, root / "logs")
    group.start()
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        town = Town(pool, group, env, world_id="lod-town")
        await town.create()
        yield town
    finally:
        await pool.close()
        group.stop()
        broker.stop()


async def _by_npc(town: Town, query: str, after: int) -> dict[str, int]:
    async with town.pool.connection() as conn:
        cur = await conn.execute(query, (town.tenant_id, town.world_id, after))
        return {str(npc): int(n) for npc, n in await cur.fetchall()}


_PERCEIVED = ("SELECT npc_id, count(*) FROM events WHERE tenant_id = %s AND world_id = %s AND seq > %s"
              " AND type = 'ObservationMade' AND payload->>'source' = 'perception' GROUP BY npc_id")
_DECOMPOSED = ("SELECT npc_id, count(*) FROM llm_calls WHERE tenant_id = %s AND world_id = %s AND id > %s"
               " AND prompt_kind = 'plan_actions' GROUP BY npc_id")


async def _marks(town: Town) -> tuple[int, int]:
    async with town.pool.connection() as conn:
        seq = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
        call = await (await conn.execute("SELECT coalesce(max(id), 0) FROM llm_calls")).fetchone()
    assert seq is not None and call is not None
    return int(seq[0]), int(call[0])


async def test_npcs_out_of_focus_run_coarse_and_switch_to_full_detail_when_it_is_lifted(town: Town) -> None:
    personas = load_template(TEMPLATE).personas(town.world_id)[:NPCS]
    focus = personas[0].location
    assert focus is not None
    near = {p.npc_id for p in personas if p.location == focus}
    far = {p.npc_id for p in personas} - near
    assert near and far, "the test needs NPCs on both sides of the focus"

    seq, call = await _marks(town)
    await wait_for_step(town, await town.run(12, focus=(focus,)))  # 2 world minutes, from 07:00
    await town.settle()
    perceived, decomposed = await _by_npc(town, _PERCEIVED, seq), await _by_npc(town, _DECOMPOSED, call)
    assert set(perceived) <= near and set(perceived) & near
    assert set(decomposed) <= near, "an NPC out of focus made a decomposition call"
    async with town.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT npc_id, min((payload->>'duration_minutes')::int) FROM events WHERE tenant_id = %s"
            " AND world_id = %s AND seq > %s AND type = 'ActionDecided' GROUP BY npc_id",
            (town.tenant_id, town.world_id, seq),
        )
        shortest = {str(npc): int(n) for npc, n in await cur.fetchall()}
    assert set(shortest) >= far  # everyone acts; out of focus, on whole plan items

    seq, call = await _marks(town)
    await wait_for_step(town, await town.run(4, focus=None))  # the focus lifted: everyone in full detail
    await town.settle()
    assert set(await _by_npc(town, _DECOMPOSED, call)) >= far  # decomposed from where they stand
    assert set(await _by_npc(town, _PERCEIVED, seq)) & far
