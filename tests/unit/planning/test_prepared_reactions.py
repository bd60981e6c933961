"""A reaction (or an inner voice's re-plan) gathered before the transaction is taken only if the NPC's state
is still the one it started from; otherwise the handler works it out again."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from npcworld.contracts import Envelope, InnerVoiceGiven, ObservationMade
from npcworld.llm import OfflineLLM
from npcworld.memory_client.testing import FakeMemoryReader
from services.planning.deps import PlanningDeps
from services.planning.domain import PlannerState
from services.planning.handlers import _Prepared, on_inner_voice_given, on_observation_made
from services.planning.planner import decide_next
from tests.unit.planning.support import KITCHEN, MORNING, W, marta

PEOPLE = [("marta", "Marta Quill"), ("tobias", "Tobias Wren")]


class _Repo:
    def __init__(self, state: PlannerState) -> None:
        self.state, self.saved = state, []  # type: ignore[var-annotated]

    async def get(self, conn: Any, key: Any) -> PlannerState:
        return self.state

    async def roster(self, conn: Any, tenant_id: str, world_id: str) -> list[tuple[str, str]]:
        return PEOPLE

    async def save(self, conn: Any, state: PlannerState) -> None:
        self.saved.append(state)


class _Uow:
    conn = None

    def __init__(self) -> None:
        self.appended: list[Any] = []

    def new_event(self, payload: Any, **_: Any) -> Any:
        return payload

    async def append(self, stream: str, events: list[Any]) -> None:
        self.appended += events


class _NoModel(OfflineLLM):
    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a prepared reaction must not call the model again")


def _fire() -> Envelope:
    seen = ObservationMade(description="the stove is burning", subject="stove", location=KITCHEN)
    return Envelope.new(seen, tenant_id="t1", world_id=W, npc_id="marta",
                        world_time=MORNING + timedelta(minutes=7))


async def test_the_prepared_reaction_is_taken_when_the_state_is_unchanged() -> None:
    state, _ = await decide_next(OfflineLLM(), marta(), MORNING)
    event, marker = _fire(), object()
    after = replace(state, current=None)
    repo = _Repo(state)
    deps = PlanningDeps(llm=_NoModel(), memory=FakeMemoryReader(), repository=repo)  # type: ignore[arg-type]
    gathered = _Prepared(state, PEOPLE, after, [marker])  # type: ignore[list-item]
    uow = _Uow()
    await on_observation_made(event, uow, deps, gathered)  # type: ignore[arg-type]
    assert repo.saved == [after] and uow.appended == [marker]


async def test_a_reaction_prepared_from_an_older_state_is_worked_out_again() -> None:
    state, _ = await decide_next(OfflineLLM(), marta(), MORNING)
    event, marker = _fire(), object()
    moved_on = replace(state, current=None)  # its action ended meanwhile
    memory = FakeMemoryReader()
    memory.add_npc("t1", W, "marta")
    repo = _Repo(moved_on)
    deps = PlanningDeps(llm=OfflineLLM(), memory=memory, repository=repo)  # type: ignore[arg-type]
    gathered = _Prepared(state, PEOPLE, state, [marker])  # type: ignore[list-item]
    uow = _Uow()
    await on_observation_made(event, uow, deps, gathered)  # type: ignore[arg-type]
    assert marker not in uow.appended
    assert repo.saved and repo.saved[0] is not state


def _voice() -> Envelope[InnerVoiceGiven]:
    return Envelope.new(InnerVoiceGiven(directive="You want to open a bakery"), tenant_id="t1", world_id=W,
                        npc_id="marta", world_time=MORNING + timedelta(minutes=7))


async def test_the_gathered_re_plan_of_an_inner_voice_is_taken_when_the_state_is_unchanged() -> None:
    state, _ = await decide_next(OfflineLLM(), marta(), MORNING)
    marker, after = object(), replace(state, current=None)
    repo = _Repo(state)
    deps = PlanningDeps(llm=_NoModel(), memory=FakeMemoryReader(), repository=repo)  # type: ignore[arg-type]
    uow = _Uow()
    gathered = _Prepared(state, [], after, [marker])  # type: ignore[list-item]
    await on_inner_voice_given(_voice(), uow, deps, gathered)  # type: ignore[arg-type]
    assert repo.saved == [after] and uow.appended == [marker]


async def test_an_inner_voice_gathered_from_an_older_state_is_re_planned_again() -> None:
    state, _ = await decide_next(OfflineLLM(), marta(), MORNING)
    marker, moved_on = object(), replace(state, current=None)
    repo = _Repo(moved_on)
    deps = PlanningDeps(llm=OfflineLLM(), memory=FakeMemoryReader(), repository=repo)  # type: ignore[arg-type]
    uow = _Uow()
    gathered = _Prepared(state, [], state, [marker])  # type: ignore[list-item]
    await on_inner_voice_given(_voice(), uow, deps, gathered)  # type: ignore[arg-type]
    assert marker not in uow.appended
    assert repo.saved and repo.saved[0] is not state and repo.saved[0] is not moved_on
