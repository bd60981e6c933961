"""NPC movement: routes to an action's place along A* paths, one tile per clock step, and object states."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from npcworld.contracts import ActionDecided, ActionStarted, NpcMove, ObjectStateChange, ObjectStateChanged
from services.world_state.domain.tilemap import Tile, find_path
from services.world_state.domain.tree import WorldTree

__all__ = ["NpcState", "StepResult", "action_started", "start_action", "step_npcs"]


@dataclass(frozen=True)
class NpcState:
    """Where an NPC is, where it is heading and what it is doing."""

    npc_id: str
    path: str | None
    tile: Tile | None
    route: tuple[Tile, ...] = ()
    target: str | None = None
    action: str | None = None
    emoji: str = ""
    action_end: datetime | None = None
    pending_state: ObjectStateChange | None = None
    held_object: str | None = None


@dataclass(frozen=True)
class StepResult:
    """What one clock step did to the NPCs of a world."""

    npcs: list[NpcState]
    moves: list[NpcMove]
    object_changes: list[tuple[str, ObjectStateChanged]]


def start_action(tree: WorldTree, npc: NpcState, action: ActionDecided) -> NpcState:
    """Take up a decided action: plan the route to its place (tiled worlds) and remember its object state.

    In a world without a tile map the studio's engine moves the NPC; only the action is recorded. A place
    the tree does not know leaves the NPC where it is (planning only sends NPCs to places they know).
    """
    target = tree.resolve(action.location_path)
    end = action.start + timedelta(minutes=action.duration_minutes)
    base = replace(
        npc,
        action=action.description,
        emoji=action.emoji,
        action_end=end,
        pending_state=action.object_state,
        route=(),
        target=target,
    )
    goal = tree.target_tile(target) if target else None
    if tree.grid is None or goal is None or npc.tile is None:
        return base
    route = find_path(tree.grid, npc.tile, goal)
    if route == [npc.tile]:
        return replace(base, path=target)
    return replace(base, route=tuple(route[1:]))


def action_started(before: NpcState, after: NpcState) -> ActionStarted:
    """The event recording ``start_action``'s outcome (``after``, from ``before``) for the fold."""
    assert after.action is not None and after.action_end is not None
    return ActionStarted(
        description=after.action,
        emoji=after.emoji,
        ends_at=after.action_end,
        target=after.target,
        route=after.route,
        arrived_at=after.path if after.path != before.path else None,
        object_state=after.pending_state,
    )


def step_npcs(tree: WorldTree, npcs: list[NpcState], world_time: datetime) -> StepResult:
    """Advance every walking NPC one tile; arrivals apply their object state, ended actions free theirs."""
    moved: list[NpcState] = []
    moves: list[NpcMove] = []
    changes: list[tuple[str, ObjectStateChanged]] = []
    for npc in npcs:
        current = npc
        if current.held_object and current.action_end and world_time >= current.action_end:
            changes.append(
                (
                    current.npc_id,
                    ObjectStateChanged(
                        object_path=current.held_object, state="idle", source="idle", by_npc=current.npc_id
                    ),
                )
            )
            current = replace(current, held_object=None)
        if current.route:
            tile, rest = current.route[0], current.route[1:]
            arrived = not rest
            where = (current.target if arrived else tree.address(tile)) or current.path or tree.world_id
            current = replace(current, tile=tile, route=rest, path=where)
            moves.append(NpcMove(npc_id=current.npc_id, path=where, tile=tile, arrived=arrived))
        if (
            not current.route
            and current.pending_state is not None
            and (tree.grid is None or _at_target(current))
        ):
            change = current.pending_state
            changes.append(
                (
                    current.npc_id,
                    ObjectStateChanged(
                        object_path=change.object_path,
                        state=change.state,
                        source="action",
                        by_npc=current.npc_id,
                    ),
                )
            )
            current = replace(current, pending_state=None, held_object=change.object_path)
        moved.append(current)
    return StepResult(moved, moves, changes)


def _at_target(npc: NpcState) -> bool:
    return npc.target is None or npc.path == npc.target
