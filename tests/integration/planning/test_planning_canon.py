"""Designer canon in planning on the real stack: the world's and the NPC's canon are in the recorded
day-plan prompt (the stack's planning consumer, memory service and relay run for real)."""

from __future__ import annotations

import pytest

from npcworld.contracts import CanonSet
from tests.integration.planning.support import (
    DAWN,
    Stack,
    create_marta,
    new_key,
    of_type,
    plant,
    tick,
    wait_for,
)
from tests.recorded_prompts import RECORD_COLUMNS, prompt_text

pytestmark = pytest.mark.integration


async def test_the_day_plan_prompt_holds_the_world_and_npc_canon(stack: Stack) -> None:
    key = new_key()
    world, own = "The mine collapsed in 1891", "Marta Quill never goes down the mine"
    await plant(stack, key, CanonSet(facts=(world,)), DAWN, npc=False)
    await plant(stack, key, CanonSet(npc_id=key.npc_id, facts=(own,)), DAWN)
    await create_marta(stack, key)
    await tick(stack, key, DAWN.replace(hour=9))
    await wait_for(stack, key, lambda es: bool(of_type(es, "DayPlanned")))
    async with stack.pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM llm_calls WHERE tenant_id = %s AND world_id = %s"
            " AND npc_id = %s AND prompt_kind = 'plan_day'", (key.tenant_id, key.world_id, key.npc_id))
        calls = [(r[1], prompt_text(*r)) for r in await cur.fetchall()]
    assert calls and all(version == 2 and world in prompt and own in prompt for version, prompt in calls)
