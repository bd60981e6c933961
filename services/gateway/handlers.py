"""The gateway's projection: the read models its routes serve, folded from the events of every service.

The gateway reacts to nothing (``ROUTES`` is empty); its consumer (``services.gateway.consumer``) folds
world_state's, perception's, planning's and dialogue's events into ``gw_*`` tables, and the routes fold the
events they append themselves in the appending transaction (``PROJECTION.apply_appended``), so a studio reads
its own writes at once. Every column comes from event data, so ``npcworld replay --service gateway`` rebuilds
the live model row for row.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from psycopg import AsyncConnection

from npcworld.contracts import (
    ActionDecided,
    ActionStarted,
    ClockChanged,
    DayPlanned,
    Envelope,
    NpcCreated,
    NpcRetired,
    NpcsMoved,
    ObjectStateChanged,
    PlacesDiscovered,
    PlanRevised,
    RelationshipChanged,
    WorldCreated,
    WorldDefined,
    WorldDeleted,
    WorldTicked,
)
from npcworld.contracts.players import PlayerForgotten
from npcworld.messaging import Routes
from npcworld.projection import Appliers, Projection, applier
from npcworld.shredding import forgotten_among
from services.gateway.domain import plans
from services.gateway.repository import VIEW_TABLES, ViewRepository

__all__ = ["CONSUMER", "PROJECTION", "ROUTES"]

CONSUMER = "gateway"
# A studio world's clock before its tree says otherwise: the tree's own default step length (as world_state).
DEFAULT_STEP_SECONDS = float(WorldDefined.model_fields["step_seconds"].default)
PLAYER_PREFIX = "player:"


async def apply_world_created(event: Envelope[WorldCreated], conn: AsyncConnection[Any]) -> None:
    """A studio world has its paused clock at once; a template's world gets it with its tree."""
    p = event.payload
    views = ViewRepository(conn)
    await views.add_world(event.tenant_id, event.world_id, p.start_time)
    if p.template is None:
        await views.add_clock(event.tenant_id, event.world_id, p.start_time, DEFAULT_STEP_SECONDS)


async def apply_world_deleted(event: Envelope, conn: AsyncConnection[Any]) -> None:
    await ViewRepository(conn).delete_world(event.tenant_id, event.world_id)


async def apply_world_defined(event: Envelope[WorldDefined], conn: AsyncConnection[Any]) -> None:
    """The tree, its objects, and a paused clock at the world's start (unless it has one)."""
    p = event.payload
    views, t, w = ViewRepository(conn), event.tenant_id, event.world_id
    await views.save_tree(t, w, p)
    await views.add_clock(t, w, await views.start_time(t, w) or event.world_time, p.step_seconds)


async def apply_clock_changed(event: Envelope[ClockChanged], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    await ViewRepository(conn).change_clock(event.tenant_id, event.world_id, paused=p.paused, speed=p.speed,
                                            step_seconds=p.step_seconds, focus=p.focus)


async def apply_world_ticked(event: Envelope[WorldTicked], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    await ViewRepository(conn).tick(event.tenant_id, event.world_id, p.step, event.world_time)


async def apply_object_state_changed(event: Envelope[ObjectStateChanged], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    await ViewRepository(conn).set_object_state(event.tenant_id, event.world_id, p.object_path, p.state,
                                                event.event_id)


async def apply_npc_created(event: Envelope[NpcCreated], conn: AsyncConnection[Any]) -> None:
    """The NPC's position row (a tiled world places it on a tile with the NpcsMoved that follows) and its
    (empty) plan."""
    p = event.payload
    views = ViewRepository(conn)
    await views.add_npc(event.tenant_id, event.world_id, p.npc_id, p.location)
    await views.add_plan(event.tenant_id, event.world_id, p.npc_id)


async def apply_npc_retired(event: Envelope[NpcRetired], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    await ViewRepository(conn).retire_npc(event.tenant_id, event.world_id, p.npc_id)


async def apply_npcs_moved(event: Envelope[NpcsMoved], conn: AsyncConnection[Any]) -> None:
    """Positions; a step world_state walked also takes the tile off the front of the NPC's route."""
    p = event.payload
    views, walked = ViewRepository(conn), p.source == "world_state"
    for m in p.moves:
        await views.move(event.tenant_id, event.world_id, m.npc_id, m.path, m.tile, event.event_id,
                         walked=walked)


async def apply_action_started(event: Envelope[ActionStarted], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    assert event.npc_id is not None
    fields = {"action": p.description, "emoji": p.emoji, "end": p.ends_at, "target": p.target,
              "route": p.route, "arrived": p.arrived_at}
    await ViewRepository(conn).start_action(event.tenant_id, event.world_id, event.npc_id, fields,
                                            event.event_id)


async def apply_places_discovered(event: Envelope[PlacesDiscovered], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    assert event.npc_id is not None
    await ViewRepository(conn).add_known_places(event.tenant_id, event.world_id, event.npc_id, p.paths)


async def _plan(event: Envelope, conn: AsyncConnection[Any]) -> tuple[ViewRepository, dict[str, Any]]:
    assert event.npc_id is not None
    views = ViewRepository(conn)
    row = await views.plan(event.tenant_id, event.world_id, event.npc_id)
    return views, dict(row) if row else {"day": None, "wakes": None, "sleeps": None, "outline": [],
                                         "items": [], "fallbacks": [], "goals": [], "current": None,
                                         "plan_by": None, "current_by": None}


def _newer(event: Envelope, than: UUID | None) -> bool:
    """Is the event newer than the one that last changed a part of the plan view? A consumer takes an NPC's
    events lane by lane, so an older one may come after a newer (event ids are time-ordered)."""
    return than is None or event.event_id > than


def _current(event: Envelope, plan: dict[str, Any], action: dict[str, Any] | None) -> None:
    if _newer(event, plan["current_by"]):
        plan["current"], plan["current_by"] = action, event.event_id


async def apply_day_planned(event: Envelope[DayPlanned], conn: AsyncConnection[Any]) -> None:
    """A new day: its outline, hour chunks and fallbacks; no action decided in it yet."""
    p = event.payload
    views, plan = await _plan(event, conn)
    if not _newer(event, plan["plan_by"]):
        return
    outline = [plans.item(i) for i in p.outline]
    wakes, sleeps = plans.window(outline)
    plan.update(day=p.day, wakes=wakes, sleeps=sleeps, outline=outline,
                items=[plans.item(i) for i in p.items], fallbacks=list(p.fallbacks),
                goals=list(p.goals), plan_by=event.event_id)
    _current(event, plan, None)
    await views.save_plan(event.tenant_id, event.world_id, event.npc_id or "", plan)


async def apply_plan_revised(event: Envelope[PlanRevised], conn: AsyncConnection[Any]) -> None:
    """The plan from the revision's time on; an inner-voice revision's directive is a goal from now on."""
    p = event.payload
    views, plan = await _plan(event, conn)
    if not _newer(event, plan["plan_by"]):
        return
    plan["items"] = plans.replace_from(plan["items"], p.from_time, [plans.item(i) for i in p.items])
    plan["fallbacks"] = list(dict.fromkeys((*plan["fallbacks"], *p.fallbacks)))
    if p.reason.startswith(plans.INNER_VOICE):
        plan["goals"] = plans.with_goal(plan["goals"], p.reason.removeprefix(plans.INNER_VOICE))
    plan["plan_by"] = event.event_id
    _current(event, plan, None)
    await views.save_plan(event.tenant_id, event.world_id, event.npc_id or "", plan)


async def apply_action_decided(event: Envelope[ActionDecided], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    views, plan = await _plan(event, conn)
    _current(event, plan, plans.action(p))
    await views.save_plan(event.tenant_id, event.world_id, event.npc_id or "", plan)


async def apply_relationship_changed(
    event: Envelope[RelationshipChanged], conn: AsyncConnection[Any]
) -> None:
    """How the NPC now regards another; a player forgotten since is left out (as PlayerForgotten does), so a
    fold in any order ends the same."""
    p = event.payload
    assert event.npc_id is not None
    player = p.other_id.removeprefix(PLAYER_PREFIX) if p.other_id.startswith(PLAYER_PREFIX) else None
    if player is not None and await forgotten_among(conn, event.tenant_id, [player]):
        return
    await ViewRepository(conn).save_relationship(event.tenant_id, event.world_id, event.npc_id, p.other_id,
                                                 (p.familiarity, p.sentiment, p.summary), event.world_time)


async def apply_player_forgotten(event: Envelope[PlayerForgotten], conn: AsyncConnection[Any]) -> None:
    p = event.payload
    await ViewRepository(conn).forget_other(event.tenant_id, event.world_id, PLAYER_PREFIX + p.player_id)


PROJECTION = Projection(
    CONSUMER,
    VIEW_TABLES,
    Appliers(
        applier(WorldCreated, apply_world_created),
        applier(WorldDeleted, apply_world_deleted),
        applier(WorldDefined, apply_world_defined),
        applier(ClockChanged, apply_clock_changed),
        applier(WorldTicked, apply_world_ticked),
        applier(ObjectStateChanged, apply_object_state_changed),
        applier(NpcCreated, apply_npc_created),
        applier(NpcRetired, apply_npc_retired),
        applier(NpcsMoved, apply_npcs_moved),
        applier(ActionStarted, apply_action_started),
        applier(PlacesDiscovered, apply_places_discovered),
        applier(DayPlanned, apply_day_planned),
        applier(PlanRevised, apply_plan_revised),
        applier(ActionDecided, apply_action_decided),
        applier(RelationshipChanged, apply_relationship_changed),
        applier(PlayerForgotten, apply_player_forgotten),
    ),
)
# The gateway reacts to no event: its consumer only keeps the read models above.
ROUTES: Routes[None] = Routes()
