"""Runs one scenario over the REST API: creates its world and NPCs, plays its steps, waits after each until
the backend has digested it (a ``Settler``), and evaluates its checks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import httpx

from launcher.scenarios.checks import (
    MemorySeen,
    RelationshipSeen,
    Verdict,
    check_memories,
    check_plan,
    check_relationship,
    check_reply,
    check_retrieval,
    describe,
)
from launcher.scenarios.junit import CaseResult, ScenarioResult
from launcher.scenarios.schema import (
    Chat,
    Check,
    ClockSteps,
    Expect,
    InnerVoice,
    MemoriesCheck,
    Perceive,
    PlanCheck,
    RelationshipCheck,
    ReplyCheck,
    RetrievalCheck,
    Scenario,
    Step,
    chat_name,
)

__all__ = ["Settler", "StepError", "run_scenario"]

_REPLY_WAIT_S = 30.0


class StepError(Exception):
    """A step the backend refused or did not finish; the scenario stops there."""


class Settler(Protocol):
    """Waits until everything stored so far in a world, and what it caused, is digested; ``caused_by`` are
    events the step stored (each of them causes something: a memory, a reply, a new plan)."""

    async def settle(self, world_id: str, caused_by: Sequence[str] = ()) -> None: ...


@dataclass
class _Run:
    scenario: Scenario
    client: httpx.AsyncClient
    settler: Settler
    world_id: str
    now: datetime
    replies: dict[str, str | None] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"/v1/worlds/{self.world_id}"

    def place(self, path: str | None) -> str | None:
        return None if path is None else f"{self.world_id}:{path}"

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   ok: tuple[int, ...] = (200, 201, 202)) -> httpx.Response:
        try:
            response = await self.client.request(method, self.base + path, json=body)
        except httpx.HTTPError as exc:
            raise StepError(f"{method} {self.base}{path}: {type(exc).__name__}: {exc}") from exc
        if response.status_code not in ok:
            raise StepError(f"{method} {self.base}{path} answered {response.status_code}: "
                            f"{response.text[:500]}")
        return response


async def run_scenario(scenario: Scenario, client: httpx.AsyncClient, settler: Settler,
                       world_id: str) -> ScenarioResult:
    """Play ``scenario`` in a new world ``world_id`` of ``client``'s tenant; never raises for the scenario's
    own failures (they are in the result)."""
    started = time.monotonic()
    run = _Run(scenario, client, settler, world_id, scenario.start_time)
    cases: list[CaseResult] = []
    label, line, step_started = "setting up the world", 1, started
    try:
        await _create_world(run)
        for index, step in enumerate(scenario.steps):
            label, line = f"steps[{index}] ({_kind(step)})", scenario.lines[index]
            step_started = time.monotonic()
            if isinstance(step, Expect):
                for check, check_line in zip(step.checks, step.lines, strict=True):
                    t = time.monotonic()
                    verdict = await _evaluate(run, check)
                    cases.append(CaseResult(describe(check), check_line, time.monotonic() - t,
                                            failure=None if verdict.passed else verdict.message))
            else:
                await settler.settle(world_id, await _play(run, step, index))
    except StepError as exc:
        cases.append(CaseResult(label, line, time.monotonic() - step_started,
                                error=f"{exc}\n(the steps after it did not run)"))
    return ScenarioResult(scenario.name, str(scenario.path), tuple(cases), time.monotonic() - started)


def _kind(step: Step) -> str:
    return "expect" if isinstance(step, Expect) else next(iter(type(step).model_fields))


async def _create_world(run: _Run) -> None:
    w = run.scenario.world
    try:
        created = await run.client.post("/v1/worlds", json={
            "world_id": run.world_id, "name": w.name or run.scenario.name,
            "start_time": w.start_time.isoformat(), **({"template": w.template} if w.template else {})})
    except httpx.HTTPError as exc:
        raise StepError(f"POST /v1/worlds: {type(exc).__name__}: {exc}") from exc
    if created.status_code != 201:
        raise StepError(f"POST /v1/worlds answered {created.status_code}: {created.text[:500]}")
    if w.places:
        await run.call("POST", "/definition", {"sectors": [s.model_dump(mode="json") for s in w.places]})
    for npc in run.scenario.npcs:
        body = npc.model_dump(mode="json", exclude={"location"}) | {"location": run.place(npc.location)}
        await run.call("POST", "/npcs", body)
    await run.settler.settle(run.world_id)


async def _play(run: _Run, step: Step, index: int) -> list[str]:
    """Play one step; the ids of the events it stored that must cause something."""
    if isinstance(step, Perceive):
        stored = await run.call("POST", f"/npcs/{step.perceive}/perceptions", {
            "description": step.text, "world_time": (step.at or run.now).isoformat(),
            "location": run.place(step.location)})
        return [stored.json()["event_id"]]
    if isinstance(step, Chat):
        await _chat(run, step, chat_name(step, run.scenario.steps[: index + 1]))
    elif isinstance(step, InnerVoice):
        stored = await run.call("POST", f"/npcs/{step.inner_voice}/inner-voice",
                                {"directive": step.directive, "world_time": run.now.isoformat()})
        return [stored.json()["event_id"]]
    elif isinstance(step, ClockSteps):
        await _clock(run, step)
    return []


async def _chat(run: _Run, step: Chat, name: str) -> None:
    """Asked without waiting, then read once the world has settled: a reply that never comes (a service gave
    up on the chat) shows as a step error from the settler, not as a long wait."""
    asked = await run.call("POST", f"/npcs/{step.chat}/chat",
                           {"player_id": step.player, "text": step.text, "wait": False})
    await run.settler.settle(run.world_id, [asked.json()["event_id"]])
    deadline = time.monotonic() + _REPLY_WAIT_S
    while True:
        got = await run.call("GET", f"/npcs/{step.chat}/chats/{asked.json()['event_id']}")
        if got.status_code == 200 or time.monotonic() > deadline:
            run.replies[name] = got.json()["reply"] if got.status_code == 200 else None
            return
        await asyncio.sleep(0.2)


async def _clock(run: _Run, step: ClockSteps) -> None:
    """Run the clock ``step.clock`` steps in stepped mode (each step once the one before is digested)."""
    start = datetime.fromisoformat((await run.call("GET", "/clock")).json()["world_time"])
    until = start + timedelta(seconds=step.clock * step.step_seconds)
    await run.call("POST", "/clock", {"paused": False, "mode": "stepped", "step_seconds": step.step_seconds,
                                      "until": until.isoformat()})
    deadline = time.monotonic() + 60 + step.clock * 5
    while datetime.fromisoformat((await run.call("GET", "/clock")).json()["world_time"]) < until:
        if time.monotonic() > deadline:
            raise StepError(f"the clock did not reach {until.isoformat()} in time")
        await asyncio.sleep(0.1)
    run.now = until


async def _evaluate(run: _Run, check: Check) -> Verdict:
    try:
        return await _read_and_check(run, check)
    except StepError as exc:
        return Verdict(False, f"could not read: {exc}")


async def _read_and_check(run: _Run, check: Check) -> Verdict:
    if isinstance(check, MemoriesCheck):
        return check_memories(check, await _memories(run, check.memories))
    if isinstance(check, RetrievalCheck):
        found = await run.call("POST", f"/npcs/{check.retrieval}/memories/retrieve", {
            "query": check.query, "k": max(10, check.rank_at_most), "now": run.now.isoformat()})
        return check_retrieval(check, [m["description"] for m in found.json()["items"]])
    if isinstance(check, ReplyCheck):
        return check_reply(check, run.replies.get(check.reply))
    if isinstance(check, PlanCheck):
        plan = await run.call("GET", f"/npcs/{check.plan}/plan", ok=(200, 404))
        return check_plan(check, _plan_texts(plan.json()) if plan.status_code == 200 else None)
    return check_relationship(check, await _relationship(run, check))


async def _memories(run: _Run, npc: str) -> list[MemorySeen]:
    seen: list[MemorySeen] = []
    cursor: str | None = None
    while True:
        query = "?limit=500" + (f"&cursor={cursor}" if cursor else "")
        page = (await run.call("GET", f"/npcs/{npc}/memories{query}")).json()
        seen += [MemorySeen(m["description"], m["importance"], m["kind"]) for m in page["items"]]
        if not (cursor := page.get("next_cursor")):
            return seen


def _plan_texts(plan: dict[str, Any]) -> list[str]:
    texts = [i["description"] for i in (*plan["outline"], *plan["items"])] + list(plan["goals"])
    if plan.get("current_action"):
        texts.append(plan["current_action"]["description"])
    return texts


async def _relationship(run: _Run, check: RelationshipCheck) -> RelationshipSeen | None:
    found = (await run.call("GET", f"/npcs/{check.relationship}/relationships")).json()
    return next((RelationshipSeen(r["other_id"], r["familiarity"], r["sentiment"], r["summary"])
                 for r in found if r["other_id"] == check.with_), None)
