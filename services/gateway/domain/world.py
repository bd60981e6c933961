"""The world aggregate: state folded from the world stream, and the decisions commands need."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from npcworld.contracts import (
    EventPayload,
    NpcCreated,
    NpcPersonaChanged,
    NpcRetired,
    WorldCreated,
    WorldDeleted,
    WorldForked,
)
from npcworld.errors import ConflictError, NotFoundError, ValidationError

__all__ = ["WorldState", "decide_add_npc", "decide_change_persona", "decide_delete", "decide_retire",
           "evolve", "fold", "require_active"]


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
    retired: frozenset[str] = frozenset()
    version: int = 0

    @property
    def active_npcs(self) -> int:
        return len(self.npcs) - len(self.retired)


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
        case NpcPersonaChanged() if event.npc_id in state.npcs:
            persona = event.model_dump(include={"name", "age", "traits", "occupation"})
            changed = state.npcs[event.npc_id].model_copy(update=persona)
            return replace(state, npcs={**state.npcs, event.npc_id: changed})
        case NpcRetired():
            return replace(state, retired=state.retired | {event.npc_id})
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


def require_active(state: WorldState, world_id: str, npc_id: str) -> None:
    """The NPC must exist (404) and not be retired (409: a retired NPC takes no perceptions or chats)."""
    _require_live(state, world_id)
    if npc_id not in state.npcs:
        raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
    if npc_id in state.retired:
        raise ConflictError(f"NPC {npc_id!r} is retired", field="npc_id")


def decide_change_persona(
    state: WorldState, world_id: str, npc_id: str, changes: dict[str, object]
) -> list[EventPayload]:
    """The persona after ``changes`` (fields already validated), unless nothing changes."""
    require_active(state, world_id, npc_id)
    current = state.npcs[npc_id].model_dump(include={"npc_id", "name", "age", "traits", "occupation"})
    after = NpcPersonaChanged.model_validate({**current, **changes})
    return [] if after == NpcPersonaChanged.model_validate(current) else [after]


def decide_retire(state: WorldState, world_id: str, npc_id: str, reason: str) -> list[EventPayload]:
    """Retiring is an event; the NPC's history stays. Retiring it again changes nothing."""
    _require_live(state, world_id)
    if npc_id not in state.npcs:
        raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")
    return [] if npc_id in state.retired else [NpcRetired(npc_id=npc_id, reason=reason)]
