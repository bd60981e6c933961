"""Which perceptions an NPC weighs (continue or react), what it asks its memory about them, and the
re-plan a reaction makes (DESIGN.md "Planning": two retrievals; a reaction regenerates the plan from now)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from services.planning.domain.items import Item
from services.planning.domain.state import Action, DayPlan, PlannerState

__all__ = ["CONVERSATION_COOLDOWN", "PEOPLE_PER_COOLDOWN", "PERSON_COOLDOWN", "REACTIVE_SOURCES", "Perceived",
           "actions_after", "consider", "may_talk", "mentioned", "reaction_items", "retrieval_queries",
           "talked"]

# Only the NPC's own perception (or a studio's engine speaking for it) may change its plan; player
# speech arrives as something heard and never as an instruction.
REACTIVE_SOURCES = frozenset({"perception", "studio"})
# How many recently weighed perceptions are remembered so a repeat is not weighed again (the conversations
# the NPC started or ended are kept apart, each until its cooldown is over).
SEEN_LIMIT = 20
PERSON_COOLDOWN = timedelta(minutes=30)
# At most this many people weighed per PERSON_COOLDOWN, however crowded the place (objects are not capped).
PEOPLE_PER_COOLDOWN = 2
# DESIGN.md "What the reference implementation actually does": an 800-step (~2 h 13 min) cooldown per pair
# between conversations.
CONVERSATION_COOLDOWN = timedelta(seconds=800 * 10)
_IDLE = re.compile(r"\b(is|are) idle\b", re.I)
_SPACE = re.compile(r"\s+")
_MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Perceived:
    """A perception as planning sees it."""

    description: str
    subject: str | None
    source: str
    location: str | None = None
    state: str | None = None  # an object's state as perceived (the observation's triple object)


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.strip().lower())


def consider(
    state: PlannerState, seen: Perceived, now: datetime, people: Sequence[tuple[str, str]] = ()
) -> tuple[PlannerState, bool]:
    """Whether the NPC weighs this perception, and the state that remembers it was weighed.

    Not weighed: perceptions from sources other than the NPC's own senses, perceptions of itself, idle
    objects, an object in the very state the NPC's own current action put it in (its own doing, not news),
    a state weighed within the last PERSON_COOLDOWN, any perception of a person weighed within
    PERSON_COOLDOWN, a person the NPC talked with within CONVERSATION_COOLDOWN (the pair may not talk
    again yet; as in the reference implementation, whose chat buffer per pair comes before the decision to
    talk), and more than PEOPLE_PER_COOLDOWN people per PERSON_COOLDOWN. People change action every 5-15
    minutes; DESIGN.md's ≤ 150 calls per NPC-day leaves room for about four decisions about people per
    waking hour however crowded the place, and they go to people the NPC may talk to.
    """
    if seen.source not in REACTIVE_SOURCES or _IDLE.search(seen.description) or _own_doing(state, seen):
        return state, False
    me = {_norm(state.persona.name), _norm(state.key.npc_id), _norm(state.persona.name.split()[0])}
    if seen.subject is not None and _norm(seen.subject) in me:
        return state, False
    person = mentioned(people, seen, state.key.npc_id)
    key = f"person:{person[0][0]}" if person else _norm(seen.description)
    recent = _unexpired(state, now)
    people_weighed = sum(1 for k, _ in recent if k.startswith("person:"))
    cooling = bool(person) and not may_talk(state, person[0][0], now)
    if any(k == key for k, _ in recent) or cooling or (person and people_weighed >= PEOPLE_PER_COOLDOWN):
        return replace(state, seen=recent), False
    return replace(state, seen=_bounded(((key, now), *recent))), True


def _own_doing(state: PlannerState, seen: Perceived) -> bool:
    """Whether ``seen`` is an object in the state the NPC's current action leaves it in."""
    current = state.current
    if current is None or current.object_path is None or seen.state is None:
        return False
    return seen.subject == current.object_path and _norm(seen.state) == _norm(current.object_state or "")


def _unexpired(state: PlannerState, now: datetime) -> tuple[tuple[str, datetime], ...]:
    return tuple((k, t) for k, t in state.seen
                 if now - t < (CONVERSATION_COOLDOWN if k.startswith("talk:") else PERSON_COOLDOWN))


def may_talk(state: PlannerState, npc_id: str, now: datetime) -> bool:
    """Whether the NPC may start a conversation with ``npc_id`` (not within CONVERSATION_COOLDOWN of
    the last one it started with them)."""
    return all(k != f"talk:{npc_id}" for k, _ in _unexpired(state, now))


def talked(state: PlannerState, npc_id: str, now: datetime) -> PlannerState:
    """Remember that the NPC talked with ``npc_id`` now (started a conversation, or one ended): the pair's
    cooldown starts."""
    return replace(state, seen=_bounded(((f"talk:{npc_id}", now), *_unexpired(state, now))))


def _bounded(seen: tuple[tuple[str, datetime], ...]) -> tuple[tuple[str, datetime], ...]:
    """The newest SEEN_LIMIT weighed perceptions and every unexpired conversation: a busy place's objects
    must not push a pair's cooldown out of memory (the pair would talk again at once)."""
    talks = tuple(e for e in seen if e[0].startswith("talk:"))
    return talks + tuple(e for e in seen if not e[0].startswith("talk:"))[:SEEN_LIMIT]


def actions_after(actions: Sequence[Action], when: datetime) -> tuple[Action, ...]:
    """The decomposed actions still ahead at ``when`` (cut to start there): an interrupted chunk resumes
    after a reaction without being decomposed again."""
    out = []
    for action in actions:
        if action.item.end > when:
            start = max(action.item.start, when)
            out.append(replace(action, item=replace(action.item, start=start,
                                                    minutes=int((action.item.end - start) / _MINUTE))))
    return tuple(out)


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
