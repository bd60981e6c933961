"""Planner state to and from JSON, the form it takes in the ``planning_npcs.state`` column."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from services.planning.domain import Action, DayPlan, Item, KnownPlaces, NpcKey, Persona, PlannerState

__all__ = ["dump_state", "load_state"]


def _item(i: Item) -> dict[str, Any]:
    return {"start": i.start.isoformat(), "minutes": i.minutes, "description": i.description,
            "location": i.location}


def _load_item(d: dict[str, Any]) -> Item:
    return Item(datetime.fromisoformat(d["start"]), int(d["minutes"]), d["description"], d["location"])


def _action(a: Action) -> dict[str, Any]:
    out = {"item": _item(a.item), "emoji": a.emoji, "object_path": a.object_path,
           "object_state": a.object_state, "reaction_to": a.reaction_to, "talking_to": a.talking_to}
    return out | ({"coarse": True} if a.coarse else {})


def _load_action(d: dict[str, Any]) -> Action:
    return Action(_load_item(d["item"]), d["emoji"], d["object_path"], d["object_state"], d["reaction_to"],
                  d.get("talking_to"), bool(d.get("coarse", False)))


def _plan(p: DayPlan) -> dict[str, Any]:
    return {"day": p.day.isoformat(), "start": p.start.isoformat(), "end": p.end.isoformat(),
            "outline": [_item(i) for i in p.outline], "items": [_item(i) for i in p.items],
            "fallbacks": list(p.fallbacks)}


def _load_plan(d: dict[str, Any]) -> DayPlan:
    return DayPlan(date.fromisoformat(d["day"]), datetime.fromisoformat(d["start"]),
                   datetime.fromisoformat(d["end"]), tuple(_load_item(i) for i in d["outline"]),
                   tuple(_load_item(i) for i in d["items"]), tuple(d["fallbacks"]))


def dump_state(s: PlannerState) -> dict[str, Any]:
    """The state as JSON-compatible data (the key is stored in columns, not here)."""
    p = s.persona
    return {
        "persona": {"name": p.name, "age": p.age, "traits": list(p.traits), "occupation": p.occupation,
                    "seed": p.seed},
        "places": {"paths": list(s.places.paths), "home": s.places.home},
        "goals": list(s.goals), "promises": [_item(i) for i in s.promises],
        "plan": _plan(s.plan) if s.plan else None, "actions": [_action(a) for a in s.actions],
        "current": _action(s.current) if s.current else None, "previous_day": s.previous_day,
        "seen": [[k, t.isoformat()] for k, t in s.seen], "ready": s.ready,
    }


def load_state(key: NpcKey, d: dict[str, Any]) -> PlannerState:
    """The state ``dump_state`` wrote."""
    p = d["persona"]
    return PlannerState(
        key=key,
        persona=Persona(p["name"], p["age"], tuple(p["traits"]), p["occupation"], p["seed"]),
        places=KnownPlaces(tuple(d["places"]["paths"]), d["places"]["home"]),
        goals=tuple(d["goals"]), promises=tuple(_load_item(i) for i in d["promises"]),
        plan=_load_plan(d["plan"]) if d["plan"] else None,
        actions=tuple(_load_action(a) for a in d["actions"]),
        current=_load_action(d["current"]) if d["current"] else None, previous_day=d["previous_day"],
        seen=tuple((k, datetime.fromisoformat(t)) for k, t in d["seen"]), ready=bool(d.get("ready", True)),
    )
