"""The world aggregate: state folded from the world stream, and the decisions commands need."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from npcworld.contracts import EventPayload, NpcCreated, WorldCreated, WorldDeleted, WorldForked
from npcworld.errors import NotFoundError, ValidationError

__all__ = ["WorldState", "decide_add_npc", "decide_delete", "evolve", "fold"]


@dataclass(frozen=True)
class WorldState:
    """What the world stream says about a world."""

    exists: bool = False
    deleted: bool = False
    name: str = ""
    template: str | None = None
    start_time: datetime | None = None
    forked_from: str | None = None
    npcs: dict[str, NpcCreated] = field(default_factory=dict)
    version: int = 0


def evolve(state: WorldState, event: EventPayload) -> WorldState:
    """Apply one world event (pure)."""
    state = replace(state, version=state.version + 1)
    match event:
        case WorldCreated():
            return replace(
                state, exists=True, name=event.name, template=event.template, start_time=event.start_time
            )
        case WorldForked():
            return replace(state, forked_from=event.source_world_id)
        case WorldDeleted():
            return replace(state, deleted=True)
        case NpcCreated():
            return replace(state, npcs={**state.npcs, event.npc_id: event})
    return state


def fold(events: Iterable[EventPayload]) -> WorldState:
    """Replay a world stream into its state."""
    state = WorldState()
    for event in events:
        state = evolve(state, event)
    return state


def _require_live(state: WorldState, world_id: str) -> None:
    if not state.exists or state.deleted:
        raise NotFoundError(f"world {world_id!r} not found")


def decide_add_npc(state: WorldState, world_id: str, npc: NpcCreated) -> list[EventPayload]:
    """An NPC may join a live world once per id."""
    _require_live(state, world_id)
    if npc.npc_id in state.npcs:
        raise ValidationError(f"NPC {npc.npc_id!r} already exists in this world", field="npc_id")
    return [npc]


def decide_delete(state: WorldState, world_id: str) -> list[EventPayload]:
    """Deleting is recorded as an event; history stays for replay and audit."""
    _require_live(state, world_id)
    return [WorldDeleted()]
