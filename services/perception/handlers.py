"""perception: projection appliers (layout, positions, activities, object states) and the per-step pass.

The reactions only append events; what an NPC has seen (``pc_seen``) and its spatial memory are folded from
its ObservationMade and PlacesDiscovered events by the appliers, in the reaction's transaction (the consumer
loop folds a reaction's own events, npcworld.projection), so a rebuild reproduces them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import (
    ActionStarted,
    Envelope,
    NpcCreated,
    NpcPersonaChanged,
    NpcRetired,
    NpcsMoved,
    ObjectStateChanged,
    ObservationMade,
    PlacesDiscovered,
    WorldDefined,
    WorldTicked,
)
from npcworld.eventstore import UnitOfWork
from npcworld.messaging import Routes, on
from npcworld.projection import Appliers, Projection, applier
from services.perception.domain import Percept, perceive_step, seen_entity
from services.perception.layouts import LayoutCache
from services.perception.repository import TABLES, PerceptionRepository

__all__ = ["CONSUMER", "PROJECTION", "ROUTES", "PerceptionDeps"]

CONSUMER = "perception"


@dataclass(frozen=True)
class PerceptionDeps:
    """Vision radius and attention bandwidth (DESIGN.md: 8 and 8), and the layout cache."""

    layouts: LayoutCache
    radius: int = 8
    bandwidth: int = 8


def perception_stream(world_id: str) -> str:
    return f"perceived-{world_id}"


async def apply_world_defined(event: Envelope[WorldDefined], conn: AsyncConnection[Any]) -> None:
    await PerceptionRepository(conn).save_world(event, event.payload)


async def apply_npc_created(event: Envelope[NpcCreated], conn: AsyncConnection[Any]) -> None:
    await PerceptionRepository(conn).add_npc(event, event.payload, None)


async def apply_persona_changed(event: Envelope[NpcPersonaChanged], conn: AsyncConnection[Any]) -> None:
    """Others see the NPC under its new name."""
    p = event.payload
    await PerceptionRepository(conn).rename(event.tenant_id, event.world_id, p.npc_id, p.name)


async def apply_npc_retired(event: Envelope[NpcRetired], conn: AsyncConnection[Any]) -> None:
    await PerceptionRepository(conn).remove_npc(event.tenant_id, event.world_id, event.payload.npc_id)


async def apply_npcs_moved(event: Envelope[NpcsMoved], conn: AsyncConnection[Any]) -> None:
    repo = PerceptionRepository(conn)
    for move in event.payload.moves:
        await repo.move(event.tenant_id, event.world_id, move.npc_id, move.path, move.tile, event.event_id)


async def apply_object_state_changed(event: Envelope[ObjectStateChanged], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    await PerceptionRepository(conn).set_object_state(
        event.tenant_id, event.world_id, p.object_path, p.state, event.event_id
    )


async def apply_action_started(event: Envelope[ActionStarted], conn: AsyncConnection[Any]) -> None:
    """What others see an NPC do is the action that took effect (a studio rule may veto or replace the
    decided one: ``ActionVetoed``)."""
    assert event.npc_id is not None
    await PerceptionRepository(conn).set_activity(
        event.tenant_id, event.world_id, event.npc_id, event.payload.description
    )


async def apply_observation_made(event: Envelope[ObservationMade], conn: AsyncConnection[Any]) -> None:
    """What the NPC last perceived of an entity (observations posted by studios are not perception's)."""
    p = event.payload
    if event.npc_id is None or p.source != "perception" or p.subject is None or p.location is None:
        return
    entity = seen_entity(p.subject, p.location)
    await PerceptionRepository(conn).remember_seen(
        event.tenant_id, event.world_id, [(event.npc_id, entity, p.description)]
    )


async def apply_places_discovered(event: Envelope[PlacesDiscovered], conn: AsyncConnection[Any]) -> None:
    assert event.npc_id is not None
    await PerceptionRepository(conn).add_known_places(
        event.tenant_id, event.world_id, event.npc_id, event.payload.paths
    )


async def on_npc_created(event: Envelope[NpcCreated], uow: UnitOfWork, deps: PerceptionDeps) -> None:
    """The persona's spatial memory starts with the places it already knows (its home, its work)."""
    paths = tuple(
        dict.fromkeys(
            [*([event.payload.location] if event.payload.location else []), *event.payload.known_places]
        )
    )
    layout = await deps.layouts.get(PerceptionRepository(uow.conn), event.tenant_id, event.world_id)
    if layout is not None:
        paths = tuple(p for p in paths if p in layout.arenas or p in layout.objects)
    if paths:
        found = uow.new_event(PlacesDiscovered(paths=paths), npc_id=event.payload.npc_id)
        await uow.append(perception_stream(event.world_id), [found])


async def on_world_ticked(event: Envelope[WorldTicked], uow: UnitOfWork, deps: PerceptionDeps) -> None:
    """Every NPC in full detail perceives its surroundings (all of them unless the clock has a focus):
    new observations and newly seen places become events."""
    ticked = event.payload
    if ticked.detail is not None and not ticked.detail:
        return  # level of detail: nobody is in a focus place this step
    repo = PerceptionRepository(uow.conn)
    t, w = event.tenant_id, event.world_id
    layout = await deps.layouts.get(repo, t, w)
    if layout is None:
        return
    bodies, objects = await repo.bodies(t, w), await repo.objects(t, w)
    seen, known = await repo.seen(t, w), await repo.known_places(t, w)
    viewers = None if ticked.detail is None else set(ticked.detail)
    taken_in = perceive_step(bodies, objects, layout, seen, known, deps.radius, deps.bandwidth, viewers)
    out: list[Envelope] = [uow.new_event(_observation(p), npc_id=s.npc_id)
                           for s in taken_in for p in s.percepts]
    out += [uow.new_event(PlacesDiscovered(paths=s.places), npc_id=s.npc_id) for s in taken_in if s.places]
    if out:
        await uow.append(perception_stream(event.world_id), out)


def _observation(p: Percept) -> ObservationMade:
    return ObservationMade(
        description=p.description,
        subject=p.subject,
        predicate=p.predicate,
        object=p.object,
        location=p.location,
    )


PROJECTION = Projection(
    CONSUMER,
    TABLES,
    Appliers(
        applier(WorldDefined, apply_world_defined),
        applier(NpcCreated, apply_npc_created),
        applier(NpcPersonaChanged, apply_persona_changed),
        applier(NpcRetired, apply_npc_retired),
        applier(NpcsMoved, apply_npcs_moved),
        applier(ObjectStateChanged, apply_object_state_changed),
        applier(ActionStarted, apply_action_started),
        applier(PlacesDiscovered, apply_places_discovered),
        applier(ObservationMade, apply_observation_made),
    ),
)
ROUTES = Routes(
    on(NpcCreated, on_npc_created),
    on(WorldTicked, on_world_ticked),
)
