"""world_state projection appliers and reactions: templates become worlds, decided actions become routes.

Reactions never write the read model: they append events (``ActionStarted``, ``NpcsMoved``, ...) and the
consumer loop folds those through the appliers below in the same transaction (npcworld.projection), as the
ticker does for its own events. So ``npcworld replay --service world_state`` rebuilds every column.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import (
    ActionDecided,
    ActionRulesSet,
    ActionStarted,
    ActionValidatorSet,
    ClockChanged,
    Envelope,
    NpcCreated,
    NpcMove,
    NpcPersonaChanged,
    NpcRetired,
    NpcsMoved,
    ObjectStateChanged,
    WorldCreated,
    WorldDefined,
    WorldDeleted,
    WorldForked,
    WorldTicked,
)
from npcworld.eventstore import UnitOfWork
from npcworld.fork import world_stream
from npcworld.messaging import Routes, on
from npcworld.projection import Appliers, Projection, applier
from npcworld.templates import load_template
from services.world_state.deps import WorldStateDeps
from services.world_state.domain import WorldTree, action_started, apply_change, start_action
from services.world_state.domain.rules import judge, ruled
from services.world_state.repository import TABLES, WorldRepository
from services.world_state.validation import gather_validations, validated
from services.world_state.validator_client import Consulted
from services.world_state.validator_store import ValidatorStore

__all__ = ["CONSUMER", "PROJECTION", "ROUTES", "WorldStateDeps"]

CONSUMER = "world_state"


# A studio world's clock before its tree says otherwise: the tree's own default step length.
DEFAULT_STEP_SECONDS = float(WorldDefined.model_fields["step_seconds"].default)


async def apply_world_created(event: Envelope[WorldCreated], conn: AsyncConnection[Any]) -> None:
    """A studio world (no template) has its paused clock at once, before it has any place; a template's
    world gets its clock with its tree (the template's step length)."""
    repo = WorldRepository(conn)
    await repo.add_world(event, event.payload)
    if event.payload.template is None:
        await repo.add_clock(event.tenant_id, event.world_id, event.payload.start_time, DEFAULT_STEP_SECONDS)


async def apply_world_forked(event: Envelope[WorldForked], conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).mark_forked(event.tenant_id, event.world_id, event.payload)


async def apply_world_deleted(event: Envelope, conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).mark_deleted(event.tenant_id, event.world_id)


async def apply_world_defined(event: Envelope[WorldDefined], conn: AsyncConnection[Any]) -> None:
    repo = WorldRepository(conn)
    await repo.save_definition(
        event, event.payload, await repo.start_time(event.tenant_id, event.world_id) or event.world_time
    )


async def apply_npc_created(event: Envelope[NpcCreated], conn: AsyncConnection[Any]) -> None:
    repo = WorldRepository(conn)
    stored = await repo.definition(event.tenant_id, event.world_id)
    location = event.payload.location
    tile = None
    if stored is not None and location:
        tile = WorldTree.from_definition(event.world_id, stored[1]).target_tile(location)
    await repo.add_npc(event, event.payload, tile)


async def apply_persona_changed(event: Envelope[NpcPersonaChanged], conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).change_persona(event.tenant_id, event.world_id, event.payload)


async def apply_npc_retired(event: Envelope[NpcRetired], conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).retire_npc(event.tenant_id, event.world_id, event.payload.npc_id)


async def apply_npcs_moved(event: Envelope[NpcsMoved], conn: AsyncConnection[Any]) -> None:
    """Positions; a step world-state walked also takes the tile off the front of the NPC's route."""
    repo = WorldRepository(conn)
    walked = event.payload.source == "world_state"
    for move in event.payload.moves:
        await repo.apply_move(
            event.tenant_id, event.world_id, move.npc_id, move.path, move.tile, event.event_id, walked=walked
        )


async def apply_object_state_changed(event: Envelope[ObjectStateChanged], conn: AsyncConnection[Any]) -> None:
    """The object's state; an NPC's action taking hold of the object (or letting it go) is the NPC's too."""
    p = event.payload
    repo = WorldRepository(conn)
    t, w = event.tenant_id, event.world_id
    await repo.set_object_state(t, w, p.object_path, p.state, p.source, event.event_id)
    if p.by_npc is not None and p.source == "action":
        await repo.hold_object(t, w, p.by_npc, p.object_path)
    elif p.by_npc is not None and p.source == "idle":
        await repo.release_object(t, w, p.by_npc, p.object_path)


async def apply_action_started(event: Envelope[ActionStarted], conn: AsyncConnection[Any]) -> None:
    assert event.npc_id is not None
    await WorldRepository(conn).start_action(
        event.tenant_id, event.world_id, event.npc_id, event.payload, event.event_id
    )


async def apply_clock_changed(event: Envelope[ClockChanged], conn: AsyncConnection[Any]) -> None:
    """Pause, resume or re-pace; the change's ``recorded_at`` counts as the last tick (a real-time clock's
    first step after a change waits a full interval), never moving it back."""
    repo = WorldRepository(conn)
    clock = await repo.clock(event.tenant_id, event.world_id)
    if clock is not None:
        await repo.save_clock(apply_change(clock, event.payload, event.recorded_at.timestamp()))


async def apply_world_ticked(event: Envelope[WorldTicked], conn: AsyncConnection[Any]) -> None:
    """The step and world time; the step's due time (a stepped clock's: its ``recorded_at``) paces the next
    one (never moving it back)."""
    due = event.payload.due_at
    await WorldRepository(conn).apply_tick(
        event.tenant_id, event.world_id, event.payload.step, event.world_time,
        event.recorded_at.timestamp() if due is None else due,
    )


async def on_world_created(event: Envelope[WorldCreated], uow: UnitOfWork, deps: WorldStateDeps) -> None:
    """A world created from a template gets the template's tree, tile map and NPCs."""
    if not event.payload.template:
        return
    template = load_template(event.payload.template)
    defined = uow.new_event(template.definition(event.payload.template))
    npcs = [uow.new_event(npc, npc_id=npc.npc_id) for npc in template.personas(event.world_id)]
    await uow.append(world_stream(event.world_id), [defined, *npcs])


async def on_npc_created(event: Envelope[NpcCreated], uow: UnitOfWork, deps: WorldStateDeps) -> None:
    """In a tiled world the NPC appears on a tile of its starting place; everyone else learns where."""
    repo = WorldRepository(uow.conn)
    tree = await deps.trees.get(repo, event.tenant_id, event.world_id)
    states = await repo.npc_states(event.tenant_id, event.world_id)
    npc = next((n for n in states if n.npc_id == event.payload.npc_id), None)
    if tree is None or tree.grid is None or npc is None or npc.tile is None or npc.path is None:
        return
    placed = NpcMove(npc_id=npc.npc_id, path=tree.address(npc.tile) or npc.path, tile=npc.tile)
    moved = uow.new_event(NpcsMoved(moves=(placed,)), npc_id=npc.npc_id)
    await uow.append(f"positions-{event.world_id}", [moved])


async def on_action_decided(
    event: Envelope[ActionDecided], uow: UnitOfWork, deps: WorldStateDeps, consulted: Consulted | None
) -> None:
    """The NPC takes up its action: a route to the action's place, its object state applied on arrival.
    ``consulted``: the world validator's answer, got before the transaction (``gather_validations``).

    The NPC rows stay locked until commit, so the route starts from the tile the ticker last wrote and this
    ActionStarted is stored after that step's NpcsMoved: store order is the order of the fold.
    """
    assert event.npc_id is not None
    repo = WorldRepository(uow.conn)
    tree = await deps.trees.get(repo, event.tenant_id, event.world_id)
    npcs = {n.npc_id: n for n in await repo.npc_states(event.tenant_id, event.world_id, lock=True)}
    npc = npcs.get(event.npc_id)
    if tree is None or npc is None:
        return
    decided = event.payload
    verdict = judge(await repo.rules(event.tenant_id, event.world_id), event.npc_id, decided)
    # A studio rule, else the world's validator (asked before this transaction): either may veto or replace.
    settled = (ruled(verdict, decided) if verdict
               else await validated(event, uow.conn, tree, decided, consulted))
    out: list[Envelope] = [uow.new_event(e) for e in settled.events]
    if settled.takes_effect is not None:
        out.append(uow.new_event(action_started(npc, start_action(tree, npc, settled.takes_effect))))
    await uow.append(f"actions-{event.world_id}", out)


async def apply_action_rules_set(event: Envelope[ActionRulesSet], conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).save_rules(event.tenant_id, event.world_id, event.payload.rules)


async def apply_action_validator_set(event: Envelope[ActionValidatorSet], conn: AsyncConnection[Any]) -> None:
    await ValidatorStore(conn).save(event.tenant_id, event.world_id, event.payload.validator)


PROJECTION = Projection(
    CONSUMER,
    TABLES,
    Appliers(
        applier(WorldCreated, apply_world_created),
        applier(WorldForked, apply_world_forked),
        applier(WorldDeleted, apply_world_deleted),
        applier(WorldDefined, apply_world_defined),
        applier(NpcCreated, apply_npc_created),
        applier(NpcPersonaChanged, apply_persona_changed),
        applier(NpcRetired, apply_npc_retired),
        applier(NpcsMoved, apply_npcs_moved),
        applier(ObjectStateChanged, apply_object_state_changed),
        applier(ClockChanged, apply_clock_changed),
        applier(WorldTicked, apply_world_ticked),
        applier(ActionStarted, apply_action_started),
        applier(ActionRulesSet, apply_action_rules_set),
        applier(ActionValidatorSet, apply_action_validator_set),
    ),
)
ROUTES = Routes(
    on(WorldCreated, on_world_created),
    on(NpcCreated, on_npc_created),
    on(ActionDecided, on_action_decided, gather=gather_validations),
)
