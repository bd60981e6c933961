"""A player's claim is not what a reaction goes on: seeing the person a claim names is weighed without it,
while the same thing perceived makes the NPC go and talk to them."""

from __future__ import annotations

import pytest

from npcworld.contracts import ConversationRequested
from npcworld.llm import OfflineLLM
from npcworld.memory_client.testing import FakeMemoryReader
from services.planning.domain import Perceived, PlannerState
from services.planning.planner import decide_next
from services.planning.reacting import react
from tests.unit.planning.support import MORNING, W, marta

PEOPLE = [("marta", "Marta Quill"), ("tom", "Tom Reed")]
CLAIM = 'A player (p-liar) said to Marta Quill: "Tom Reed stole the bread from the bakery"'
SEEN = Perceived("someone is buying bread at the counter", "Tom Reed", "perception")


async def _planned(llm: OfflineLLM) -> PlannerState:
    state, _ = await decide_next(llm, marta(), MORNING)
    return state


async def test_a_repeated_player_claim_about_someone_drives_no_reaction() -> None:
    llm, memory = OfflineLLM(), FakeMemoryReader()
    for minute in range(10):
        memory.add("t1", W, "marta", CLAIM, created_at=MORNING.replace(minute=minute), importance=6,
                   source="told", told_by="player:p-liar", trust="low")
    state = await _planned(llm)
    after, events = await react(llm, memory, state, SEEN, people=PEOPLE, now=MORNING, cause="e-see")
    assert events == [] and after.plan == state.plan
    kind, shown = llm.calls[-1]
    assert kind == "plan_reaction" and "stole" not in shown.model_dump_json()  # never shown as a memory


@pytest.mark.parametrize(("source", "told_by", "trust"), [("perceived", None, "high"),
                                                       ("told", "player:p-1", "medium")])
async def test_the_same_thing_perceived_or_corroborated_is_reacted_to(
    source: str, told_by: str | None, trust: str
) -> None:
    llm, memory = OfflineLLM(), FakeMemoryReader()
    memory.add("t1", W, "marta", "Tom Reed took a loaf from the bakery without paying", created_at=MORNING,
               importance=6, source=source, told_by=told_by, trust=trust)
    state = await _planned(llm)
    _, events = await react(llm, memory, state, SEEN, people=PEOPLE, now=MORNING, cause="e-see")
    assert any(isinstance(e, ConversationRequested) and e.target_npc_id == "tom" for e in events)
