"""The plan view the gateway serves, folded from planning's events (pure: items are plain JSON-ready dicts).

An item is ``{"start": iso, "minutes": int, "description": str, "location": str}``, the form the plan route
reads. Revisions replace the plan from their time on the way planning does (DESIGN.md: a reaction regenerates
the plan from now; the item in progress is cut there).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from npcworld.contracts import ActionDecided, PlanItem

__all__ = ["INNER_VOICE", "MAX_GOALS", "action", "item", "replace_from", "window", "with_goal"]

# Goals an NPC holds at once, newest first (planning keeps as many).
MAX_GOALS = 5
# How planning names a revision made for an inner-voice directive (PlanRevised.reason).
INNER_VOICE = "inner voice: "

Item = dict[str, Any]


def item(p: PlanItem) -> Item:
    return {"start": p.start.isoformat(), "minutes": p.duration_minutes, "description": p.description,
            "location": p.location_path}


def _start(i: Item) -> datetime:
    return datetime.fromisoformat(i["start"])


def _end(i: Item) -> datetime:
    return _start(i) + timedelta(minutes=int(i["minutes"]))


def window(outline: Sequence[Item]) -> tuple[datetime | None, datetime | None]:
    """The waking day an outline covers (planning normalises the outline over it): first start, last end."""
    if not outline:
        return None, None
    return _start(outline[0]), _end(outline[-1])


def replace_from(items: Sequence[Item], when: datetime, new: Iterable[Item]) -> list[Item]:
    """The plan with everything from ``when`` on replaced by ``new``; the item in progress is cut there."""
    kept = [i if _end(i) <= when else {**i, "minutes": int((when - _start(i)) / timedelta(minutes=1))}
            for i in items if _start(i) < when]
    return kept + list(new)


def with_goal(goals: Sequence[str], goal: str) -> list[str]:
    """Adopt ``goal``: newest first, no repeats, at most MAX_GOALS kept."""
    return list(dict.fromkeys((goal.strip(), *goals)))[:MAX_GOALS]


def action(decided: ActionDecided) -> dict[str, Any]:
    """The action in progress as the plan route shows it."""
    change = decided.object_state
    return {
        "item": {"start": decided.start.isoformat(), "minutes": decided.duration_minutes,
                 "description": decided.description, "location": decided.location_path},
        "emoji": decided.emoji,
        "object_path": change.object_path if change else None,
        "object_state": change.state if change else None,
        "reaction_to": decided.reaction_to,
    }
