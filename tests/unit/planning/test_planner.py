"""Planning with the offline provider: a day from the persona, just-in-time actions, inner-voice goals,
invented places, and the LLM calls a simulated day costs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypeVar

from pydantic import BaseModel

from npcworld.contracts import ActionDecided, DayPlanned, PlanRevised
from npcworld.llm import LLMResult, OfflineLLM
from npcworld.llm.prompts.planning import BlockProposal, PlanDayOutput
from services.planning.domain import ACTION_MAX_MINUTES, ACTION_MIN_MINUTES, Item, plan_problems
from services.planning.planner import decide_next
from services.planning.reacting import adopt_directive
from tests.unit.planning.support import CAFE, HOME, MORNING, marta

T = TypeVar("T", bound=BaseModel)


class InventedPlaceLLM(OfflineLLM):
    """The offline provider, except that the day outline sends the NPC to a place it has never seen."""

    async def complete(self, kind: str, inputs: BaseModel | Mapping[str, Any], output_model: type[T],
                       **scope: Any) -> LLMResult[T]:
        result = await super().complete(kind, inputs, output_model, **scope)
        if kind != "plan_day":
            return result
        assert isinstance(result.value, PlanDayOutput)
        moon = BlockProposal(start="19:00", duration_minutes=240, description="visit the moon base",
                             place="Moon Base")
        blocks = (*result.value.blocks[:-1], moon)
        value = result.value.model_copy(update={"blocks": blocks})
        return LLMResult(value, result.provider, result.model, result.prompt, result.request_hash,
                         result.outcome)


async def test_the_day_plan_follows_the_persona_and_covers_the_waking_day() -> None:
    llm = OfflineLLM()
    state, events = await decide_next(llm, marta(), MORNING)
    planned = events[0]
    assert isinstance(planned, DayPlanned)
    assert 5 <= len(planned.outline) <= 8
    assert any("Lantern Cafe" in b.description and b.location_path == CAFE for b in planned.outline)
    assert state.plan is not None
    assert state.plan.start == MORNING.replace(hour=6, second=0)  # the persona "wakes up at 6 am"
    items = [Item(i.start, i.duration_minutes, i.description, i.location_path) for i in planned.items]
    assert plan_problems(items, state.plan.start, state.plan.end) == []
    assert all(i.minutes <= 60 for i in items)
    assert {i.location for i in items} <= set(state.places.all)


async def test_the_current_chunk_is_decomposed_just_in_time_into_short_actions() -> None:
    llm = OfflineLLM()
    state, events = await decide_next(llm, marta(), MORNING)
    action = events[-1]
    assert isinstance(action, ActionDecided)
    assert action.start == MORNING.replace(second=0)
    assert ACTION_MIN_MINUTES <= action.duration_minutes <= ACTION_MAX_MINUTES
    kinds = [k for k, _ in llm.calls]
    assert kinds == ["plan_day", "plan_hours", "plan_actions"]
    state, events = await decide_next(llm, state, state.current.item.end)  # type: ignore[union-attr]
    assert [type(e) for e in events] == [ActionDecided]
    assert len(llm.calls) == 3  # the next action of the same chunk costs no call


async def test_an_invented_place_falls_back_to_a_known_one_and_the_plan_records_why() -> None:
    state, events = await decide_next(InventedPlaceLLM(), marta(), MORNING)
    planned = events[0]
    assert isinstance(planned, DayPlanned)
    moon = [b for b in planned.outline if "moon base" in b.description]
    assert moon and moon[0].location_path in state.places.all
    assert any("Moon Base" in f for f in planned.fallbacks)


async def test_an_inner_voice_goal_reshapes_the_rest_of_today_and_tomorrow() -> None:
    llm = OfflineLLM()
    state, _ = await decide_next(llm, marta(), MORNING)
    now = MORNING.replace(hour=14, minute=10)
    state, events = await adopt_directive(llm, state, "you will run for mayor", now)
    revised = events[0]
    assert isinstance(revised, PlanRevised) and revised.from_time == now.replace(second=0)
    assert "mayor" in revised.items[0].description
    assert isinstance(events[-1], ActionDecided) and "mayor" in events[-1].description
    assert state.plan is not None
    assert plan_problems(list(state.plan.items), state.plan.start, state.plan.end) == []
    _, tomorrow = await decide_next(llm, state, MORNING + timedelta(days=1))
    planned = tomorrow[0]
    assert isinstance(planned, DayPlanned) and planned.goals == ("you will run for mayor",)
    assert any("run for mayor" in b.description for b in planned.outline)


async def test_a_whole_simulated_day_costs_far_fewer_than_150_calls() -> None:
    llm = OfflineLLM()
    state, now = marta(), MORNING.replace(hour=0, minute=0, second=0)
    while now < MORNING.replace(hour=23, minute=59):
        state, _ = await decide_next(llm, state, now)
        assert state.current is not None
        now = state.current.item.end
    calls = Counter(k for k, _ in llm.calls)
    assert calls["plan_day"] == 1 and calls["plan_hours"] == 1
    assert calls["plan_actions"] == 17  # one per hour chunk of the waking day (6:00-23:00)
    assert sum(calls.values()) <= 150
    assert state.current is not None and state.current.item.location == HOME
