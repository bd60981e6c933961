"""A studio's rules over decided actions on the real stack: world-state vetoes or replaces an action that
breaks one before it takes effect, records why (``ActionVetoed``, caused by the decision), and what the
other NPCs see is the action that took effect."""

from __future__ import annotations

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import (
    ActionDecided,
    ActionRule,
    ActionRulesSet,
    ActionStarted,
    ActionVetoed,
    Envelope,
    NpcCreated,
)
from tests.infra import BrokerForTests
from tests.integration.world_state.support import T0, running_pipeline
from tests.integration.world_state.test_movement import two_rooms_and_a_street

pytestmark = pytest.mark.integration


async def test_an_action_breaking_a_rule_is_vetoed_or_replaced_and_the_veto_says_why(
    pool: AsyncConnectionPool, broker: BrokerForTests
) -> None:
    async with running_pipeline(pool, broker.bootstrap) as p:
        w = p.world_id
        ada = NpcCreated(npc_id="ada", name="Ada", location=f"{w}:Home:bedroom")
        await p.create(two_rooms_and_a_street(), [ada])
        rules = ActionRulesSet(rules=(
            ActionRule(rule_id="cafe-closed", places=(f"{w}:Cafe",), reason="the cafe is closed today"),
            ActionRule(rule_id="no-arson", words=("burn",), verdict="replace", replacement="sweep the floor",
                       replacement_place=f"{w}:Home:bedroom"),
        ))
        await p.digested(await p.append(f"rules-{w}", [rules]))
        start = await p.last_seq()

        async def decide(what: str, where: str) -> list[Envelope]:
            action = ActionDecided(description=what, location_path=where, start=T0, duration_minutes=30)
            events = await p.append(f"planning-{w}-ada", [action], npc_id="ada")
            await p.digested(events)
            return events

        coffee = await decide("making coffee", f"{w}:Cafe:counter")
        fire = await decide("burn the bed", f"{w}:Home:bedroom:bed")
        vetoed = await p.events("ActionVetoed", after=start)
        started = await p.events("ActionStarted", after=start)
        await p.digested(started)  # perception's read model has folded what took effect

    assert [(v.causation_id, v.payload.rule_id) for v in vetoed  # type: ignore[attr-defined]
            ] == [(coffee[0].event_id, "cafe-closed"), (fire[0].event_id, "no-arson")]
    first, second = (v.payload for v in vetoed)
    assert isinstance(first, ActionVetoed) and first.reason == "the cafe is closed today"
    assert first.replaced_by is None and first.location_path == f"{w}:Cafe:counter"
    assert isinstance(second, ActionVetoed) and second.replaced_by == "sweep the floor"
    assert len(started) == 1 and started[0].causation_id == fire[0].event_id  # only the replacement
    took = started[0].payload
    assert isinstance(took, ActionStarted) and took.description == "sweep the floor"
    async with pool.connection() as conn:  # what others see Ada do is what took effect
        cur = await conn.execute(
            "SELECT activity FROM pc_npcs WHERE world_id = %s AND npc_id = 'ada'", (w,)
        )
        assert await cur.fetchone() == ("sweep the floor",)
