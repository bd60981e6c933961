"""Level of detail: an NPC out of focus takes its plan's items whole, with no decomposition call; once in
focus again it is decomposed from where it stands, at its next tick."""

from __future__ import annotations

from datetime import timedelta

from npcworld.contracts import ActionDecided
from npcworld.llm import OfflineLLM
from services.planning.domain import ACTION_MAX_MINUTES
from services.planning.planner import decide_next
from services.planning.snapshot import dump_state, load_state
from tests.unit.planning.support import MORNING, marta


async def test_out_of_focus_an_npc_takes_each_plan_item_whole_without_a_decomposition_call() -> None:
    llm = OfflineLLM()
    state, events = await decide_next(llm, marta(), MORNING, coarse=True)
    assert [k for k, _ in llm.calls] == ["plan_day", "plan_hours"]  # the day is planned as in full detail
    action = events[-1]
    assert isinstance(action, ActionDecided) and action.start == MORNING.replace(second=0)
    assert state.plan is not None and state.current is not None and state.current.coarse
    item = next(i for i in state.plan.items if i.start <= MORNING < i.end)
    assert state.current.item.end == item.end  # the rest of the hour's item, in one action
    for _ in range(4):  # the rest of the morning: one action per item, still no call
        state, events = await decide_next(llm, state, state.current.item.end, coarse=True)
        assert state.current is not None and state.current.coarse
    assert [k for k, _ in llm.calls] == ["plan_day", "plan_hours"]


async def test_in_focus_again_it_is_decomposed_from_where_it_stands() -> None:
    llm = OfflineLLM()
    state, _ = await decide_next(llm, marta(), MORNING, coarse=True)
    assert state.current is not None
    now = state.current.item.start + timedelta(minutes=20)
    state = load_state(state.key, dump_state(state))  # as stored between ticks
    assert state.current is not None and state.current.coarse
    state, events = await decide_next(llm, state, now)
    action = events[-1]
    assert isinstance(action, ActionDecided) and action.start == now.replace(second=0)
    assert action.duration_minutes <= ACTION_MAX_MINUTES
    assert state.current is not None and not state.current.coarse
    assert [k for k, _ in llm.calls][-1] == "plan_actions"
