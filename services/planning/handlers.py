"""Planning-service event handlers: personas and places in; plans, reactions and actions out.

Player speech has no handler here on purpose: only the NPC's own perceptions and an inner voice
(admin-only at the gateway) change a plan. Every model call and retrieval (a tick's next actions, a
reaction, an inner voice's re-plan) is gathered before the transaction by the route's gather step; the
handler takes the result when the NPC's state is still the one it was worked out from, and otherwise works
it out again.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import (
    ConversationEnded,
    Envelope,
    EventPayload,
    InnerVoiceGiven,
    NpcCreated,
    NpcPersonaChanged,
    NpcRetired,
    ObservationMade,
    PlacesDiscovered,
    WorldDeleted,
    WorldForked,
    WorldTicked,
)
from npcworld.eventstore import UnitOfWork
from npcworld.fork import fork_intake
from npcworld.messaging import Routes, on
from services.planning.deps import PlanningDeps
from services.planning.domain import NpcKey, Perceived, Persona, PlannerState, talked
from services.planning.planner import decide_next
from services.planning.reacting import adopt_directive, keep_promises, react

__all__ = ["CONSUMER", "ROUTES", "gather_directives", "gather_reactions", "gather_ticks", "planning_stream"]

CONSUMER = "planning"
# The handlers wait on the model, and a transaction that has written holds back the outbox relay until it
# ends: one event per transaction (services/planning/repository.py locks without writing).
EVENTS_PER_TRANSACTION = 1
P = TypeVar("P", bound=EventPayload)


def planning_stream(key: NpcKey) -> str:
    """The event-store stream of one NPC's plans and actions."""
    return f"planning:{key.world_id}:{key.npc_id}"


def _key(event: Envelope, npc_id: str | None = None) -> NpcKey | None:
    npc = npc_id or event.npc_id
    return NpcKey(event.tenant_id, event.world_id, npc) if npc else None


async def _reacting(event: Envelope, uow: UnitOfWork, deps: PlanningDeps) -> PlannerState | None:
    """The NPC's state for a handler that may change its plan; None for fork copies (reactions are not
    re-run in a forked world), events without an NPC, and NPCs planning does not know yet."""
    key = _key(event)
    if key is None or event.forked_from is not None:
        return None
    state = await deps.repository.get(uow.conn, key)
    return state if state is not None and state.ready else None


async def _store(
    uow: UnitOfWork, deps: PlanningDeps, state: PlannerState, out: Sequence[EventPayload]
) -> None:
    await deps.repository.save(uow.conn, state)
    if out:
        npc = state.key.npc_id
        await uow.append(planning_stream(state.key), [uow.new_event(p, npc_id=npc) for p in out])


async def on_npc_created(event: Envelope[NpcCreated], uow: UnitOfWork, deps: PlanningDeps) -> None:
    """Remember the persona; its starting location and known places are where it may go."""
    p = event.payload
    key = NpcKey(event.tenant_id, event.world_id, p.npc_id)
    start = (p.location or key.world_id,)
    known = await deps.repository.get(uow.conn, key) or PlannerState.heard_of(key, start)
    persona = Persona(p.name, p.age, tuple(p.traits), p.occupation, p.seed)
    await deps.repository.save(uow.conn, known.created(persona, p.location, tuple(p.known_places)))


async def on_persona_changed(event: Envelope[NpcPersonaChanged], uow: UnitOfWork, deps: PlanningDeps) -> None:
    """A designer's persona edit: the next plans and decisions are made from the new persona."""
    p = event.payload
    key = NpcKey(event.tenant_id, event.world_id, p.npc_id)
    if (state := await deps.repository.get(uow.conn, key)) is None:
        return
    persona = replace(state.persona, name=p.name, age=p.age, traits=tuple(p.traits), occupation=p.occupation)
    await deps.repository.save(uow.conn, replace(state, persona=persona))


async def on_npc_retired(event: Envelope[NpcRetired], uow: UnitOfWork, deps: PlanningDeps) -> None:
    """A retired NPC is planned for no more."""
    p = event.payload
    await deps.repository.retire(uow.conn, NpcKey(event.tenant_id, event.world_id, p.npc_id))


async def on_places_discovered(
    event: Envelope[PlacesDiscovered], uow: UnitOfWork, deps: PlanningDeps
) -> None:
    """Grow the NPC's spatial memory (planning sends it only to places in it)."""
    p = event.payload
    if (key := _key(event)) is None:
        return
    state = await deps.repository.get(uow.conn, key)
    state = PlannerState.heard_of(key, p.paths) if state is None else \
        replace(state, places=state.places.with_paths(p.paths))
    await deps.repository.save(uow.conn, state)


async def on_world_ticked(
    event: Envelope[WorldTicked], uow: UnitOfWork, deps: PlanningDeps,
    gathered: Mapping[str, _PreparedTick] | None,
) -> None:
    """NPCs whose action has ended get their next one (planning their day first on a new day), as
    ``gather_ticks`` worked it out for those whose state is unchanged."""
    if event.forked_from is not None:
        return
    now = event.world_time
    repo = deps.repository
    detail = _detail(event)
    due = await repo.due(uow.conn, event.tenant_id, event.world_id, now, limit=deps.max_npcs_per_tick,
                         detail=detail)
    ready = gathered or {}

    async def next_for(state: PlannerState) -> tuple[PlannerState, list[EventPayload]]:
        done = ready.get(state.key.npc_id)
        if done is not None and done.before == state:
            return done.after, done.out
        coarse = detail is not None and state.key.npc_id not in detail
        after, out = await decide_next(deps.llm, state, now, coarse=coarse)
        return after, list(out)

    for state, out in await asyncio.gather(*(next_for(state) for state in due)):
        await _store(uow, deps, state, out)


def _detail(event: Envelope[WorldTicked]) -> frozenset[str] | None:
    """Level of detail: the NPCs a tick names as in full detail (None: all of them)."""
    ticked = event.payload
    return None if ticked.detail is None else frozenset(ticked.detail)


@dataclass(frozen=True)
class _PreparedTick:
    """An NPC's next action worked out before the tick's transaction, from ``before``."""

    before: PlannerState
    after: PlannerState
    out: list[EventPayload]


async def gather_ticks(
    events: Sequence[Envelope[WorldTicked]], deps: PlanningDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, Mapping[str, _PreparedTick]]:
    """Work out each tick's due NPCs' next actions before its transaction opens (their plans and model
    calls, concurrently), writing nothing; ``on_world_ticked`` takes a result only if the NPC's state is
    still the one it started from (another planner may have moved it on meanwhile)."""
    gate = asyncio.Semaphore(deps.prepare_concurrency)
    out: dict[uuid.UUID, Mapping[str, _PreparedTick]] = {}

    async def one(event: Envelope[WorldTicked], state: PlannerState) -> _PreparedTick:
        detail = _detail(event)
        coarse = detail is not None and state.key.npc_id not in detail
        async with gate:
            with handling(event.event_id, event.correlation_id):
                after, out = await decide_next(deps.llm, state, event.world_time, coarse=coarse)
        return _PreparedTick(state, after, list(out))

    for event in events:
        async with pool.connection() as conn:
            due = await deps.repository.peek_due(conn, event.tenant_id, event.world_id, event.world_time,
                                                 limit=deps.max_npcs_per_tick, detail=_detail(event))
        done = await asyncio.gather(*(one(event, state) for state in due))
        out[event.event_id] = {p.before.key.npc_id: p for p in done}
    return out


@dataclass(frozen=True)
class _Prepared:
    """A reaction (or an inner voice's re-plan) worked out before the transaction, from ``before`` and
    ``people``."""

    before: PlannerState
    people: list[tuple[str, str]]
    after: PlannerState
    out: list[EventPayload]


async def _react_to(
    event: Envelope[ObservationMade], deps: PlanningDeps, state: PlannerState, people: list[tuple[str, str]]
) -> tuple[PlannerState, list[EventPayload]]:
    p = event.payload
    seen = Perceived(p.description, p.subject, p.source, p.location, p.object)
    return await react(deps.llm, deps.memory, state, seen, people=people, now=event.world_time,
                       cause=str(event.event_id))


async def on_observation_made(
    event: Envelope[ObservationMade], uow: UnitOfWork, deps: PlanningDeps, prepared: _Prepared | None
) -> None:
    """Continue or react to what the NPC perceived; a reaction re-plans from now. The reaction gathered
    before the transaction (``gather_reactions``) is taken when the state it started from is the state
    now; otherwise it is worked out again here."""
    if (state := await _reacting(event, uow, deps)) is None:
        return
    people = await deps.repository.roster(uow.conn, event.tenant_id, event.world_id)
    if prepared is not None and prepared.before == state and prepared.people == people:
        state, out = prepared.after, prepared.out
    else:
        state, out = await _react_to(event, deps, state, people)
    await _store(uow, deps, state, out)


async def gather_reactions(
    events: Sequence[Envelope[ObservationMade]], deps: PlanningDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, _Prepared]:
    """Work out a poll's reactions before its transaction opens: the NPCs' retrievals and model calls run
    concurrently, one NPC's perceptions in order (each from the state the one before left), and nothing
    is written. The handlers take a result only if the NPC's state is still the one it started from."""
    return await _by_npc(events, deps, pool, _react_to)


async def gather_directives(
    events: Sequence[Envelope[InnerVoiceGiven]], deps: PlanningDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, _Prepared]:
    """Work out the re-plans of a poll's inner voices before its transaction opens, like reactions."""
    return await _by_npc(events, deps, pool, _adopt)


_Work = Callable[
    [Envelope[P], PlanningDeps, PlannerState, list[tuple[str, str]]],
    Awaitable[tuple[PlannerState, list[EventPayload]]],
]


async def _by_npc(
    events: Sequence[Envelope[P]], deps: PlanningDeps, pool: AsyncConnectionPool, work: _Work[P]
) -> Mapping[uuid.UUID, _Prepared]:
    """``work`` for each event from its NPC's state (without writing it): NPCs concurrently, one NPC's
    events in order, each from the state the one before left."""
    by_npc: dict[NpcKey, list[Envelope[P]]] = {}
    for event in events:
        if (key := _key(event)) is not None:
            by_npc.setdefault(key, []).append(event)
    gate = asyncio.Semaphore(deps.prepare_concurrency)
    out: dict[uuid.UUID, _Prepared] = {}

    async def one(key: NpcKey, observed: list[Envelope[P]]) -> None:
        async with gate:
            async with pool.connection() as conn:
                state = await deps.repository.peek(conn, key)
                people = await deps.repository.roster(conn, key.tenant_id, key.world_id)
            for event in observed:
                if state is None or not state.ready:
                    return
                with handling(event.event_id, event.correlation_id):
                    after, made = await work(event, deps, state, people)
                out[event.event_id] = _Prepared(state, people, after, made)
                state = after

    await asyncio.gather(*(one(key, observed) for key, observed in by_npc.items()))
    return out


async def on_conversation_ended(
    event: Envelope[ConversationEnded], uow: UnitOfWork, deps: PlanningDeps
) -> None:
    """What the NPC agreed to in the conversation goes into its plan at that time; the cooldown between
    two conversations holds for the pair, whoever started this one."""
    p = event.payload
    if (state := await _reacting(event, uow, deps)) is None:
        return
    for other in p.participants:
        if other != state.key.npc_id:
            state = talked(state, other, event.world_time)
    state, out = keep_promises(state, p.commitments, event.world_time, p.conversation_id)
    await _store(uow, deps, state, out)


async def _adopt(
    event: Envelope[InnerVoiceGiven], deps: PlanningDeps, state: PlannerState, people: list[tuple[str, str]]
) -> tuple[PlannerState, list[EventPayload]]:
    after, out = await adopt_directive(deps.llm, state, event.payload.directive, event.world_time)
    return after, list(out)


async def on_inner_voice_given(
    event: Envelope[InnerVoiceGiven], uow: UnitOfWork, deps: PlanningDeps, prepared: _Prepared | None
) -> None:
    """The directive becomes the NPC's own goal and the rest of its day is re-planned around it (the
    re-plan ``gather_directives`` worked out, when the NPC's state is still the one it started from)."""
    if (state := await _reacting(event, uow, deps)) is None:
        return
    if prepared is not None and prepared.before == state:
        state, out = prepared.after, prepared.out
    else:
        state, out = await _adopt(event, deps, state, [])
    await _store(uow, deps, state, out)


async def on_world_deleted(event: Envelope, uow: UnitOfWork, deps: PlanningDeps) -> None:
    """Forget the deleted world's NPCs."""
    await deps.repository.delete_world(uow.conn, event.tenant_id, event.world_id)


# Ticks and reactions are gathered together: a tick's next actions read no memories, so the order of the
# two gathers changes nothing.
ROUTES = Routes(
    on(NpcCreated, on_npc_created),
    on(NpcPersonaChanged, on_persona_changed),
    on(NpcRetired, on_npc_retired),
    on(PlacesDiscovered, on_places_discovered),
    on(WorldTicked, on_world_ticked, gather=gather_ticks),
    on(ObservationMade, on_observation_made, gather=gather_reactions),
    on(ConversationEnded, on_conversation_ended),
    on(InnerVoiceGiven, on_inner_voice_given, gather=gather_directives),
    on(WorldDeleted, on_world_deleted),
    # A fork's NPCs: who they are and the places they know. They plan afresh at the fork's next tick, from
    # their memories (planning's working state at the fork point is kept nowhere to be restored from).
    on(WorldForked, fork_intake({NpcCreated: on_npc_created, NpcPersonaChanged: on_persona_changed,
                                 NpcRetired: on_npc_retired, PlacesDiscovered: on_places_discovered})),
    gather_together=True,
)
