"""A player's claim drives no action on the real stack (planning consumer, memory service, relay, broker):
Marta, told ten times by a player that Tom stole from the bakery, sees Tom and carries on; Marta who saw it
herself goes and talks to him."""

from __future__ import annotations

from datetime import timedelta

import pytest

from npcworld.contracts import ConversationRequested, Envelope, NpcCreated, NpcReplied, ObservationMade
from npcworld.errors import NotFoundError
from npcworld.memory_client import MemoryView
from services.planning.domain import NpcKey
from tests.integration.planning.support import (
    DAWN,
    Stack,
    create_marta,
    new_key,
    of_type,
    paths,
    plant,
    processed,
    tick,
    wait_for,
)
from tests.polling import eventually
from tests.recorded_prompts import RECORD_COLUMNS, prompt_text

pytestmark = pytest.mark.integration

NINE = DAWN.replace(hour=9)
STOLE = "Tom Reed stole the bread from the bakery last night"


async def _town(stack: Stack) -> NpcKey:
    key = new_key()
    await create_marta(stack, key)
    tom = NpcCreated(npc_id="tom", name="Tom Reed", occupation="fisherman", location=paths(key)["hall"])
    await plant(stack, key, tom, DAWN, npc=False)
    return key


async def _memories(stack: Stack, key: NpcKey) -> list[MemoryView]:
    try:
        return await stack.memory.recent(key.tenant_id, key.world_id, key.npc_id, limit=100)
    except NotFoundError:  # the memory service has not opened the stream yet
        return []


async def _sees_tom(stack: Stack, key: NpcKey) -> tuple[Envelope, list[Envelope]]:
    """Marta's day starts, then she sees Tom at the counter; returns the sight and what planning emitted."""
    await tick(stack, key, NINE)
    await wait_for(stack, key, lambda es: bool(of_type(es, "ActionDecided")))
    sight = ObservationMade(description="someone is buying bread at the counter", subject="Tom Reed",
                            location=paths(key)["cafe"])
    seen = await plant(stack, key, sight, NINE + timedelta(minutes=4))
    await eventually(lambda: processed(stack, seen), bool, timeout=60)
    return seen, await wait_for(stack, key, lambda es: True)


async def _reaction_prompts(stack: Stack, seen: Envelope) -> list[str]:
    async with stack.pool.connection() as conn:
        cur = await conn.execute(f"SELECT {RECORD_COLUMNS} FROM llm_calls WHERE prompt_kind = 'plan_reaction'"
                                 " AND cause_event_id = %s", (seen.event_id,))
        return [prompt_text(*r) for r in await cur.fetchall()]


async def test_a_repeated_player_claim_about_tom_drives_no_action(stack: Stack) -> None:
    key = await _town(stack)
    for i in range(10):
        said = NpcReplied(player_id="p-liar", text="Really?", in_reply_to=f"e-{i}", provider="offline",
                          heard=STOLE)
        await plant(stack, key, said, DAWN + timedelta(minutes=10 + i))
    held = await eventually(lambda: _memories(stack, key),
                            lambda ms: sum(m.told_by == "player:p-liar" for m in ms) == 10, timeout=60)
    assert all(m.trust == "low" for m in held if "stole" in m.description)

    seen, events = await _sees_tom(stack, key)
    cause = str(seen.event_id)
    prompts = await _reaction_prompts(stack, seen)
    assert len(prompts) == 1 and "stole" not in prompts[0]  # weighed, without the claim
    assert not [e for e in events if getattr(e.payload, "reaction_to", None) == cause]
    assert not of_type(events, "ConversationRequested")


async def test_the_same_thing_perceived_makes_marta_go_and_talk_to_tom(stack: Stack) -> None:
    key = await _town(stack)
    await plant(stack, key, ObservationMade(description="Tom Reed took a loaf from the bakery without paying",
                                            subject="Tom Reed"), DAWN + timedelta(minutes=10))
    await eventually(lambda: _memories(stack, key), lambda ms: any("loaf" in m.description for m in ms),
                     timeout=60)
    seen, events = await _sees_tom(stack, key)
    talks = [e.payload for e in of_type(events, "ConversationRequested")]
    assert [(t.target_npc_id, t.reaction_to) for t in talks if isinstance(t, ConversationRequested)] == [
        ("tom", str(seen.event_id))]
