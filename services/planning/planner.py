"""Day planning and acting: outline → hour chunks → just-in-time actions, each step one LLM call.

Per NPC-day this costs one ``plan_day``, one ``plan_hours`` and one ``plan_actions`` per hour chunk
(DESIGN.md: ≤ 150 calls per NPC-day; emoji and object state come inside the action call, places are
resolved against the NPC's known places without any call).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta
from typing import TypeVar

from pydantic import BaseModel

from npcworld.contracts import ActionDecided, DayPlanned, EventPayload, ObjectStateChange, PlanItem
from npcworld.llm import LLM
from npcworld.llm.prompts.planning import (
    HourSlot,
    PlanActionsInput,
    PlanActionsOutput,
    PlanDayInput,
    PlanDayOutput,
    PlanHoursInput,
    PlanHoursOutput,
)
from services.planning.domain import (
    Action,
    DayPlan,
    Item,
    PlannerState,
    ProposedAction,
    actions_for,
    day_summary,
    hour_slots,
    insert_item,
    item_at,
    name_chunks,
    normalise,
    place_name,
    resolve_place,
    rest_action,
    waking_window,
)

__all__ = ["Outline", "action_event", "ask", "decide_next", "outline_from", "plan_day", "plan_items",
           "to_plan_items"]

Outline = tuple[list[Item], list[Item], list[str]]
T = TypeVar("T", bound=BaseModel)


def _minute(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


def _clock(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def to_plan_items(items: list[Item] | tuple[Item, ...]) -> tuple[PlanItem, ...]:
    """Plan items as the planning contracts carry them."""
    return tuple(PlanItem(start=i.start, duration_minutes=max(1, min(i.minutes, 24 * 60)),
                          description=i.description[:1000], location_path=i.location) for i in items)


async def ask(
    llm: LLM, kind: str, inputs: BaseModel, output: type[T], *, state: PlannerState, now: datetime
) -> T:
    """One LLM call on behalf of the NPC (recorded and counted per NPC by the LLM layer)."""
    key = state.key
    result = await llm.complete(kind, inputs, output, tenant_id=key.tenant_id, world_id=key.world_id,
                                npc_id=key.npc_id, world_time=now)
    return result.value


async def outline_from(
    llm: LLM, state: PlannerState, day: date, start: datetime | None, *, now: datetime
) -> tuple[PlanDayOutput, list[str]]:
    """Ask for the day's outline (or the rest of it from ``start``); returns it with the promises shown."""
    promises = [p for p in state.promises if p.start.date() == day]
    shown = [f"{p.start:%H:%M} {p.description} at {place_name(p.location)}" for p in promises]
    inputs = PlanDayInput(
        npc_name=state.persona.name, persona=state.persona.summary(), date=f"{day:%A %d %B %Y}",
        previous_day=state.previous_day, from_time=None if start is None else f"{start:%H:%M}",
        places=tuple(place_name(p) for p in state.places.arenas())[:60], goals=state.goals,
        commitments=tuple(shown)[:10], canon=state.canon,
    )
    return await ask(llm, "plan_day", inputs, PlanDayOutput, state=state, now=now), shown


async def plan_items(
    llm: LLM, state: PlannerState, output: PlanDayOutput, window: tuple[datetime, datetime], *, now: datetime
) -> Outline:
    """Resolve an outline's places, normalise it over ``window`` and decompose it into named hour chunks.

    Returns (outline blocks, hour chunks, place fallbacks recorded).
    """
    start, end = window
    fallbacks: list[str] = []
    blocks: list[Item] = []
    for block in output.blocks:
        at = datetime.combine(start.date(), _clock(block.start), tzinfo=start.tzinfo)
        if at < start - timedelta(hours=12):
            at += timedelta(days=1)  # a block after midnight of a late waking day
        found = resolve_place(block.place, state.places)
        if found.fallback:
            fallbacks.append(found.fallback)
        blocks.append(Item(at, block.duration_minutes, block.description, found.path))
    idle = Item(start, 1, "free time", state.places.home)
    outline = normalise(blocks, start, end, idle)
    slots = hour_slots(outline)
    inputs = PlanHoursInput(npc_name=state.persona.name, persona=state.persona.summary(), slots=tuple(
        HourSlot(start=f"{s.start:%H:%M}", minutes=s.minutes, block=s.description[:500]) for s in slots))
    hours = await ask(llm, "plan_hours", inputs, PlanHoursOutput, state=state, now=now)
    return outline, name_chunks(slots, hours.chunks), fallbacks


async def plan_day(llm: LLM, state: PlannerState, now: datetime) -> tuple[PlannerState, DayPlanned]:
    """Plan the day of ``now``: outline from persona and yesterday, hour chunks, promises at their times."""
    day = now.date()
    output, _ = await outline_from(llm, state, day, None, now=now)
    window = waking_window(day, _clock(output.wake_up), _clock(output.bed_time), now.tzinfo)
    outline, items, fallbacks = await plan_items(llm, state, output, window, now=now)
    due = [p for p in state.promises if window[0] <= p.start < window[1]]
    for promise in due:
        left = int((window[1] - promise.start).total_seconds() // 60)
        clipped = replace(promise, minutes=min(promise.minutes, left))
        outline, items = insert_item(outline, clipped), insert_item(items, clipped)
    previous = day_summary(state.persona.name, state.plan) if state.plan else state.previous_day
    plan = DayPlan(day, window[0], window[1], tuple(outline), tuple(items), tuple(dict.fromkeys(fallbacks)))
    kept = tuple(p for p in state.promises if p not in due and p.start >= window[0])
    state = replace(state, plan=plan, actions=(), current=None, previous_day=previous, promises=kept)
    event = DayPlanned(day=day, outline=to_plan_items(outline), items=to_plan_items(items), goals=state.goals,
                       fallbacks=plan.fallbacks)
    return state, event


def _action_at(actions: tuple[Action, ...], now: datetime) -> Action | None:
    return next((a for a in actions if a.item.start <= now < a.item.end), None)


async def _decompose(llm: LLM, state: PlannerState, chunk: Item, now: datetime) -> tuple[Action, ...]:
    arena = ":".join(chunk.location.split(":")[:3])
    objects = tuple(p.split(":")[-1] for p in state.places.objects_in(arena))[:40]
    inputs = PlanActionsInput(npc_name=state.persona.name, task=chunk.description[:500],
                              start=f"{chunk.start:%H:%M}", minutes=max(1, min(chunk.minutes, 60)),
                              place=place_name(chunk.location)[:500], objects=objects)
    result = await ask(llm, "plan_actions", inputs, PlanActionsOutput, state=state, now=now)
    proposals = [ProposedAction(a.description, a.duration_minutes, a.emoji, a.object, a.object_state)
                 for a in result.actions]
    return actions_for(chunk, proposals, state.places)


def action_event(action: Action, now: datetime) -> ActionDecided:
    """The ActionDecided for ``action`` from ``now`` (an action picked up mid-way starts now)."""
    start = max(action.item.start, _minute(now))
    minutes = max(1, int((action.item.end - start).total_seconds() // 60))
    change = ObjectStateChange(object_path=action.object_path, state=action.object_state) \
        if action.object_path and action.object_state else None
    return ActionDecided(description=action.item.description[:1000], location_path=action.item.location,
                         start=start, duration_minutes=min(minutes, 24 * 60), emoji=action.emoji[:16],
                         object_state=change, reaction_to=action.reaction_to)


async def decide_next(
    llm: LLM, state: PlannerState, now: datetime, *, coarse: bool = False
) -> tuple[PlannerState, list[EventPayload]]:
    """The NPC's next action at ``now``: plan the day if it is a new one, decompose the current chunk
    just in time (from now, if the NPC arrives in the middle of it), and emit ActionDecided.

    ``coarse`` (level of detail: the NPC is out of focus): the chunk is taken whole as one action, with no
    decomposition call. An NPC in full detail whose action is such a chunk has it decomposed from now on,
    so it switches to full detail at its next tick."""
    events: list[EventPayload] = []
    if state.needs_plan(now):
        state, planned = await plan_day(llm, state, now)
        events.append(planned)
    plan = state.plan
    assert plan is not None
    actions_now = state.actions if coarse else tuple(a for a in state.actions if not a.coarse)
    action = _action_at(actions_now, now)
    chunk = item_at(plan.items, now) if action is None else None
    if action is None and chunk is None:
        action = rest_action(state, now)
    elif action is None and chunk is not None:
        start = max(chunk.start, _minute(now))
        remainder = replace(chunk, start=start, minutes=int((chunk.end - start).total_seconds() // 60))
        piece = remainder if remainder.minutes >= 1 else chunk
        actions = (Action(piece, coarse=True),) if coarse else await _decompose(llm, state, piece, now)
        state = replace(state, actions=actions)
        action = _action_at(actions, now) or actions[-1]
    assert action is not None
    state = replace(state, current=action)
    events.append(action_event(action, now))
    return state, events
