"""Reacting and re-planning: continue-or-react on a perception, inner-voice goals, promises from dialogue.

A reaction regenerates the plan from now (DESIGN.md "Planning"); a talk becomes a ConversationRequested
that dialogue runs. Only the NPC's own perceptions and an inner voice change a plan; player speech is
never handled here, and what a player claimed is not weighed either (a retrieved claim is left out).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime

from npcworld.contracts import Commitment, ConversationRequested, EventPayload, PlanRevised
from npcworld.errors import NotFoundError
from npcworld.llm import LLM
from npcworld.llm.prompts.planning import Person, ReactionInput, ReactionOutput
from npcworld.memory_client import MemoryReader, RetrievalRequest, relied_on
from services.planning.domain import (
    Action,
    Item,
    Perceived,
    PlannerState,
    actions_after,
    consider,
    keep_promise,
    may_talk,
    mentioned,
    reaction_items,
    resolve_place,
    retrieval_queries,
    revise,
    talked,
)
from services.planning.planner import action_event, ask, decide_next, outline_from, plan_items, to_plan_items

__all__ = ["adopt_directive", "keep_promises", "react"]

# Memories per retrieval shown to the react-or-continue prompt.
RETRIEVAL_K = 5


def _minute(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


async def _recall(memory: MemoryReader, state: PlannerState, query: str, now: datetime) -> tuple[str, ...]:
    key = state.key
    request = RetrievalRequest(tenant_id=key.tenant_id, world_id=key.world_id, npc_id=key.npc_id,
                               query=query[:2000], k=RETRIEVAL_K, now=now)
    try:
        # A player's uncorroborated claim is never what a reaction goes on (docs/planning.md "Claims").
        return tuple(m.description[:500] for m in await memory.retrieve(request) if relied_on(m))
    except NotFoundError:  # the memory service has not opened this NPC's stream yet
        return ()


def _awake(state: PlannerState, now: datetime) -> bool:
    return state.plan is not None and state.plan.start <= now < state.plan.end


async def react(
    llm: LLM, memory: MemoryReader, state: PlannerState, seen: Perceived, *,
    people: list[tuple[str, str]], now: datetime, cause: str,
) -> tuple[PlannerState, list[EventPayload]]:
    """Continue or react to ``seen``: two retrievals, one ``plan_reaction`` call, and on a reaction the
    plan from now on (PlanRevised) with either the reaction as the action or a conversation request."""
    state, weigh = consider(state, seen, now, people)
    if not weigh or not _awake(state, now) or state.plan is None:
        return state, []
    about, doing = retrieval_queries(state.persona.name, seen)
    relationship, activity = await asyncio.gather(_recall(memory, state, about, now),
                                                  _recall(memory, state, doing, now))
    current = state.current.item.description if state.current else "going about the day"
    inputs = ReactionInput(
        npc_name=state.persona.name, persona=state.persona.summary(), now=f"{now:%H:%M}",
        current_activity=current[:500], observation=seen.description[:2000], relationship=relationship,
        activity=activity, people=tuple(Person(npc_id=i, name=n) for i, n in
                                        mentioned(people, seen, state.key.npc_id)[:20]),
        canon=state.canon,
    )
    decision = await ask(llm, "plan_reaction", inputs, ReactionOutput, state=state, now=now)
    talk_to = decision.talk_to
    if not decision.react or (talk_to is not None and not may_talk(state, talk_to, now)):
        return state, []
    here = state.current.item.location if state.current else state.places.home
    if seen.location:  # react where it happens when the NPC knows the place
        found = resolve_place(seen.location, state.places, near=here)
        here = here if found.fallback else found.path
    item = Item(_minute(now), decision.duration_minutes, decision.reaction, here)
    items = reaction_items(state.plan, item)
    resume = actions_after(state.actions, items[0].end)
    state = replace(revise(state, item.start, items), actions=resume)
    reason = f"reacting to: {seen.description}"[:2000]
    revised = PlanRevised(from_time=item.start, items=to_plan_items(items), reason=reason, reaction_to=cause)
    action = Action(items[0], decision.emoji, reaction_to=cause, talking_to=talk_to)
    state = replace(state, current=action)
    if talk_to is not None:
        why = (decision.reason or item.description)[:2000]
        talk = ConversationRequested(target_npc_id=talk_to, reason=why, location_path=here, reaction_to=cause)
        state = talked(state, talk_to, now)
        return state, [revised, talk]
    return state, [revised, action_event(action, now)]


async def adopt_directive(
    llm: LLM, state: PlannerState, directive: str, now: datetime
) -> tuple[PlannerState, list[EventPayload]]:
    """Take an inner-voice directive as the NPC's own goal; re-plan the rest of today around it (one
    ``plan_day`` revision and one ``plan_hours`` call) and decide the next action at once. Outside the
    waking day the goal waits for the next day's plan."""
    state = state.with_goal(directive)
    if not _awake(state, now) or state.plan is None:
        return state, []
    start, end = _minute(now), state.plan.end
    output, _ = await outline_from(llm, state, start.date(), start, now=now)
    _, items, fallbacks = await plan_items(llm, state, output, (start, end), now=now)
    state = revise(state, start, items, fallbacks)
    revised = PlanRevised(from_time=start, items=to_plan_items(items),
                          reason=f"inner voice: {directive}"[:2000], fallbacks=tuple(fallbacks))
    state, events = await decide_next(llm, state, now)
    return state, [revised, *events]


def _promise(state: PlannerState, commitment: Commitment, now: datetime) -> tuple[Item, str | None]:
    here = state.current.item.location if state.current else state.places.home
    start = max(_minute(commitment.start or now), _minute(now))
    if not commitment.location_path:
        return Item(start, commitment.duration_minutes, commitment.description, here), None
    place = resolve_place(commitment.location_path, state.places, near=here)
    return Item(start, commitment.duration_minutes, commitment.description, place.path), place.fallback


def keep_promises(
    state: PlannerState, commitments: tuple[Commitment, ...], now: datetime, conversation: str
) -> tuple[PlannerState, list[EventPayload]]:
    """Put what the NPC agreed to in a conversation into its plan at that time (say/do coherence,
    Project Sid's cognitive controller); a promise for a later day waits for that day's plan."""
    events: list[EventPayload] = []
    for commitment in commitments:
        if commitment.npc_id != state.key.npc_id:
            continue
        promise, fallback = _promise(state, commitment, now)
        state, today = keep_promise(state, promise)
        if today and state.plan is not None:
            tail = [i for i in state.plan.items if i.start >= promise.start]
            events.append(PlanRevised(
                from_time=promise.start, items=to_plan_items(tail), reaction_to=None,
                reason=f"agreed in conversation {conversation}: {commitment.description}"[:2000],
                fallbacks=(fallback,) if fallback else ()))
    if state.current is not None and state.current.talking_to is not None:
        state = replace(state, current=None)  # the conversation is over; the next tick decides anew
    return state, events

