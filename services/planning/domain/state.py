"""The planner's view of one NPC: persona, known places, goals, promises, today's plan and current action.

Pure transitions over frozen dataclasses; the service layer supplies the LLM's proposals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, tzinfo

from services.planning.domain.items import Item, fit_actions, insert_item, replace_from
from services.planning.domain.places import KnownPlaces, resolve_place

__all__ = ["Action", "DayPlan", "NpcKey", "Persona", "PlannerState", "ProposedAction", "actions_for",
           "day_summary", "keep_promise", "rest_action", "revise", "waking_window"]

# DESIGN.md "Planning": at most this many goals (inner-voice directives) carried into each plan.
MAX_GOALS = 5


@dataclass(frozen=True)
class NpcKey:
    """Whose planner state this is."""

    tenant_id: str
    world_id: str
    npc_id: str


@dataclass(frozen=True)
class Persona:
    """Who the NPC is (from NpcCreated); ``seed`` carries its lifestyle and background."""

    name: str
    age: int | None = None
    traits: tuple[str, ...] = ()
    occupation: str | None = None
    seed: str = ""

    def summary(self) -> str:
        """Age, traits, occupation and lifestyle in one line, as the planning prompts show it."""
        parts = [f"age {self.age}" if self.age is not None else "", ", ".join(self.traits),
                 f"occupation: {self.occupation}" if self.occupation else "", self.seed]
        return "; ".join(p for p in parts if p)[:2000] or self.name


@dataclass(frozen=True)
class Action:
    """A decided action: the item, its emoji and the object state it leaves behind (if any)."""

    item: Item
    emoji: str = ""
    object_path: str | None = None
    object_state: str | None = None
    reaction_to: str | None = None
    talking_to: str | None = None
    coarse: bool = False  # level of detail: a whole plan item, taken while the NPC was out of focus


@dataclass(frozen=True)
class ProposedAction:
    """An action as proposed for a chunk, before it is fitted to the chunk's time."""

    description: str
    minutes: int
    emoji: str = ""
    object_name: str | None = None
    object_state: str | None = None


@dataclass(frozen=True)
class DayPlan:
    """One day: its waking window, the outline, the hour chunks, and every place fallback made."""

    day: date
    start: datetime
    end: datetime
    outline: tuple[Item, ...]
    items: tuple[Item, ...]
    fallbacks: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannerState:
    """Everything planning keeps for one NPC."""

    key: NpcKey
    persona: Persona
    places: KnownPlaces
    goals: tuple[str, ...] = ()
    promises: tuple[Item, ...] = ()
    plan: DayPlan | None = None
    actions: tuple[Action, ...] = ()
    current: Action | None = None
    previous_day: str = ""
    seen: tuple[tuple[str, datetime], ...] = ()
    ready: bool = True
    # Designer canon the NPC holds true, read with the state (never stored with it: npcworld.canon).
    canon: tuple[str, ...] = ()

    @classmethod
    def heard_of(cls, key: NpcKey, places: tuple[str, ...]) -> PlannerState:
        """An NPC known only from its perceptions so far (its NpcCreated is on another topic and may come
        later): it keeps the places it saw and is not planned for until its persona arrives."""
        return cls(key, Persona(key.npc_id), KnownPlaces(places, places[0]), ready=False)

    def created(self, persona: Persona, home: str | None, known: tuple[str, ...]) -> PlannerState:
        """The persona arrived: its starting location is home (else the first known place, else the world)."""
        start = home or (known[0] if known else None) or (self.places.paths[0] if self.places.paths else None)
        places = KnownPlaces(self.places.paths, start or self.key.world_id).with_paths(known)
        return replace(self, persona=persona, places=places, ready=True)

    def needs_plan(self, now: datetime) -> bool:
        """A new day (or no plan yet) needs a day plan before any action."""
        return self.plan is None or self.plan.day != now.date()

    def with_goal(self, goal: str) -> PlannerState:
        """Adopt ``goal`` (newest first, at most MAX_GOALS kept)."""
        goals = tuple(dict.fromkeys((goal.strip(), *self.goals)))[:MAX_GOALS]
        return replace(self, goals=goals)


def waking_window(day: date, wake: time, bed: time, tz: tzinfo | None) -> tuple[datetime, datetime]:
    """The waking day as datetimes in the world clock's zone (bed before wake means past midnight)."""
    start = datetime.combine(day, wake, tzinfo=tz)
    end = datetime.combine(day, bed, tzinfo=tz)
    return start, end if end > start else end + timedelta(days=1)


def day_summary(name: str, plan: DayPlan) -> str:
    """Yesterday in one line for the next day's outline (DESIGN.md: persona + previous day summary)."""
    blocks = "; ".join(f"{b.start:%H:%M} {b.description}" for b in plan.outline)
    return f"On {plan.day:%A %d %B} {name}: {blocks}"[:2000]


def rest_action(state: PlannerState, now: datetime) -> Action:
    """Sleep at home outside the waking day: until it starts, or until midnight once it is over."""
    plan = state.plan
    until = plan.start if plan is not None and now < plan.start else \
        datetime.combine(now.date() + timedelta(days=1), time(0), tzinfo=now.tzinfo)
    minutes = max(1, min(24 * 60, int((until - now).total_seconds() // 60)))
    return Action(Item(now, minutes, "sleeping", state.places.home), emoji="😴")


def actions_for(chunk: Item, proposals: Sequence[ProposedAction], places: KnownPlaces) -> tuple[Action, ...]:
    """The chunk's 5-15 minute actions (DESIGN.md: just-in-time decomposition); an object is kept only
    when it resolves to a known object at the chunk's place."""
    arena = ":".join(chunk.location.split(":")[:3])
    objects = places.objects_in(arena)
    fitted = fit_actions(chunk, [(p.description, p.minutes) for p in proposals])
    actions = []
    for item, index in fitted:
        proposal = proposals[index] if proposals else None
        path = None
        if proposal and proposal.object_name and objects:
            found = resolve_place(proposal.object_name, KnownPlaces(objects, objects[0]))
            path = found.path if found.fallback is None else None
        state = proposal.object_state if proposal and path else None
        actions.append(Action(item, proposal.emoji if proposal else "", path, state))
    return tuple(actions)


def revise(
    state: PlannerState, now: datetime, new_items: Sequence[Item], notes: Sequence[str] = ()
) -> PlannerState:
    """Replace the plan from ``now`` on; the current action and its decomposition end now."""
    plan = state.plan
    assert plan is not None
    items = tuple(replace_from(plan.items, now, new_items))
    fallbacks = tuple(dict.fromkeys((*plan.fallbacks, *notes)))
    return replace(state, plan=replace(plan, items=items, fallbacks=fallbacks), actions=(), current=None)


def keep_promise(state: PlannerState, promise: Item) -> tuple[PlannerState, bool]:
    """Put a promise into today's plan when it falls in the waking day, else keep it for its day.

    Returns the new state and whether today's plan changed.
    """
    plan = state.plan
    if plan is None or not plan.start <= promise.start < plan.end:
        return replace(state, promises=(*state.promises, promise)), False
    left = int((plan.end - promise.start).total_seconds() // 60)
    clipped = replace(promise, minutes=min(promise.minutes, left))
    plan = replace(plan, items=tuple(insert_item(plan.items, clipped)),
                   outline=tuple(insert_item(plan.outline, clipped)))
    current = state.current
    if current is not None and current.item.start < clipped.end and clipped.start < current.item.end:
        current = None
    return replace(state, plan=plan, actions=(), current=current), True
