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
    WorldForked,
    WorldTicked,
)
from npcworld.eventstore import UnitOfWork
from npcworld.fork import world_stream
from npcworld.projection import Projection
from npcworld.templates import load_template
from services.world_state.deps import WorldStateDeps
from services.world_state.domain import WorldTree, action_started, apply_change, start_action
from services.world_state.domain.rules import judge, ruled
from services.world_state.repository import TABLES, WorldRepository
from services.world_state.validation import validated
from services.world_state.validator_store import ValidatorStore

__all__ = ["CONSUMER", "HANDLERS", "PROJECTION", "WorldStateDeps"]

CONSUMER = "world_state"


# A studio world's clock before its tree says otherwise: the tree's own default step length.
DEFAULT_STEP_SECONDS = float(WorldDefined.model_fields["step_seconds"].default)


async def apply_world_created(event: Envelope, conn: AsyncConnection[Any]) -> None:
    """A studio world (no template) has its paused clock at once, before it has any place; a template's
    world gets its clock with its tree (the template's step length)."""
    assert isinstance(event.payload, WorldCreated)
    repo = WorldRepository(conn)
    await repo.add_world(event, event.payload)
    if event.payload.template is None:
        await repo.add_clock(event.tenant_id, event.world_id, event.payload.start_time, DEFAULT_STEP_SECONDS)


async def apply_world_forked(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, WorldForked)
    await WorldRepository(conn).mark_forked(event.tenant_id, event.world_id, event.payload)


async def apply_world_deleted(event: Envelope, conn: AsyncConnection[Any]) -> None:
    await WorldRepository(conn).mark_deleted(event.tenant_id, event.world_id)


async def apply_world_defined(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, WorldDefined)
    repo = WorldRepository(conn)
    await repo.save_definition(
        event, event.payload, await repo.start_time(event.tenant_id, event.world_id) or event.world_time
    )


async def apply_npc_created(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, NpcCreated)
    repo = WorldRepository(conn)
    stored = await repo.definition(event.tenant_id, event.world_id)
    location = event.payload.location
    tile = None
    if stored is not None and location:
        tile = WorldTree.from_definition(event.world_id, stored[1]).target_tile(location)
    await repo.add_npc(event, event.payload, tile)


async def apply_persona_changed(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, NpcPersonaChanged)
    await WorldRepository(conn).change_persona(event.tenant_id, event.world_id, event.payload)


async def apply_npc_retired(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, NpcRetired)
    await WorldRepository(conn).retire_npc(event.tenant_id, event.world_id, event.payload.npc_id)


async def apply_npcs_moved(event: Envelope, conn: AsyncConnection[Any]) -> None:
    """Positions; a step world-state walked also takes the tile off the front of the NPC's route."""
    assert isinstance(event.payload, NpcsMoved)
    repo = WorldRepository(conn)
    walked = event.payload.source == "world_state"
    for move in event.payload.moves:
        await repo.apply_move(
            event.tenant_id, event.world_id, move.npc_id, move.path, move.tile, event.event_id, walked=walked
        )


async def apply_object_state_changed(event: Envelope, conn: AsyncConnection[Any]) -> None:
    """The object's state; an NPC's action taking hold of the object (or letting it go) is the NPC's too."""
    p = event.payload
    assert isinstance(p, ObjectStateChanged)
    repo = WorldRepository(conn)
    t, w = event.tenant_id, event.world_id
    await repo.set_object_state(t, w, p.object_path, p.state, p.source, event.event_id)
    if p.by_npc is not None and p.source == "action":
        await repo.hold_object(t, w, p.by_npc, p.object_path)
    elif p.by_npc is not None and p.source == "idle":
        await repo.release_object(t, w, p.by_npc, p.object_path)


async def apply_action_started(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, ActionStarted) and event.npc_id is not None
    await WorldRepository(conn).start_action(
        event.tenant_id, event.world_id, event.npc_id, event.payload, event.event_id
    )


async def apply_clock_changed(event: Envelope, conn: AsyncConnection[Any]) -> None:
    """Pause, resume or re-pace; the change's ``recorded_at`` counts as the last tick (a real-time clock's
    first step after a change waits a full interval), never moving it back."""
    assert isinstance(event.payload, ClockChanged)
    repo = WorldRepository(conn)
    clock = await repo.clock(event.tenant_id, event.world_id)
    if clock is not None:
        await repo.save_clock(apply_change(clock, event.payload, event.recorded_at.timestamp()))


async def apply_world_ticked(event: Envelope, conn: AsyncConnection[Any]) -> None:
    """The step and world time; the tick's ``recorded_at`` paces the next one (never moving it back)."""
    assert isinstance(event.payload, WorldTicked)
    await WorldRepository(conn).apply_tick(
        event.tenant_id, event.world_id, event.payload.step, event.world_time, event.recorded_at.timestamp()
    )


async def on_world_created(event: Envelope, uow: UnitOfWork, deps: WorldStateDeps) -> None:
    """A world created from a template gets the template's tree, tile map and NPCs."""
    assert isinstance(event.payload, WorldCreated)
    if not event.payload.template:
        return
    template = load_template(event.payload.template)
    defined = uow.new_event(template.definition(event.payload.template))
    npcs = [uow.new_event(npc, npc_id=npc.npc_id) for npc in template.personas(event.world_id)]
    await uow.append(world_stream(event.world_id), [defined, *npcs])


async def on_npc_created(event: Envelope, uow: UnitOfWork, deps: WorldStateDeps) -> None:
    """In a tiled world the NPC appears on a tile of its starting place; everyone else learns where."""
    assert isinstance(event.payload, NpcCreated)
    repo = WorldRepository(uow.conn)
    tree = await deps.trees.get(repo, event.tenant_id, event.world_id)
    states = await repo.npc_states(event.tenant_id, event.world_id)
    npc = next((n for n in states if n.npc_id == event.payload.npc_id), None)
    if tree is None or tree.grid is None or npc is None or npc.tile is None or npc.path is None:
        return
    placed = NpcMove(npc_id=npc.npc_id, path=tree.address(npc.tile) or npc.path, tile=npc.tile)
    moved = uow.new_event(NpcsMoved(moves=(placed,)), npc_id=npc.npc_id)
    await uow.append(f"positions-{event.world_id}", [moved])


async def on_action_decided(event: Envelope, uow: UnitOfWork, deps: WorldStateDeps) -> None:
    """The NPC takes up its action: a route to the action's place, its object state applied on arrival.

    The NPC rows stay locked until commit, so the route starts from the tile the ticker last wrote and this
    ActionStarted is stored after that step's NpcsMoved: store order is the order of the fold.
    """
    assert isinstance(event.payload, ActionDecided) and event.npc_id is not None
    repo = WorldRepository(uow.conn)
    tree = await deps.trees.get(repo, event.tenant_id, event.world_id)
    npcs = {n.npc_id: n for n in await repo.npc_states(event.tenant_id, event.world_id, lock=True)}
    npc = npcs.get(event.npc_id)
    if tree is None or npc is None:
        return
    decided = event.payload
    verdict = judge(await repo.rules(event.tenant_id, event.world_id), event.npc_id, decided)
    # A studio rule, else the world's validator (asked before this transaction): either may veto or replace.
    settled = ruled(verdict, decided) if verdict else await validated(event, uow.conn, deps, tree, decided)
    out = [uow.new_event(e) for e in settled.events]
    if settled.takes_effect is not None:
        out.append(uow.new_event(action_started(npc, start_action(tree, npc, settled.takes_effect))))
    await uow.append(f"actions-{event.world_id}", out)


async def apply_action_rules_set(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, ActionRulesSet)
    await WorldRepository(conn).save_rules(event.tenant_id, event.world_id, event.payload.rules)


async def apply_action_validator_set(event: Envelope, conn: AsyncConnection[Any]) -> None:
    assert isinstance(event.payload, ActionValidatorSet)
    await ValidatorStore(conn).save(event.tenant_id, event.world_id, event.payload.validator)


PROJECTION = Projection(
    CONSUMER,
    TABLES,
    {
        "WorldCreated": apply_world_created,
        "WorldForked": apply_world_forked,
        "WorldDeleted": apply_world_deleted,
        "WorldDefined": apply_world_defined,
        "NpcCreated": apply_npc_created,
        "NpcPersonaChanged": apply_persona_changed,
        "NpcRetired": apply_npc_retired,
        "NpcsMoved": apply_npcs_moved,
        "ObjectStateChanged": apply_object_state_changed,
        "ClockChanged": apply_clock_changed,
        "WorldTicked": apply_world_ticked,
        "ActionStarted": apply_action_started,
        "ActionRulesSet": apply_action_rules_set,
        "ActionValidatorSet": apply_action_validator_set,
    },
)
HANDLERS: dict[str, Any] = {
    "WorldCreated": on_world_created,
    "NpcCreated": on_npc_created,
    "ActionDecided": on_action_decided,
}
