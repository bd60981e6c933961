"""Which perceptions an NPC weighs (continue or react), what it asks its memory about them, and the
re-plan a reaction makes (DESIGN.md "Planning": two retrievals; a reaction regenerates the plan from now)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from services.planning.domain.items import Item
from services.planning.domain.state import DayPlan, PlannerState

__all__ = ["REACTIVE_SOURCES", "Perceived", "consider", "mentioned", "reaction_items", "retrieval_queries"]

# Only the NPC's own perception (or a studio's engine speaking for it) may change its plan; player
# speech arrives as something heard and never as an instruction.
REACTIVE_SOURCES = frozenset({"perception", "studio"})
# How many recently weighed perceptions are remembered so a repeat is not weighed again.
SEEN_LIMIT = 20
_IDLE = re.compile(r"\b(is|are) idle\b", re.I)
_SPACE = re.compile(r"\s+")
_MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Perceived:
    """A perception as planning sees it."""

    description: str
    subject: str | None
    source: str


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.strip().lower())


def consider(state: PlannerState, seen: Perceived) -> tuple[PlannerState, bool]:
    """Whether the NPC weighs this perception, and the state that remembers it was weighed.

    Not weighed: perceptions from sources other than the NPC's own senses, perceptions of itself,
    idle objects, and repeats of something weighed recently.
    """
    if seen.source not in REACTIVE_SOURCES or _IDLE.search(seen.description):
        return state, False
    me = {_norm(state.persona.name), _norm(state.key.npc_id), _norm(state.persona.name.split()[0])}
    if seen.subject is not None and _norm(seen.subject) in me:
        return state, False
    key = _norm(seen.description)
    if key in state.seen:
        return state, False
    return replace(state, seen=(key, *state.seen)[:SEEN_LIMIT]), True


def retrieval_queries(npc_name: str, seen: Perceived) -> tuple[str, str]:
    """The paper's two queries: the NPC's relationship to the observed entity, and what it is doing."""
    entity = seen.subject or seen.description
    return f"What is {npc_name}'s relationship with {entity}?", seen.description


def mentioned(people: Sequence[tuple[str, str]], seen: Perceived, me: str) -> list[tuple[str, str]]:
    """The (npc_id, name) of other NPCs the perception names, by id, full name or first name."""
    text = _norm(f"{seen.subject or ''} {seen.description}")
    found = []
    for npc_id, name in people:
        if npc_id == me:
            continue
        names = {_norm(npc_id), _norm(name), _norm(name.split()[0])}
        if any(re.search(rf"\b{re.escape(n)}\b", text) for n in names if n):
            found.append((npc_id, name))
    return found


def reaction_items(plan: DayPlan, reaction: Item) -> list[Item]:
    """The plan from the reaction's start: the reaction, then the rest of the day as it was planned.

    The reaction is clipped to the waking day; the item it interrupts resumes after it if time is
    left; items wholly inside the reaction's time are dropped, so the day stays covered without overlaps.
    """
    end = min(plan.end, reaction.end)
    first = replace(reaction, minutes=max(1, int((end - reaction.start) / _MINUTE)))
    rest = []
    for item in plan.items:
        if item.end > first.end:
            start = max(item.start, first.end)
            rest.append(replace(item, start=start, minutes=int((item.end - start) / _MINUTE)))
    return [first, *rest]
